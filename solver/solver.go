package solver

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/optsched/optsched/model"
)

// Status is the outcome of a solve.
type Status int

const (
	// Unknown: the solver stopped without an allocation or a proof.
	Unknown Status = iota
	// Optimal: the allocation is proven optimal.
	Optimal
	// Feasible: a valid allocation without a proof of optimality.
	Feasible
	// Fallback: the exact solver ran out of time and a heuristic supplied
	// (or improved) the allocation.
	Fallback
	// Infeasible: proven that no allocation of the selected jobs exists.
	Infeasible
)

var statusNames = [...]string{"unknown", "optimal", "feasible", "fallback", "infeasible"}

// String returns the status name used in result documents.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// ErrTooLarge is wrapped by the error of a solver that refuses a problem
// beyond what it can handle at all (brute force past its enumeration
// limit). A Portfolio with a fallback answers with the fallback instead
// and marks the result's Stats with exact_too_large.
var ErrTooLarge = errors.New("too large for this solver")

// A Problem is what a window solver is asked: place every job in Jobs on
// the window's idle nodes, minimising the total CH cost ([Lan23] §III).
type Problem struct {
	Window *model.Window
	// Jobs are indices into Window.Jobs, in selection order. All must be
	// placed; their node counts sum to at most len(Window.Idle).
	Jobs []int
}

// NewProblem returns the problem of placing the given jobs of w.
func NewProblem(w *model.Window, jobs []int) *Problem {
	return &Problem{Window: w, Jobs: jobs}
}

// A Result is a solver's answer to a Problem.
type Result struct {
	Status Status
	// Allocations place the problem's jobs (all of them, unless Status is
	// Unknown or Infeasible).
	Allocations []model.Allocation
	// Objective is the total CH cost of Allocations.
	Objective int64
	// Bound is a proven lower bound on the optimum; NaN when unknown.
	Bound float64
	// Encoding names the formulation (scas, csp, dcas, cp).
	Encoding string
	// Solver names the solver.
	Solver string
	// Stats holds solver-specific counters (iterations, nodes, ...).
	Stats map[string]float64
}

// NoBound is the Bound of a result without a known lower bound.
var NoBound = math.NaN()

// HasBound reports whether the result carries a lower bound.
func (r *Result) HasBound() bool { return !math.IsNaN(r.Bound) }

// Gap returns (objective − bound) / objective, 0 when both are 0; ok is
// false when there is no bound or no allocation.
func (r *Result) Gap() (gap float64, ok bool) {
	if !r.HasBound() || r.Status == Unknown || r.Status == Infeasible {
		return 0, false
	}
	if r.Objective <= 0 {
		return 0, true
	}
	return max(0, (float64(r.Objective)-r.Bound)/float64(r.Objective)), true
}

// A Solver solves window problems. Solve must honour ctx's deadline: when
// it comes, return the best allocation found so far (Status Feasible) or
// Status Unknown — never block past it. Errors are for broken input or
// broken solvers, not for running out of time.
type Solver interface {
	// Name returns the name used on the command line and in results.
	Name() string
	// Solve places the problem's jobs.
	Solve(ctx context.Context, p *Problem) (*Result, error)
}

// Objective returns the total CH cost of allocs under w's cost model.
func Objective(w *model.Window, allocs []model.Allocation) int64 {
	return w.Cost.TotalCost(w.Topology, allocs)
}

// A WarmStarter is a solver that can start from a given allocation, such
// as another solver's incumbent (the portfolio's fallback does).
type WarmStarter interface {
	Solver
	// WithInitial returns a solver that starts from allocs, which place
	// the problem's jobs feasibly.
	WithInitial(allocs []model.Allocation) Solver
}
