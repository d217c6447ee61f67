package solver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/optsched/optsched/model"
)

// A Truncater is a list scheduler that can answer a partial schedule when
// its context ends (heuristics.PBSList): the jobs placed so far, which
// start exactly where its whole schedule starts them, and the others
// deferred with that reason.
type Truncater interface {
	Truncated() Scheduler
}

// TruncateFloor is the least time BestListSchedule gives a truncated list
// schedule, even past the deadline, when no list schedule finished in
// time: a window is never answered with nothing for want of time.
const TruncateFloor = 10 * time.Millisecond

// BestListSchedule runs the list schedulers hs on w and returns the
// finished schedule of least obj. When none finished within ctx, the first
// that is a Truncater runs truncated, with at least TruncateFloor
// (truncated is then true). best is nil when hs is empty or none answered.
// It is how the exact CP schedulers answer a window whose model they
// cannot build or search in the time left.
func BestListSchedule(ctx context.Context, w *model.Window, opt ScheduleOptions, hs []Scheduler, obj func(*Schedule) float64) (best *Schedule, bestObj float64, truncated bool, err error) {
	for _, h := range hs {
		sch, err := h.Schedule(ctx, w, opt)
		if err != nil {
			return nil, 0, false, fmt.Errorf("initial %s: %w", h.Name(), err)
		}
		if sch.Status == Unknown || sch.Status == Infeasible {
			continue
		}
		if o := obj(sch); best == nil || o < bestObj {
			best, bestObj = sch, o
		}
	}
	if best != nil {
		return best, bestObj, false, nil
	}
	for _, h := range hs {
		t, ok := h.(Truncater)
		if !ok {
			continue
		}
		tctx, cancel := floorContext(ctx, TruncateFloor)
		sch, err := t.Truncated().Schedule(tctx, w, opt)
		cancel()
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

// floorContext returns ctx, or — when ctx's deadline is less than floor
// away — a context with floor from now that still ends when ctx is
// cancelled for another reason than its deadline (a signal).
func floorContext(ctx context.Context, floor time.Duration) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) >= floor {
		return context.WithCancel(ctx)
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return context.WithCancel(ctx)
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), floor)
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	return fctx, func() { stop(); cancel() }
}
