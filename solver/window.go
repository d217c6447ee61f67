package solver

import (
	"fmt"
	"slices"
	"time"

	"github.com/optsched/optsched/model"
)

// wholeNode is the whole-node model of SolveWindow (see there): the
// selection of the window's jobs, the multi-node ones asked of a Solver,
// the one-node ones placed first-fit after them.
type wholeNode struct {
	sel     model.Selection
	maxJobs int
	// skipCheck leaves model.Check of the answer to the caller
	// (Options.CallerChecks).
	skipCheck bool
}

func (*wholeNode) noun() string { return "solver" }

// problem selects the jobs: the solver is asked to place the multi-node
// ones, when there are any.
func (m *wholeNode) problem(w *model.Window, opt Options) *Problem {
	m.sel, m.maxJobs, m.skipCheck = model.SelectJobs(w, opt.MaxJobs), opt.MaxJobs, opt.CallerChecks
	if len(m.sel.Multi) == 0 {
		return nil
	}
	return NewProblem(w, m.sel.Multi)
}

// check: a whole-node solver defers no job (the selection does) and has
// no CH weight (its objective is the CH cost).
func (*wholeNode) check(_ *model.Window, _ *Problem, a *Result) error {
	if len(a.Deferred) > 0 || a.CHWeight != 0 {
		return fmt.Errorf("%d deferrals and CH weight %v from a whole-node solver, which has neither", len(a.Deferred), a.CHWeight)
	}
	return nil
}

func (*wholeNode) price(w *model.Window, a *Result) int64 { return Objective(w, a.Allocations) }

func (m *wholeNode) finish(w *model.Window, p *Problem, res *Result, name string) (*WindowResult, error) {
	sel := m.sel
	var priced chan int64 // the objective priced aside, when it is
	out := &WindowResult{MaxJobs: m.maxJobs}
	if p == nil {
		// Nothing to optimise: the empty placement is optimal.
		out.Answer = Result{Status: Optimal, Bound: 0, Encoding: "none", Solver: name}
	} else {
		// The objective is priced again from the allocations: beside
		// the checks below when there are many (on 47,000 jobs each
		// takes tens of milliseconds, and the machine has a second
		// core).
		if res != nil && len(res.Allocations) >= parallelPricing && onTopology(w, res.Allocations) == nil {
			priced = make(chan int64, 1)
			go func(allocs []model.Allocation) { priced <- Objective(w, allocs) }(res.Allocations)
		}
		if err := verify(w, m, p, res, priced != nil); err != nil {
			return nil, err
		}
		out.Answer = *res
		switch res.Status {
		case Unknown:
			for _, j := range sel.Multi {
				out.Deferred = append(out.Deferred, model.Deferral{Job: j,
					Reason: fmt.Sprintf("solver %s found no allocation within the time limit", name), ForTime: true})
			}
		case Infeasible:
			for _, j := range sel.Multi {
				out.Deferred = append(out.Deferred, model.Deferral{Job: j,
					Reason: fmt.Sprintf("solver %s proved that the selected jobs cannot all be placed", name)})
			}
		}
	}
	out.Deferred = append(slices.Clone(sel.Deferred), out.Deferred...)
	singles, unplaced := placeSingles(w, out.Allocations, sel.Single)
	out.Allocations = append(slices.Clone(out.Allocations), singles...)
	for _, j := range unplaced {
		out.Deferred = append(out.Deferred, model.Deferral{Job: j, Reason: "one-node job: no idle node left after the multi-node allocation"})
	}
	if err := m.checkAll(w, out, priced); err != nil {
		return nil, err
	}
	return out, nil
}

// checkAll checks the window's answer out: model.Check (unless the
// caller checks it: skipCheck), model.CheckAccounted and the objective
// priced aside (when priced is not nil). The first failure is returned,
// in that order; with skipCheck, a failure of the others runs
// model.Check after all, whose failure comes first as it would have.
func (m *wholeNode) checkAll(w *model.Window, out *WindowResult, priced chan int64) error {
	if !m.skipCheck {
		if err := model.Check(w, out.Allocations); err != nil {
			return err
		}
	}
	err := model.CheckAccounted(w, out.Allocations, out.Deferred)
	if err == nil && priced != nil {
		err = samePrice(&out.Answer, <-priced)
	}
	if err != nil && m.skipCheck {
		if cerr := model.Check(w, out.Allocations); cerr != nil {
			return cerr
		}
	}
	return err
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
