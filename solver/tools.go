//go:build tools

// This file pins the solver back ends that the coming exact solvers use
// (lp_solve through golp, COIN-OR CLP through lanl/clp, the SAT solver
// gini), so that go.mod records their exact versions and `make deps`
// downloads them. It is never compiled: the tools build tag is never set.
package solver

import (
	_ "github.com/draffensperger/golp"
	_ "github.com/go-air/gini"
	_ "github.com/lanl/clp"
)
