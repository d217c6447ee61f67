package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/model"
)

// Options adjust SolveWindow.
type Options struct {
	// MaxJobs caps the multi-node jobs of the window (the published code
	// of [Lan23] uses 5); 0 means no cap.
	MaxJobs int
	// TimeLimit bounds the solve when positive, on top of ctx's deadline.
	TimeLimit time.Duration
}

// A WindowResult is the answer for a whole window: the solver's result for
// the multi-node jobs, the one-node jobs placed after it, and the jobs
// deferred to a later window.
type WindowResult struct {
	// Result is the solver's result for the multi-node jobs. Its
	// Objective and Bound cover those jobs only.
	Result
	// Allocations are all jobs that start: the solver's multi-node
	// allocations followed by the one-node jobs.
	Allocations []model.Allocation
	// Deferred are the jobs that wait, with reasons.
	Deferred []model.Deferral
	// Elapsed is the wall time of the whole call.
	Elapsed time.Duration
	// MaxJobs is the cap on the multi-node jobs the selection applied
	// (Options.MaxJobs; 0: none).
	MaxJobs int
}

// ErrSolverBug is wrapped by the errors SolveWindow returns when a solver
// answers something it must not: an allocation that fails model.Check, a
// job it was not asked to place, or a misreported objective.
var ErrSolverBug = errors.New("solver: invalid answer")

// SolveWindow solves window w with s: it selects the jobs
// (model.SelectJobs), asks s to place the multi-node ones within the time
// limit, places the one-node jobs first-fit on the lowest idle node ids
// left, and checks the whole allocation with model.Check and the objective
// with an independent recomputation before returning it.
//
// When s stops without an allocation, the multi-node jobs are deferred with
// the reason; SolveWindow itself never drops a job for lack of time.
func SolveWindow(ctx context.Context, w *model.Window, s Solver, opt Options) (*WindowResult, error) {
	start := time.Now()
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
	sel := model.SelectJobs(w, opt.MaxJobs)
	var priced chan int64 // the objective priced aside, when it is
	out := &WindowResult{Deferred: sel.Deferred, MaxJobs: opt.MaxJobs}
	if len(sel.Multi) == 0 {
		// Nothing to optimise: the empty placement is optimal.
		out.Result = Result{Status: Optimal, Bound: 0, Encoding: "none", Solver: s.Name()}
	} else {
		res, err := s.Solve(solveCtx, NewProblem(w, sel.Multi))
		if err != nil {
			return nil, fmt.Errorf("solver %s: %w", s.Name(), err)
		}
		// The objective is priced again from the allocations: beside
		// the checks below when there are many (on 47,000 jobs each takes
		// tens of milliseconds, and the machine has a second core).
		if res != nil && len(res.Allocations) >= parallelPricing {
			priced = make(chan int64, 1)
			go func(allocs []model.Allocation) { priced <- Objective(w, allocs) }(res.Allocations)
		}
		if err := verify(w, sel.Multi, res, priced != nil); err != nil {
			return nil, fmt.Errorf("%w: solver %s: %w", ErrSolverBug, s.Name(), err)
		}
		out.Result = *res
		switch res.Status {
		case Unknown:
			for _, j := range sel.Multi {
				out.Deferred = append(out.Deferred, model.Deferral{Job: j,
					Reason: fmt.Sprintf("solver %s found no allocation within the time limit", s.Name()), ForTime: true})
			}
		case Infeasible:
			for _, j := range sel.Multi {
				out.Deferred = append(out.Deferred, model.Deferral{Job: j,
					Reason: fmt.Sprintf("solver %s proved that the selected jobs cannot all be placed", s.Name())})
			}
		}
	}
	singles, unplaced := placeSingles(w, out.Result.Allocations, sel.Single)
	out.Allocations = append(slices.Clone(out.Result.Allocations), singles...)
	for _, j := range unplaced {
		out.Deferred = append(out.Deferred, model.Deferral{Job: j, Reason: "one-node job: no idle node left after the multi-node allocation"})
	}
	if err := model.Check(w, out.Allocations); err != nil {
		return nil, fmt.Errorf("%w: solver %s: %w", ErrSolverBug, s.Name(), err)
	}
	if err := model.CheckAccounted(w, out.Allocations, out.Deferred); err != nil {
		return nil, fmt.Errorf("%w: solver %s: %w", ErrSolverBug, s.Name(), err)
	}
	if priced != nil {
		if err := samePrice(&out.Result, <-priced); err != nil {
			return nil, fmt.Errorf("%w: solver %s: %w", ErrSolverBug, s.Name(), err)
		}
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// postReserve is the part of a deadline SolveWindow keeps for its own work
// after the solver returns — placing the one-node jobs, the objective's
// recomputation, model.Check and model.CheckAccounted — all linear in the
// window's size (its nodes and its jobs). 30 ns a node (topology, idle
// and running) or job covers what was measured on a 10⁶-node window (about 10 ns a node on a quiet machine, up
// to three times that while the garbage collector scans the topology); at
// least 200 µs (a small window's takes a few µs: a floor of 1 ms left a
// 1 ms limit no time to solve).
func postReserve(w *model.Window) time.Duration {
	n := w.Topology.NumNodes() + len(w.Idle)
	for _, r := range w.Running {
		n += len(r.Nodes)
	}
	n += len(w.Jobs) // CheckAccounted and the deferrals: a job costs about what a node does
	return max(200*time.Microsecond, time.Duration(n)*30*time.Nanosecond)
}

// parallelPricing is the fewest allocations whose objective SolveWindow
// prices again in a goroutine of its own.
const parallelPricing = 1024

// verify checks that res places exactly the problem's jobs (when it claims
// an allocation) and, unless priced elsewhere (pricedAside: SolveWindow
// compares it after its checks), reports their true objective.
func verify(w *model.Window, jobs []int, res *Result, pricedAside bool) error {
	if res == nil {
		return errors.New("nil result")
	}
	if res.Status == Unknown || res.Status == Infeasible {
		if len(res.Allocations) > 0 {
			return fmt.Errorf("status %s with an allocation", res.Status)
		}
		return nil
	}
	want := make([]bool, len(w.Jobs)) // a flag a job: no map on 10⁵ jobs
	for _, j := range jobs {
		want[j] = true
	}
	left := len(jobs)
	for _, a := range res.Allocations {
		if a.Job < 0 || a.Job >= len(want) || !want[a.Job] {
			return fmt.Errorf("allocation for job index %d, which was not asked for or is allocated twice", a.Job)
		}
		want[a.Job] = false
		left--
	}
	if left > 0 {
		return fmt.Errorf("status %s but %d jobs left unallocated", res.Status, left)
	}
	if !pricedAside {
		if err := samePrice(res, Objective(w, res.Allocations)); err != nil {
			return err
		}
	}
	if res.HasBound() && res.Bound > float64(res.Objective)+1e-6*math.Max(1, math.Abs(res.Bound)) {
		return fmt.Errorf("bound %g above objective %d", res.Bound, res.Objective)
	}
	return nil
}

// samePrice checks res's objective against the one priced from its
// allocations.
func samePrice(res *Result, priced int64) error {
	if priced != res.Objective {
		return fmt.Errorf("reported objective %d, recomputed %d", res.Objective, priced)
	}
	return nil
}

// placeSingles places one-node jobs first-fit on the lowest idle ids not
// used by allocs, as the published code of [Lan23] does after the window's
// solution.
func placeSingles(w *model.Window, allocs []model.Allocation, singles []int) (placed []model.Allocation, unplaced []int) {
	if len(singles) == 0 {
		// Most windows of an archive log: no table of the cluster's nodes.
		return nil, nil
	}
	used := make([]bool, w.Topology.NumNodes())
	for _, a := range allocs {
		for _, k := range a.Nodes {
			if k >= 0 && k < len(used) { // model.Check reports the others
				used[k] = true
			}
		}
	}
	next := 0
	for i, j := range singles {
		for next < len(w.Idle) && used[w.Idle[next]] {
			next++
		}
		if next == len(w.Idle) {
			// Not after SelectJobs, which counts the singles in; a
			// job that does not fit is deferred, never dropped.
			return placed, singles[i:]
		}
		placed = append(placed, model.Allocation{Job: j, Nodes: []int{w.Idle[next]}, Start: w.Time})
		used[w.Idle[next]] = true
	}
	return placed, nil
}
