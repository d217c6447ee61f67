package cpbnb

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Solver is the branch and bound over start-ordered schedules (see the
// package doc). It implements solver.Scheduler.
type Solver struct {
	// Initial are list schedulers whose best schedule is the first
	// incumbent; it is returned as status fallback when the search finds
	// nothing better before the deadline.
	Initial []solver.Scheduler
	// NodeLimit stops the search after this many nodes (0: none).
	NodeLimit int64
	// Progress, when set, receives the result line.
	Progress io.Writer
}

// Name returns "bnb".
func (Solver) Name() string { return "bnb" }

// schedule is a schedule in model terms.
type schedule struct {
	slots []int
	units [][]int // per job, per option
	w     int64   // Σ ω_i s_i
}

// listOnly answers the best of the Initial list schedules on w itself
// (solver.BestListSchedule), or status Unknown without one.
func (s Solver) listOnly(ctx context.Context, p *solver.ScheduleProblem) (*solver.Schedule, error) {
	w := p.Window
	out := &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: s.Name(),
		Stats: solver.Stats{BnB: &solver.BnBStats{ModelSkipped: true}}}
	best, obj, truncated, err := solver.BestListSchedule(ctx, p, s.Initial, func(sch *solver.Schedule) float64 {
		return model.WeightedQueueTime(w, sch.Allocations)
	})
	if err != nil {
		return nil, err
	}
	if best == nil {
		if len(s.Initial) == 0 {
			out.Why = fmt.Sprintf("its model of this window (%d job-node options) cannot be built in the time left, and no list schedule was asked for", cp.Options(w))
		}
		return out, nil
	}
	out.Status, out.Allocations, out.Deferred, out.Objective = solver.Fallback, best.Allocations, best.Deferred, obj
	if truncated {
		out.Stats.BnB.TruncatedList = true
	}
	return out, nil
}

// Solve schedules every waiting job of w that can ever start; see the
// package doc. Windows with a CH weight are not its business (the sat
// solver's): it schedules Eq. (2) alone.
func (s Solver) Solve(ctx context.Context, p *solver.ScheduleProblem) (*solver.Schedule, error) {
	w := p.Window
	start := time.Now()
	var m *cp.Model
	var err error
	if dl, ok := ctx.Deadline(); !ok || cp.Fits(cp.Options(w), time.Until(dl)) {
		m, err = cp.BuildContext(ctx, w, p.Grid())
	}
	if m == nil && (err == nil || ctx.Err() != nil) {
		// The model cannot be built in the time left: the best list
		// schedule on the window answers (status fallback, no bound).
		return s.listOnly(ctx, p)
	}
	if err != nil {
		return nil, err
	}
	out := &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: s.Name(),
		Stats:    solver.Stats{BnB: &solver.BnBStats{}},
		Deferred: slices.Clone(m.Deferred)}
	if len(m.Jobs) == 0 {
		out.Status, out.Bound = solver.Optimal, 0
		return out, nil
	}
	first, _, _, err := solver.BestInitial(ctx, p, s.Initial, func(sch *solver.Schedule) (*schedule, int64, error) {
		slots, units, err := m.Encode(sch.Allocations)
		if err != nil {
			return nil, 0, err
		}
		w := m.Weighted(slots)
		return &schedule{slots: slots, units: units, w: w}, w, nil
	})
	if err != nil {
		return nil, err
	}
	if first == nil && len(s.Initial) > 0 && ctx.Err() != nil {
		return s.listOnly(ctx, p) // a truncated list schedule
	}
	// The incumbents and bounds are published as they come (with exact
	// weights only, as the answer's bound): the first, each
	// improvement, Σ ω_i EST_i at the start and the search's bound at
	// its end.
	pub := p.Publish()
	offer := func(sch *schedule) {
		allocs := m.Allocations(sch.slots, sch.units)
		pub.Offer(model.WeightedQueueTime(w, allocs), s.Name(), allocs, nil)
	}
	raise := func(bound int64) {
		if m.ExactWeights {
			pub.Raise(m.ObjectiveOfWeighted(float64(bound)))
		}
	}
	if p.Publisher == nil {
		offer = nil
	}
	var lb0 int64
	for _, j := range m.Jobs {
		lb0 += j.Weight * int64(j.EST)
	}
	raise(lb0)
	ub := int64(math.MaxInt64)
	if first != nil {
		ub = first.w
		if offer != nil {
			offer(first)
		}
	}
	best, bound, done, visited := search(ctx, m, ub, s.NodeLimit, offer)
	raise(bound)
	out.Stats.BnB.Nodes = visited
	out.Stats.BnB.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
	status := solver.Feasible
	if best == nil {
		best, status = first, solver.Fallback
	}
	if best == nil {
		return out, nil // stopped before a first schedule
	}
	out.Allocations = m.Allocations(best.slots, best.units)
	out.Objective = model.WeightedQueueTime(w, out.Allocations)
	out.Status = status
	if m.ExactWeights {
		out.Bound = min(out.Objective, m.ObjectiveOfWeighted(float64(bound)))
		if done {
			out.Status, out.Bound = solver.Optimal, out.Objective
		}
	}
	if s.Progress != nil {
		fmt.Fprintf(s.Progress, "bnb: %8.3f ms  %s  objective %.6g  bound %.6g  %d nodes\n",
			float64(time.Since(start).Microseconds())/1000, out.Status, out.Objective, out.Bound, visited)
	}
	return out, nil
}
