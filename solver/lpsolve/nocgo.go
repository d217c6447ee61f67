//go:build !cgo

package lpsolve

import (
	"context"
	"errors"
	"io"

	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/solver"
)

// Available reports whether lp_solve is linked in: false, as this build
// has no cgo.
const Available = false

// ErrUnavailable is returned by Solve in builds without cgo.
var ErrUnavailable = errors.New("lpsolve: this optsched was built without cgo; lp_solve is unavailable")

// Solver stands in for the lp_solve backend in builds without cgo; its
// Solve always fails with ErrUnavailable.
type Solver struct {
	// Formulation selects the program (scas.Strong by default).
	Formulation scas.Formulation
	// Verbose, when set, receives lp_solve's log after each solve.
	Verbose io.Writer
}

var _ solver.Solver = Solver{}

// Name returns "lpsolve".
func (Solver) Name() string { return "lpsolve" }

// Solve returns ErrUnavailable.
func (Solver) Solve(context.Context, *solver.Problem) (*solver.Result, error) {
	return nil, ErrUnavailable
}
