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

// Schedule schedules every waiting job of w that can ever start; see the
// package doc. Windows with a CH weight are not its business (the sat
// solver's): it schedules Eq. (2) alone.
func (s Solver) Schedule(ctx context.Context, w *model.Window, opt solver.ScheduleOptions) (*solver.Schedule, error) {
	start := time.Now()
	m, err := cp.Build(w, opt.Grid())
	if err != nil {
		return nil, err
	}
	out := &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: s.Name(),
		Deferred: slices.Clone(m.Deferred), Stats: map[string]float64{}}
	if len(m.Jobs) == 0 {
		out.Status, out.Bound = solver.Optimal, 0
		return out, nil
	}
	first, _, _, err := solver.BestInitial(ctx, w, opt, s.Initial, func(sch *solver.Schedule) (*schedule, int64, error) {
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
	ub := int64(math.MaxInt64)
	if first != nil {
		ub = first.w
	}
	best, bound, done, visited := search(ctx, m, ub, s.NodeLimit)
	out.Stats["nodes"] = float64(visited)
	out.Stats["elapsed_ms"] = float64(time.Since(start).Microseconds()) / 1000
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
