package solver

import (
	"context"
	"errors"
	"fmt"

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
// and marks the result's Stats.Portfolio with ExactTooLarge.
var ErrTooLarge = errors.New("too large for this solver")

// A Problem is what a window solver is asked: place every job in Jobs on
// the window's idle nodes, minimising the total CH cost ([Lan23] §III).
type Problem struct {
	Window *model.Window
	// Jobs are indices into Window.Jobs, in selection order. All must be
	// placed; their node counts sum to at most len(Window.Idle).
	Jobs []int
	// Publisher, when set, receives an exact solver's incumbents and
	// bounds as they improve (a Portfolio sets a Board); nil for none.
	// Solvers publish through Publish.
	Publisher Publisher
}

// Publish returns where a solver of p publishes its incumbents and
// bounds: p.Publisher, or a publisher that discards them.
func (p *Problem) Publish() Publisher {
	if p.Publisher == nil {
		return discard[int64]{}
	}
	return p.Publisher
}

// WithPublisher returns a copy of p whose solver publishes to pub as
// well as to p's publisher (nil pub: to none, p's hidden).
func (p *Problem) WithPublisher(pub Publisher) *Problem {
	q := *p
	switch {
	case pub == nil || p.Publisher == nil:
		q.Publisher = pub
	default:
		q.Publisher = tee[int64]{pub, p.Publisher}
	}
	return &q
}

// NewProblem returns the problem of placing the given jobs of w.
func NewProblem(w *model.Window, jobs []int) *Problem {
	return &Problem{Window: w, Jobs: jobs}
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
