package sim

import (
	"context"
	"math"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// A WindowGap compares, on one window with multi-node jobs, the objective
// of the window solver (Config.Solver) with the best lower bound known on
// the window's optimum: the optimum when Config.GapSolver proved it, else
// the larger of the two solvers' proven bounds.
type WindowGap struct {
	// Time is the window's decision time, in seconds.
	Time int64
	// Objective is the total CH cost of the solver's multi-node jobs.
	Objective int64
	// Bound is the best proven lower bound on the optimum, rounded up to
	// an integer (CH costs are integers); it equals the optimum when
	// Exact is solver.Optimal.
	Bound int64
	// ExactObjective and Exact are the gap solver's objective and status.
	ExactObjective int64
	Exact          solver.Status
	// ExactElapsed is the gap solver's wall time on the window.
	ExactElapsed time.Duration
	// Gap is (Objective − Bound) / Objective, 0 when Objective is 0 or
	// below Bound: 0 means the solver's allocation is proven optimal.
	Gap float64
}

// measureGap re-solves window w with the gap solver, with the options the
// window solver had, and records the gap of res to the optimum or the best
// bound. It leaves w and res unchanged, so the trajectory does not depend
// on it. A window without multi-node jobs is not measured (its empty
// placement is trivially optimal); one whose multi-node jobs the window
// solver did not place, or whose optimum has no known lower bound, counts
// in Result.GapSkipped. abandoned reports that the gap solver's exact
// solver was abandoned at the deadline (and may still read w).
func (s *state) measureGap(ctx context.Context, w *model.Window, res *solver.WindowResult, opt solver.Options) (abandoned bool, err error) {
	if !hasMulti(w, res.Allocations) {
		if res.Status == solver.Unknown || res.Status == solver.Infeasible {
			s.res.GapSkipped++
		}
		return false, nil
	}
	ex, err := solver.SolveWindow(ctx, w, s.cfg.GapSolver, opt)
	if err != nil {
		return false, err
	}
	abandoned = ex.Stats.Portfolio != nil && ex.Stats.Portfolio.ExactAbandoned
	lb := math.Inf(-1)
	switch {
	case ex.Status == solver.Optimal:
		lb = float64(ex.Objective)
	case ex.HasBound():
		lb = ex.Bound
	}
	if res.HasBound() {
		lb = max(lb, res.Bound)
	}
	if math.IsInf(lb, -1) {
		s.res.GapSkipped++
		return abandoned, nil
	}
	g := WindowGap{Time: w.Time, Objective: res.Objective, Bound: int64(math.Ceil(lb - 1e-6)),
		ExactObjective: ex.Objective, Exact: ex.Status, ExactElapsed: ex.Elapsed}
	if g.Objective > 0 && g.Objective > g.Bound {
		g.Gap = float64(g.Objective-g.Bound) / float64(g.Objective)
	}
	s.res.Gaps = append(s.res.Gaps, g)
	return abandoned, nil
}

// hasMulti reports whether allocs place a job of two or more nodes.
func hasMulti(w *model.Window, allocs []model.Allocation) bool {
	for _, a := range allocs {
		if w.Jobs[a.Job].Nodes >= 2 {
			return true
		}
	}
	return false
}
