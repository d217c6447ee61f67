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

// A ProblemOf is what a solver of either model is asked (O is the
// model's objective type, as in Answer): Problem in the whole-node model,
// ScheduleProblem in the time-and-resource model.
type ProblemOf[O ObjectiveValue] struct {
	Window *model.Window
	// Jobs, whole-node model, are the jobs to place: indices into
	// Window.Jobs, in selection order. All must be placed; their node
	// counts sum to at most len(Window.Idle) ([Lan23] §III: on the
	// window's idle nodes, minimising the total CH cost). Nil in the
	// time-and-resource model, which schedules every waiting job.
	Jobs []int
	// Granularity, time-and-resource model, is the time grid of the
	// starts in seconds: every job starts at the window time plus a
	// multiple of it. 0 means DefaultGranularity (see Grid).
	Granularity int64
	// Publisher, when set, receives an exact solver's incumbents and
	// bounds as they improve (a Portfolio sets a Board, SolveWindow a
	// ScheduleBoard for a scheduler); nil for none. Solvers publish
	// through Publish.
	Publisher PublisherOf[O]
}

// A Problem is what a whole-node solver is asked: place every job in
// Jobs on the window's idle nodes, minimising the total CH cost.
type Problem = ProblemOf[int64]

// A ScheduleProblem is what a scheduler is asked: when and where every
// waiting job of the window starts, on the Granularity grid.
type ScheduleProblem = ProblemOf[float64]

// Publish returns where a solver of p publishes its incumbents and
// bounds: p.Publisher, or a publisher that discards them.
func (p *ProblemOf[O]) Publish() PublisherOf[O] {
	if p.Publisher == nil {
		return discard[O]{}
	}
	return p.Publisher
}

// WithPublisher returns a copy of p whose solver publishes to pub as
// well as to p's publisher (nil pub: to none, p's hidden).
func (p *ProblemOf[O]) WithPublisher(pub PublisherOf[O]) *ProblemOf[O] {
	q := *p
	switch {
	case pub == nil || p.Publisher == nil:
		q.Publisher = pub
	default:
		q.Publisher = tee[O]{pub, p.Publisher}
	}
	return &q
}

// DefaultGranularity is the default time grid of schedules, in seconds.
const DefaultGranularity = 60

// Grid returns the granularity, DefaultGranularity for 0.
func (p *ProblemOf[O]) Grid() int64 {
	if p.Granularity <= 0 {
		return DefaultGranularity
	}
	return p.Granularity
}

// NewProblem returns the problem of placing the given jobs of w.
func NewProblem(w *model.Window, jobs []int) *Problem {
	return &Problem{Window: w, Jobs: jobs}
}

// A SolverOf solves the problems of one model: a Solver those of the
// whole-node model, a Scheduler those of the time-and-resource model.
// Solve must honour ctx's deadline: when it comes, return the best answer
// found so far (Status Feasible) or Status Unknown — never block past it.
// Errors are for broken input or broken solvers, not for running out of
// time. SolveWindow runs either on a window and checks its answer.
type SolverOf[O ObjectiveValue] interface {
	// Name returns the name used on the command line and in results.
	Name() string
	// Solve answers p.
	Solve(ctx context.Context, p *ProblemOf[O]) (*Answer[O], error)
}

// A Solver places the multi-node jobs of a window on its idle nodes (the
// whole-node model).
type Solver = SolverOf[int64]

// A Scheduler decides when and where every waiting job of a window
// starts (the time-and-resource model; see schedule.go).
type Scheduler = SolverOf[float64]

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
