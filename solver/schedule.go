package solver

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/optsched/optsched/model"
)

// This file is the contract of the second way to read a window, the
// time-and-resource model of [Bridi16]: decide *when and where* every
// waiting job starts on a heterogeneous cluster. A job is u units, each
// needing the amounts of its (one-chunk) select statement, or whole nodes
// without one; nodes have capacities; running jobs are fixed; reservations
// and exclusive jobs keep others off their nodes. The objective is the
// weighted queue time of [Bridi16] Eq. (2),
//
//	Σ_i (s_i − submit_i) / ewt_{q_i},
//
// which differs from Σ_i s_i / ewt_{q_i} by a constant. model.Check states
// the feasibility rules in full.

// timeResource is the time-and-resource model of SolveWindow (see
// there): a Scheduler schedules every waiting job, publishing to a board
// whose incumbent and bound its answer then carries.
type timeResource struct {
	board *ScheduleBoard
}

func (*timeResource) noun() string { return "scheduler" }

func (m *timeResource) problem(w *model.Window, opt Options) *ScheduleProblem {
	m.board = NewScheduleBoard()
	return &ScheduleProblem{Window: w, Granularity: opt.Granularity, Publisher: m.board}
}

// check: units allocations, starts on the grid from the window time,
// model.Check, and a CH weight only on a window with a topology.
func (*timeResource) check(w *model.Window, p *ScheduleProblem, s *Schedule) error {
	g := p.Grid()
	for _, a := range s.Allocations {
		if a.Units == nil {
			return fmt.Errorf("job %s: not a units allocation", w.Jobs[a.Job].ID)
		}
		if (a.Start-w.Time)%g != 0 {
			return fmt.Errorf("job %s: start %d is off the %d s grid from %d", w.Jobs[a.Job].ID, a.Start, g, w.Time)
		}
	}
	if s.CHWeight != 0 && (!(s.CHWeight > 0) || math.IsInf(s.CHWeight, 0) || w.Topology == nil) {
		return fmt.Errorf("CH weight %v (topology: %v)", s.CHWeight, w.Topology != nil)
	}
	return model.Check(w, s.Allocations)
}

// price is the weighted queue time, plus the CH term with a CH weight.
func (*timeResource) price(w *model.Window, s *Schedule) float64 {
	got := model.WeightedQueueTime(w, s.Allocations)
	if s.CHWeight != 0 {
		got += s.CHWeight * float64(Objective(w, s.Allocations))
	}
	return got
}

func (m *timeResource) finish(w *model.Window, p *ScheduleProblem, sch *Schedule, name string) (*ScheduleResult, error) {
	if err := verify(w, m, p, sch, false); err != nil {
		return nil, err
	}
	if err := m.published(w, p, sch); err != nil {
		return nil, err
	}
	if sch.Status == Unknown || sch.Status == Infeasible {
		deferred := make([]bool, len(w.Jobs))
		for _, d := range sch.Deferred {
			deferred[d.Job] = true
		}
		reason := fmt.Sprintf("scheduler %s found no schedule within the time limit", name)
		if sch.Why != "" {
			reason = fmt.Sprintf("scheduler %s: %s", name, sch.Why)
		}
		for j := range w.Jobs {
			if !deferred[j] {
				sch.Deferred = append(sch.Deferred, model.Deferral{Job: j, Reason: reason, ForTime: sch.Status == Unknown})
			}
		}
	}
	return &ScheduleResult{Answer: *sch, Granularity: p.Grid()}, nil
}

// published makes sch carry what its scheduler published on m's board:
// the published incumbent when sch is Unknown and it places every job sch
// does not defer (status Feasible; it must pass verify), and the
// highest published bound when it is above sch's and sch defers no job
// for time (a bound above the objective is a bug). (A scheduler runs to its
// return here: there is no abandoned scheduler whose board would answer
// alone.)
func (m *timeResource) published(w *model.Window, p *ScheduleProblem, sch *Schedule) error {
	allocs, obj, bound, ok := m.board.Best()
	if ok && sch.Status == Unknown && len(sch.Deferred)+len(allocs) == len(w.Jobs) {
		got := *sch
		got.Status, got.Allocations, got.Objective, got.Why = Feasible, allocs, obj, ""
		if err := verify(w, m, p, &got, false); err != nil {
			return fmt.Errorf("published incumbent: %w", err)
		}
		*sch = got
	}
	partial := slices.ContainsFunc(sch.Deferred, func(d model.Deferral) bool { return d.ForTime })
	if math.IsNaN(bound) || partial || sch.Status == Infeasible || sch.HasBound() && bound <= sch.Bound {
		return nil // a bound on every job's schedule is none on a partial one
	}
	if sch.Status != Unknown {
		if bound > sch.Objective+1e-9*math.Max(1, math.Abs(sch.Objective)) {
			return fmt.Errorf("published bound %g above objective %g", bound, sch.Objective)
		}
		bound = min(bound, sch.Objective)
	}
	sch.Bound = bound
	return nil
}

// BestInitial runs the schedulers hs on p in turn (the first incumbent
// of an exact scheduler) and returns the best of their schedules, read
// into the caller's terms by read with its cost, and the name of the
// scheduler that gave it; ok is false when none gave a schedule (status
// unknown or infeasible). A scheduler's or read's error is returned,
// naming the scheduler.
func BestInitial[T any, C cmp.Ordered](ctx context.Context, p *ScheduleProblem, hs []Scheduler, read func(*Schedule) (T, C, error)) (best T, from string, ok bool, err error) {
	var bestCost C
	for _, h := range hs {
		sch, err := h.Solve(ctx, p)
		if err != nil {
			return best, "", false, fmt.Errorf("initial %s: %w", h.Name(), err)
		}
		if sch.Status == Unknown || sch.Status == Infeasible {
			continue
		}
		v, cost, err := read(sch)
		if err != nil {
			return best, "", false, fmt.Errorf("initial %s: %w", h.Name(), err)
		}
		if !ok || cost < bestCost {
			best, bestCost, from, ok = v, cost, h.Name(), true
		}
	}
	return best, from, ok, nil
}
