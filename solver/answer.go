package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/optsched/optsched/model"
)

// This file is the answer core both models share: what a solver of the
// whole-node model (Solver, its objective an int64 CH cost) and a
// scheduler of the time-and-resource model (Scheduler, its objective a
// float64 weighted queue time) return, the checked answer for a whole
// window, and the pipeline that owns the deadline, the reserve for the
// checks and the wrapping of a solver's bugs.

// An ObjectiveValue is the type of a model's objective: int64 for the CH cost
// of the whole-node model, float64 for the weighted queue time of the
// time-and-resource model.
type ObjectiveValue interface{ int64 | float64 }

// An Answer is a solver's answer in either model: a status, the
// allocations, their objective, a bound, and who found them how.
type Answer[O ObjectiveValue] struct {
	Status Status
	// Allocations place the jobs the solver was asked to (all of them,
	// unless Status is Unknown or Infeasible, when there are none).
	Allocations []model.Allocation
	// Objective is the objective of Allocations (Result: their total CH
	// cost; Schedule: see there).
	Objective O
	// Bound is a proven lower bound on the optimum; NaN (NoBound) when
	// unknown.
	Bound float64
	// Encoding names the formulation (scas, csp, dcas, tree, cp).
	Encoding string
	// Solver names the solver.
	Solver string
	// Stats are the solver's counters, typed by solver family.
	Stats Stats

	// Deferred, time-and-resource model, are the jobs without a start:
	// a scheduler's, those that can never start (their units fit on no
	// set of usable nodes), with the reason; in a WindowAnswer, every job
	// that waits. A whole-node solver defers none (the selection does).
	Deferred []model.Deferral
	// CHWeight, time-and-resource model, is the weight of the CH term
	// that Objective and Bound include; 0 for the weighted queue time
	// alone (and in the whole-node model).
	CHWeight float64
	// Why, with Status Unknown, says why there is no answer when it is
	// not simply the time limit (SolveWindow defers the jobs with it).
	Why string
}

// A Result is a whole-node solver's answer to a Problem; its Objective is
// the total CH cost of its allocations.
type Result = Answer[int64]

// A Schedule is a Scheduler's answer: its Allocations are units
// allocations (model.Allocation.Units set), one per scheduled job, and
// its Objective is the weighted queue time of Allocations
// (model.WeightedQueueTime), plus CHWeight times the CH cost of their
// node sets (model.CostModel.Cost of the window's cost model, summed over
// the allocations) when CHWeight is positive; its Bound is a proven lower
// bound on the objective over the schedules of the same jobs on the same
// grid; its Encoding is "cp". Every waiting job is scheduled or deferred.
type Schedule = Answer[float64]

// NoBound is the Bound of an answer without a known lower bound.
var NoBound = math.NaN()

// HasBound reports whether the answer carries a lower bound.
func (a *Answer[O]) HasBound() bool { return !math.IsNaN(a.Bound) }

// Gap returns (objective − bound) / objective, 0 when both are 0; ok is
// false when there is no bound or no allocation.
func (a *Answer[O]) Gap() (gap float64, ok bool) {
	if !a.HasBound() || a.Status == Unknown || a.Status == Infeasible {
		return 0, false
	}
	if a.Objective <= 0 {
		return 0, true
	}
	obj := float64(a.Objective)
	return max(0, (obj-a.Bound)/obj), true
}

// A WindowAnswer is the checked answer for a whole window in either
// model: the solver's answer, with every job that starts, the jobs
// deferred to a later window and the wall time of the call.
type WindowAnswer[O ObjectiveValue] struct {
	// Answer is the solver's. Its Allocations are all jobs that start
	// (whole-node: the solver's multi-node allocations followed by the
	// one-node jobs); its Objective and Bound cover the jobs the solver
	// was asked to place (whole-node: the multi-node jobs only); its
	// Deferred are all jobs that wait, with reasons.
	Answer[O]
	// Elapsed is the wall time of the whole call.
	Elapsed time.Duration

	// MaxJobs, whole-node model, is the cap on the multi-node jobs the
	// selection applied (Options.MaxJobs; 0: none).
	MaxJobs int
	// Granularity, time-and-resource model, is the grid the schedule was
	// asked for, in seconds.
	Granularity int64
}

// A WindowResult is the answer of SolveWindow, the whole-node model.
type WindowResult = WindowAnswer[int64]

// A ScheduleResult is the answer of SolveWindow, the
// time-and-resource model.
type ScheduleResult = WindowAnswer[float64]

// Options adjust SolveWindow.
type Options struct {
	// TimeLimit bounds the solve when positive, on top of ctx's deadline.
	TimeLimit time.Duration
	// MaxJobs, whole-node model, caps the multi-node jobs of the window
	// (the published code of [Lan23] uses 5); 0 means no cap.
	MaxJobs int
	// Granularity, time-and-resource model, is the time grid of the
	// starts in seconds (ScheduleProblem.Granularity; 0:
	// DefaultGranularity).
	Granularity int64
	// CallerChecks, whole-node model, makes SolveWindow leave out its
	// model.Check of the answer's allocations against the window (which
	// reads every idle and every running node of w: O(cluster size)),
	// when the caller takes that check on itself before it uses or prints
	// anything of the answer — bench/sim's simulator checks each window's
	// allocations against the window restricted to their nodes, beside
	// the simulation. Everything else is still checked: verify (every
	// job asked placed or deferred once, the objective as recomputed, the
	// bound) and model.CheckAccounted; and when one of those fails,
	// SolveWindow runs model.Check after all and returns its error first,
	// as without CallerChecks. The default (false) checks every answer;
	// a time-and-resource schedule is always checked (in verify).
	CallerChecks bool
}

// ErrSolverBug is wrapped by the errors SolveWindow returns when a solver
// answers something it must not: an allocation that fails model.Check, a
// job it was not asked to place, or a misreported objective.
var ErrSolverBug = errors.New("solver: invalid answer")

// SolveWindow runs s on window w and checks its answer before returning
// it, in either model: the one pipeline of both. It owns the time limit
// (opt.TimeLimit, on top of ctx's deadline), keeps a reserve of the
// deadline for its checks (postReserve), asks s the model's problem,
// checks the answer (verify, and model.Check unless opt.CallerChecks)
// and completes it into the window's answer; an error of s is returned
// naming it, an answer that fails the checks is an ErrSolverBug error,
// never a result.
//
// What differs between the models is the model's (windowModel):
//   - whole-node (a Solver): the jobs are selected (model.SelectJobs,
//     opt.MaxJobs), s places the multi-node ones, the one-node jobs are
//     placed first-fit on the lowest idle node ids left, and the whole
//     allocation passes model.Check and model.CheckAccounted; when s
//     stops without an allocation the multi-node jobs are deferred with
//     the reason (SolveWindow never drops a job for lack of time);
//   - time-and-resource (a Scheduler): s schedules every waiting job on
//     the opt.Granularity grid, publishing to a ScheduleBoard whose
//     incumbent and bound the answer carries; every job is scheduled or
//     deferred once, the schedule passes model.Check, the starts lie on
//     the grid; without a schedule every job is deferred with the reason.
func SolveWindow[O ObjectiveValue](ctx context.Context, w *model.Window, s SolverOf[O], opt Options) (*WindowAnswer[O], error) {
	start := time.Now()
	m := modelOf[O]()
	if opt.TimeLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.TimeLimit)
		defer cancel()
	}
	solveCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		solveCtx, cancel = context.WithDeadline(ctx, dl.Add(-postReserve(w)))
		defer cancel()
	}
	who := m.noun() + " " + s.Name()
	p := m.problem(w, opt)
	var a *Answer[O]
	if p != nil {
		var err error
		if a, err = s.Solve(solveCtx, p); err != nil {
			return nil, fmt.Errorf("%s: %w", who, err)
		}
	}
	out, err := m.finish(w, p, a, s.Name())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSolverBug, who, err)
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// A windowModel is what SolveWindow does differently in one model: the
// whole-node model (wholeNode) or the time-and-resource model
// (timeResource). A value serves one call.
type windowModel[O ObjectiveValue] interface {
	// noun names the model's solvers in errors (solver, scheduler).
	noun() string
	// problem returns the problem the solver is asked on w, nil when
	// there is none to ask (the answer is then the model's own).
	problem(w *model.Window, opt Options) *ProblemOf[O]
	// check makes the model's own checks of a (verify makes the common
	// ones) when it has allocations.
	check(w *model.Window, p *ProblemOf[O], a *Answer[O]) error
	// price recomputes the objective of a's allocations.
	price(w *model.Window, a *Answer[O]) O
	// finish checks the answer a of the solver named name to p (nil
	// with p) and completes the window's answer.
	finish(w *model.Window, p *ProblemOf[O], a *Answer[O], name string) (*WindowAnswer[O], error)
}

// modelOf returns the model of objective type O: an int64 objective is
// the whole-node model's CH cost, a float64 one the time-and-resource
// model's weighted queue time.
func modelOf[O ObjectiveValue]() windowModel[O] {
	var m any
	switch any(*new(O)).(type) {
	case int64:
		m = &wholeNode{}
	case float64:
		m = &timeResource{}
	}
	return m.(windowModel[O])
}

// Verify checks a solver's answer a to p in either model, as SolveWindow
// does before it completes the window's answer (verify, and in the
// time-and-resource model model.Check).
func Verify[O ObjectiveValue](w *model.Window, p *ProblemOf[O], a *Answer[O]) error {
	return verify(w, modelOf[O](), p, a, false)
}

// verify checks a solver's answer a to p, in either model: an answer
// without allocations unless it has a status with them, every job asked
// (p.Jobs; every waiting job when nil) allocated or deferred exactly once
// and no other, the model's own checks, the objective as recomputed
// (unless pricedAside: the caller compares it) and a bound at most the
// objective.
func verify[O ObjectiveValue](w *model.Window, m windowModel[O], p *ProblemOf[O], a *Answer[O], pricedAside bool) error {
	if a == nil {
		return errors.New("nil answer")
	}
	seen := make([]int32, len(w.Jobs)) // a count a job, −1 not asked: no map on 10⁵ jobs
	if p.Jobs != nil {
		for j := range seen {
			seen[j] = -1
		}
		for _, j := range p.Jobs {
			seen[j] = 0
		}
	}
	for _, d := range a.Deferred {
		if d.Job < 0 || d.Job >= len(seen) || seen[d.Job] < 0 {
			return fmt.Errorf("deferral of job index %d, which was not asked for", d.Job)
		}
		seen[d.Job]++
	}
	if a.Status == Unknown || a.Status == Infeasible {
		if len(a.Allocations) > 0 {
			return fmt.Errorf("status %s with an allocation", a.Status)
		}
		return nil
	}
	for _, al := range a.Allocations {
		if al.Job < 0 || al.Job >= len(seen) || seen[al.Job] != 0 {
			return fmt.Errorf("allocation for job index %d, which was not asked for or is allocated or deferred twice", al.Job)
		}
		seen[al.Job]++
	}
	left, first := 0, -1
	for j, n := range seen {
		switch {
		case n == 0:
			if left++; first < 0 {
				first = j
			}
		case n > 1: // deferred twice (an allocation after a deferral fails above)
			return fmt.Errorf("job %s: deferred %d times, want once", w.Jobs[j].ID, n)
		}
	}
	if left > 0 {
		return fmt.Errorf("status %s but %d jobs left unallocated and not deferred (job %s first)", a.Status, left, w.Jobs[first].ID)
	}
	if err := m.check(w, p, a); err != nil {
		return err
	}
	if !pricedAside { // priced aside, the nodes were found on the topology first
		if err := onTopology(w, a.Allocations); err != nil {
			return err
		}
		if err := samePrice(a, m.price(w, a)); err != nil {
			return err
		}
	}
	if a.HasBound() && a.Bound > float64(a.Objective)+boundSlack(a) {
		return fmt.Errorf("bound %g above objective %v", a.Bound, a.Objective)
	}
	return nil
}

// samePrice checks a's objective against the one priced from its
// allocations: exactly for an integer objective, to 10⁻⁹ relative for a
// fractional one.
func samePrice[O ObjectiveValue](a *Answer[O], priced O) error {
	if priced != a.Objective && !(isFloat[O]() && math.Abs(float64(priced-a.Objective)) <= 1e-9*math.Max(1, math.Abs(float64(priced)))) {
		return fmt.Errorf("reported objective %v, recomputed %v", a.Objective, priced)
	}
	return nil
}

// boundSlack is how far a's bound may lie above its objective by
// rounding: 10⁻⁶ relative of the bound for an integer objective (the LP
// bounds of lp_solve and CLP), 10⁻⁹ of the objective for a fractional one.
func boundSlack[O ObjectiveValue](a *Answer[O]) float64 {
	if isFloat[O]() {
		return 1e-9 * math.Max(1, math.Abs(float64(a.Objective)))
	}
	return 1e-6 * math.Max(1, math.Abs(a.Bound))
}

func isFloat[O ObjectiveValue]() bool {
	_, ok := any(*new(O)).(float64)
	return ok
}

// onTopology reports the first allocated node that is not a node of w's
// topology: the objective cannot be priced on it (the pricing indexes the
// topology by node id), so it is refused before any pricing, as an
// infeasible answer, not left to panic.
func onTopology(w *model.Window, allocs []model.Allocation) error {
	n := w.Topology.NumNodes()
	for _, al := range allocs {
		for _, k := range al.Nodes {
			if k < 0 || k >= n {
				id := strconv.Itoa(al.Job)
				if al.Job >= 0 && al.Job < len(w.Jobs) {
					id = w.Jobs[al.Job].ID
				}
				return fmt.Errorf("%w: allocation for job %s: node %d is not on the topology (%d nodes)", model.ErrInfeasible, id, k, n)
			}
		}
	}
	return nil
}
