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
	type solved struct {
		sel model.Selection
		res *Result // the solver's, when there are multi-node jobs
	}
	solve := func(ctx context.Context) (solved, error) {
		sel := model.SelectJobs(w, opt.MaxJobs)
		if len(sel.Multi) == 0 {
			return solved{sel: sel}, nil
		}
		res, err := s.Solve(ctx, NewProblem(w, sel.Multi))
		return solved{sel, res}, err
	}
	return within(ctx, w, "solver "+s.Name(), opt.TimeLimit, solve, func(sv solved) (*WindowResult, error) {
		sel, res := sv.sel, sv.res
		var priced chan int64 // the objective priced aside, when it is
		out := &WindowResult{Deferred: sel.Deferred, MaxJobs: opt.MaxJobs}
		if len(sel.Multi) == 0 {
			// Nothing to optimise: the empty placement is optimal.
			out.Answer = Result{Status: Optimal, Bound: 0, Encoding: "none", Solver: s.Name()}
		} else {
			// The objective is priced again from the allocations: beside
			// the checks below when there are many (on 47,000 jobs each
			// takes tens of milliseconds, and the machine has a second
			// core).
			if res != nil && len(res.Allocations) >= parallelPricing {
				priced = make(chan int64, 1)
				go func(allocs []model.Allocation) { priced <- Objective(w, allocs) }(res.Allocations)
			}
			if err := verify(w, sel.Multi, res, priced != nil); err != nil {
				return nil, err
			}
			out.Answer = *res
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
		singles, unplaced := placeSingles(w, out.Allocations, sel.Single)
		out.Allocations = append(slices.Clone(out.Allocations), singles...)
		for _, j := range unplaced {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j, Reason: "one-node job: no idle node left after the multi-node allocation"})
		}
		if err := model.Check(w, out.Allocations); err != nil {
			return nil, err
		}
		if err := model.CheckAccounted(w, out.Allocations, out.Deferred); err != nil {
			return nil, err
		}
		if priced != nil {
			if err := samePrice(&out.Answer, <-priced); err != nil {
				return nil, err
			}
		}
		out.Elapsed = time.Since(start)
		return out, nil
	})
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
