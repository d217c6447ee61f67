package solver

import (
	"context"
	"fmt"
	"math"
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
type ObjectiveValue interface{ ~int64 | ~float64 }

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
}

// A Result is a whole-node solver's answer to a Problem; its Objective is
// the total CH cost of its allocations.
type Result = Answer[int64]

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
	// was asked to place (whole-node: the multi-node jobs only).
	Answer[O]
	// Deferred are the jobs that wait, with reasons.
	Deferred []model.Deferral
	// Elapsed is the wall time of the whole call.
	Elapsed time.Duration

	// MaxJobs, whole-node model, is the cap on the multi-node jobs the
	// selection applied (Options.MaxJobs; 0: none).
	MaxJobs int
	// Granularity, time-and-resource model, is the grid the schedule was
	// asked for, in seconds.
	Granularity int64
	// CHWeight, time-and-resource model, is the weight of the CH term
	// that Objective and Bound include (Schedule.CHWeight).
	CHWeight float64
	// Why, time-and-resource model with Status Unknown, says why there
	// is no schedule when it is not simply the time limit.
	Why string
}

// A WindowResult is the answer of SolveWindow, the whole-node model.
type WindowResult = WindowAnswer[int64]

// A ScheduleResult is the answer of ScheduleWindow, the
// time-and-resource model.
type ScheduleResult = WindowAnswer[float64]

// within runs solve within timeLimit (when positive, on top of ctx's
// deadline), keeping postReserve(w) of the deadline for the checks, and
// hands its answer to finish, which checks it and completes the window's
// answer. who names the solver in errors ("solver csp"): solve's errors
// are wrapped with it, finish's as ErrSolverBug — an answer that fails
// the checks is never returned. It is the one pipeline of SolveWindow
// and ScheduleWindow.
func within[R, A any](ctx context.Context, w *model.Window, who string, timeLimit time.Duration,
	solve func(context.Context) (R, error), finish func(R) (A, error)) (out A, err error) {
	if timeLimit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeLimit)
		defer cancel()
	}
	solveCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		solveCtx, cancel = context.WithDeadline(ctx, dl.Add(-postReserve(w)))
		defer cancel()
	}
	r, err := solve(solveCtx)
	if err != nil {
		return out, fmt.Errorf("%s: %w", who, err)
	}
	if out, err = finish(r); err != nil {
		return out, fmt.Errorf("%w: %s: %w", ErrSolverBug, who, err)
	}
	return out, nil
}
