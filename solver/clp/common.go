package clp

import (
	"errors"
	"fmt"

	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/solver"
)

// ErrUnavailable is returned by every entry point of a binary built
// without cgo.
var ErrUnavailable = errors.New("clp: this optsched was built without cgo; CLP is unavailable")

// BoundStatus is the outcome of an LP solve.
type BoundStatus int

const (
	// Stopped: the solve ended before optimality (deadline, time limit,
	// cancellation or a CLP failure). The bound, when not NaN, is still a
	// valid lower bound, usually weaker than the LP optimum.
	Stopped BoundStatus = iota
	// Optimal: the LP was solved to optimality; the bound is the LP
	// optimum less a tolerance.
	Optimal
	// Infeasible: CLP proved the LP, and so the 0-1 program, infeasible.
	Infeasible
)

var boundStatusNames = [...]string{"stopped", "optimal", "infeasible"}

// String returns "stopped", "optimal" or "infeasible".
func (s BoundStatus) String() string {
	if s >= 0 && int(s) < len(boundStatusNames) {
		return boundStatusNames[s]
	}
	return fmt.Sprintf("BoundStatus(%d)", int(s))
}

// Solver answers window problems with the LP bound of the M_SCAS program
// in the given formulation (scas.Strong, the zero value, is the tighter)
// and an allocation rounded from the LP solution.
type Solver struct {
	Formulation scas.Formulation
}

var _ solver.Solver = Solver{}

// Name returns "clp".
func (Solver) Name() string { return "clp" }
