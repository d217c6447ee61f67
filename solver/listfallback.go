package solver

import (
	"context"
	"fmt"
)

// A Truncater is a list scheduler that can answer a partial schedule when
// its context ends (heuristics.PBSList): the jobs placed so far, which
// start exactly where its whole schedule starts them, and the others
// deferred with that reason.
type Truncater interface {
	Truncated() Scheduler
}

// BestListSchedule runs the list schedulers hs on p and returns the
// finished schedule of least obj. When none finished within ctx, the first
// that is a Truncater runs truncated (truncated is then true): it answers
// the jobs it places before ctx ends, and at least its first few
// (heuristics.TruncateMin), however late. best is nil when hs is empty or none answered.
// It is how the exact CP schedulers answer a window whose model they
// cannot build or search in the time left.
func BestListSchedule(ctx context.Context, p *ScheduleProblem, hs []Scheduler, obj func(*Schedule) float64) (best *Schedule, bestObj float64, truncated bool, err error) {
	type priced struct {
		sch *Schedule
		obj float64
	}
	b, _, ok, err := BestInitial(ctx, p, hs, func(sch *Schedule) (priced, float64, error) {
		o := obj(sch)
		return priced{sch, o}, o, nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	if ok {
		return b.sch, b.obj, false, nil
	}
	for _, h := range hs {
		t, ok := h.(Truncater)
		if !ok {
			continue
		}
		sch, err := t.Truncated().Solve(ctx, p)
		if err != nil {
			return nil, 0, false, fmt.Errorf("initial %s: %w", h.Name(), err)
		}
		if sch.Status == Unknown || sch.Status == Infeasible {
			continue
		}
		return sch, obj(sch), true, nil
	}
	return nil, 0, false, nil
}
