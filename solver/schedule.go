package solver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

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

// A Scheduler decides when and where every waiting job of a window starts.
// Schedule must honour ctx's deadline as Solver.Solve does: when it comes,
// return the best schedule found so far or Status Unknown.
type Scheduler interface {
	// Name returns the name used on the command line and in results.
	Name() string
	// Schedule schedules every waiting job of w that can ever start.
	Schedule(ctx context.Context, w *model.Window, opt ScheduleOptions) (*Schedule, error)
}

// ScheduleOptions adjust a Scheduler.
type ScheduleOptions struct {
	// Granularity is the time grid of the starts in seconds: every job
	// starts at the window time plus a multiple of it. 0 means
	// DefaultGranularity.
	Granularity int64
	// Publisher, when set, receives an exact scheduler's incumbents and
	// bounds on the whole window as they improve (ScheduleWindow sets a
	// ScheduleBoard); nil for none. Schedulers publish through Publish.
	Publisher SchedulePublisher
}

// Publish returns where a scheduler run with o publishes its incumbents
// and bounds: o.Publisher, or a publisher that discards them.
func (o ScheduleOptions) Publish() SchedulePublisher {
	if o.Publisher == nil {
		return discard[float64]{}
	}
	return o.Publisher
}

// WithPublisher returns o publishing to pub as well as to o's publisher
// (nil pub: to none, o's hidden).
func (o ScheduleOptions) WithPublisher(pub SchedulePublisher) ScheduleOptions {
	switch {
	case pub == nil || o.Publisher == nil:
		o.Publisher = pub
	default:
		o.Publisher = tee[float64]{pub, o.Publisher}
	}
	return o
}

// DefaultGranularity is the default time grid of schedules, in seconds.
const DefaultGranularity = 60

// Grid returns the granularity, DefaultGranularity for 0.
func (o ScheduleOptions) Grid() int64 {
	if o.Granularity <= 0 {
		return DefaultGranularity
	}
	return o.Granularity
}

// A Schedule is a Scheduler's answer: the Answer core, whose
// Allocations are units allocations (model.Allocation.Units set), one per
// scheduled job, and whose Objective is the weighted queue time of
// Allocations (model.WeightedQueueTime), plus CHWeight times the CH cost
// of their node sets (model.CostModel.Cost of the window's cost model,
// summed over the allocations) when CHWeight is positive; its Bound is a
// proven lower bound on the objective over the schedules of the same jobs
// on the same grid; its Encoding is "cp".
type Schedule struct {
	Answer[float64]
	// Deferred are the jobs without a start: those that can never start
	// (their units fit on no set of usable nodes), with the reason.
	Deferred []model.Deferral
	// CHWeight is the weight of the CH term that Objective and Bound
	// include; 0 for the weighted queue time alone.
	CHWeight float64
	// Why, with Status Unknown, says why there is no schedule when it is
	// not simply the time limit (ScheduleWindow defers the jobs with it).
	Why string
}

// ScheduleWindow runs s on w within timeLimit (when positive, on top of
// ctx's deadline) and checks its answer: every job is scheduled once or
// deferred once, the allocation passes model.Check, the starts lie on the
// grid, and the objective and bound are consistent. An answer that fails
// is an ErrSolverBug error, never a result.
func ScheduleWindow(ctx context.Context, w *model.Window, s Scheduler, opt ScheduleOptions, timeLimit time.Duration) (*ScheduleResult, error) {
	start := time.Now()
	board := NewScheduleBoard()
	solve := func(ctx context.Context) (*Schedule, error) { return s.Schedule(ctx, w, opt.WithPublisher(board)) }
	return within(ctx, w, "scheduler "+s.Name(), timeLimit, solve, func(sch *Schedule) (*ScheduleResult, error) {
		if err := VerifySchedule(w, opt, sch); err != nil {
			return nil, err
		}
		if err := published(w, opt, sch, board); err != nil {
			return nil, err
		}
		if sch.Status == Unknown || sch.Status == Infeasible {
			deferred := make([]bool, len(w.Jobs))
			for _, d := range sch.Deferred {
				deferred[d.Job] = true
			}
			reason := fmt.Sprintf("scheduler %s found no schedule within the time limit", s.Name())
			if sch.Why != "" {
				reason = fmt.Sprintf("scheduler %s: %s", s.Name(), sch.Why)
			}
			for j := range w.Jobs {
				if !deferred[j] {
					sch.Deferred = append(sch.Deferred, model.Deferral{Job: j, Reason: reason, ForTime: sch.Status == Unknown})
				}
			}
		}
		return &ScheduleResult{Answer: sch.Answer, Deferred: sch.Deferred, CHWeight: sch.CHWeight, Why: sch.Why,
			Granularity: opt.Grid(), Elapsed: time.Since(start)}, nil
	})
}

// published makes sch carry what its scheduler published on board: the
// published incumbent when sch is Unknown and it places every job sch
// does not defer (status Feasible; it must pass VerifySchedule), and the
// highest published bound when it is above sch's and sch defers no job
// for time (a bound above the objective is a bug). (A scheduler runs to its
// return here: there is no abandoned scheduler whose board would answer
// alone.)
func published(w *model.Window, opt ScheduleOptions, sch *Schedule, board *ScheduleBoard) error {
	allocs, obj, bound, ok := board.Best()
	if ok && sch.Status == Unknown && len(sch.Deferred)+len(allocs) == len(w.Jobs) {
		got := *sch
		got.Status, got.Allocations, got.Objective, got.Why = Feasible, allocs, obj, ""
		if err := VerifySchedule(w, opt, &got); err != nil {
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

// VerifySchedule checks a Scheduler's answer for w (see ScheduleWindow).
func VerifySchedule(w *model.Window, opt ScheduleOptions, s *Schedule) error {
	if s == nil {
		return errors.New("nil schedule")
	}
	seen := make([]int, len(w.Jobs))
	for _, d := range s.Deferred {
		if d.Job < 0 || d.Job >= len(w.Jobs) {
			return fmt.Errorf("deferral of unknown job index %d", d.Job)
		}
		seen[d.Job]++
	}
	switch s.Status {
	case Unknown, Infeasible:
		if len(s.Allocations) > 0 {
			return fmt.Errorf("status %s with a schedule", s.Status)
		}
		return nil
	}
	g := opt.Grid()
	for _, a := range s.Allocations {
		if a.Job < 0 || a.Job >= len(w.Jobs) {
			return fmt.Errorf("allocation of unknown job index %d", a.Job)
		}
		seen[a.Job]++
		if a.Units == nil {
			return fmt.Errorf("job %s: not a units allocation", w.Jobs[a.Job].ID)
		}
		if (a.Start-w.Time)%g != 0 {
			return fmt.Errorf("job %s: start %d is off the %d s grid from %d", w.Jobs[a.Job].ID, a.Start, g, w.Time)
		}
	}
	for j, n := range seen {
		if n != 1 {
			return fmt.Errorf("job %s: scheduled or deferred %d times, want once", w.Jobs[j].ID, n)
		}
	}
	if err := model.Check(w, s.Allocations); err != nil {
		return err
	}
	got := model.WeightedQueueTime(w, s.Allocations)
	if s.CHWeight != 0 {
		if !(s.CHWeight > 0) || math.IsInf(s.CHWeight, 0) || w.Topology == nil {
			return fmt.Errorf("CH weight %v (topology: %v)", s.CHWeight, w.Topology != nil)
		}
		got += s.CHWeight * float64(Objective(w, s.Allocations))
	}
	if math.Abs(got-s.Objective) > 1e-9*math.Max(1, math.Abs(got)) {
		return fmt.Errorf("reported objective %g, recomputed %g", s.Objective, got)
	}
	if s.HasBound() && s.Bound > s.Objective+1e-9*math.Max(1, math.Abs(s.Objective)) {
		return fmt.Errorf("bound %g above objective %g", s.Bound, s.Objective)
	}
	return nil
}

// BestInitial runs the schedulers hs on w in turn (the first incumbent
// of an exact scheduler) and returns the best of their schedules, read
// into the caller's terms by read with its cost, and the name of the
// scheduler that gave it; ok is false when none gave a schedule (status
// unknown or infeasible). A scheduler's or read's error is returned,
// naming the scheduler.
func BestInitial[T any, C cmp.Ordered](ctx context.Context, w *model.Window, opt ScheduleOptions, hs []Scheduler, read func(*Schedule) (T, C, error)) (best T, from string, ok bool, err error) {
	var bestCost C
	for _, h := range hs {
		sch, err := h.Schedule(ctx, w, opt)
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
