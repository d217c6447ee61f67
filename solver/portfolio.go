package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// A Portfolio runs an exact solver within the deadline minus a reserve
// and, unless it proves optimality, a fallback heuristic (warm-started
// from the exact solver's incumbent when it has one) within the reserve.
// It returns the better allocation: status Optimal when the exact solver
// proved it, Fallback when the fallback supplied or improved the answer,
// and the exact solver's own status (Feasible) when its incumbent stands,
// with the exact solver's bound in every case. The deadline is honoured even when the exact solver does not
// return in time (a cgo solver mid-solve): it is abandoned Grace after its
// share of the budget, and its goroutine finishes in the background. What
// it published on the Board the Portfolio gives it (Problem.Publisher) —
// incumbent and bound — stands as if it had returned them, so an
// abandoned solver's work is never thrown away.
//
// When the exact solver's share is already spent as Solve begins, it is
// not started (Stats.Portfolio.ExactNotStarted): the fallback answers, and the
// exact solver runs only in what it leaves.
//
// Without a deadline on ctx the exact solver runs alone.
type Portfolio struct {
	Exact Solver
	// Fallback runs when Exact does not prove optimality; nil for none.
	Fallback Solver
	// Reserve is the share of the time budget kept for the fallback
	// (default 0.2), and at least MinReserve (default 2 ms) or half the
	// budget, whichever is less. Time the fallback leaves before the
	// deadline goes to the exact solver again.
	Reserve    float64
	MinReserve time.Duration
	// Grace is how long past its share the exact solver may take before
	// it is abandoned (default 10 ms).
	Grace time.Duration
}

var _ Solver = Portfolio{}

// Name returns the exact solver's name, with "+fallback" when there is
// a fallback.
func (pf Portfolio) Name() string {
	if pf.Fallback == nil {
		return pf.Exact.Name()
	}
	return pf.Exact.Name() + "+" + pf.Fallback.Name()
}

type outcome struct {
	res *Result
	err error
}

// Solve runs the portfolio on p.
func (pf Portfolio) Solve(ctx context.Context, p *Problem) (*Result, error) {
	deadline, hasDeadline := ctx.Deadline()
	if !hasDeadline {
		return pf.Exact.Solve(ctx, p)
	}
	reserve, minReserve, grace := pf.Reserve, pf.MinReserve, pf.Grace
	if reserve <= 0 {
		reserve = 0.2
	}
	if minReserve <= 0 {
		minReserve = 2 * time.Millisecond
	}
	if grace <= 0 {
		grace = 10 * time.Millisecond
	}
	budget := time.Until(deadline)
	// The reserve is a share of the budget, at least minReserve but never
	// more than half the budget: at a 1 ms limit the exact solver keeps
	// half of it rather than nothing.
	keep := max(time.Duration(float64(budget)*reserve), min(minReserve, budget/2))
	if pf.Fallback == nil {
		keep = 0
	}
	var ex *Result
	var abandoned, skipped bool
	var err error
	if pf.Fallback != nil && !time.Now().Before(deadline.Add(-keep)) {
		// The exact solver's share is already spent (the window's own
		// work — selection, the checks' reserve — took it): not started,
		// so that it does not build an answer beside the fallback's on
		// the same cores.
		skipped = true
	} else {
		ex, abandoned, err = pf.runExact(ctx, deadline.Add(-keep), grace, p)
	}
	tooLarge := errors.Is(err, ErrTooLarge) && pf.Fallback != nil
	if err != nil && !tooLarge {
		return nil, err
	}
	if ex != nil && (ex.Status == Optimal || ex.Status == Infeasible) {
		return ex, nil
	}
	if pf.Fallback == nil {
		if ex == nil {
			ex = &Result{Status: Unknown, Bound: NoBound, Solver: pf.Exact.Name()}
		}
		if abandoned {
			ex.Stats.Portfolio = &PortfolioStats{ExactAbandoned: true}
		}
		return ex, nil
	}
	if ex != nil && len(ex.Allocations) > 0 && ctx.Err() != nil {
		// No time is left for the fallback, which would only price the
		// incumbent again (on 47,000 jobs, tens of milliseconds past
		// the deadline): the incumbent stands.
		if abandoned {
			ex.Stats.Portfolio = &PortfolioStats{ExactAbandoned: true}
		}
		ex.Solver = pf.Name()
		return ex, nil
	}
	fb := pf.Fallback
	if ws, ok := fb.(WarmStarter); ok && ex != nil && len(ex.Allocations) > 0 {
		fb = ws.WithInitial(ex.Allocations)
	}
	// The fallback always answers: it checks ctx between moves and
	// returns its best, at worst its initial solution.
	h, err := fb.Solve(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("fallback %s: %w", fb.Name(), err)
	}
	out := *h
	out.Status = Fallback
	if ex != nil && len(ex.Allocations) > 0 && ex.Objective <= h.Objective {
		// The fallback found nothing better: the answer is the exact
		// solver's incumbent, with its status (feasible), not "fallback".
		out = *ex
	}
	out.Solver = pf.Name()
	out.Bound = NoBound
	ps := &PortfolioStats{FallbackObjective: &h.Objective}
	out.Stats = Stats{Portfolio: ps}
	out.Stats.Merge(h.Stats)
	if ex != nil {
		out.Stats.Merge(ex.Stats)
	}
	if ex != nil && ex.HasBound() {
		// The exact bound holds for the exact solver's formulation. A
		// fallback on a wider one (SA on DCAS, where a job need not be
		// contiguous in Q) can go below it; the bound then says nothing
		// about the answer and is dropped rather than clamped.
		if float64(out.Objective) >= ex.Bound {
			out.Bound = ex.Bound
		} else {
			ps.FallbackBelowExactBound = true
		}
	}
	if ex != nil && len(ex.Allocations) > 0 {
		ps.ExactObjective = &ex.Objective
	}
	if tooLarge {
		// The exact solver refused the window (brute force beyond what
		// it enumerates): the fallback's answer stands, marked.
		ps.ExactTooLarge = true
		return &out, nil
	}
	if abandoned {
		ps.ExactAbandoned = true
		return &out, nil
	}
	if skipped {
		ps.ExactNotStarted = true // it may still run in what the fallback left
	}
	// The time the fallback left (it answers at once on a small window)
	// goes to the exact solver again, up to the deadline: at a limit of a
	// few milliseconds it may prove there what it could not in its share.
	if time.Until(deadline) < minRerun {
		return &out, nil
	}
	again, abandoned, err := pf.runExact(ctx, deadline, grace, p)
	if err != nil || again == nil {
		return &out, nil // the first answer stands
	}
	ps.ExactRerun = true
	// The rerun's counters replace the first run's; the fallback's stay.
	st := Stats{Portfolio: ps}
	st.Merge(again.Stats)
	st.Merge(out.Stats)
	out.Stats = st
	switch {
	case again.Status == Optimal || again.Status == Infeasible:
		again.Stats = st
		return again, nil
	case len(again.Allocations) > 0 && again.Objective < out.Objective:
		out.Allocations, out.Objective, out.Status = again.Allocations, again.Objective, again.Status
	}
	if again.HasBound() && float64(out.Objective) >= again.Bound && (!out.HasBound() || again.Bound > out.Bound) {
		out.Bound = again.Bound
	}
	if abandoned {
		ps.ExactAbandoned = true
	}
	return &out, nil
}

// minRerun is the least time left after the fallback for which the exact
// solver runs again.
const minRerun = 100 * time.Microsecond

// runExact runs the exact solver with the deadline until, publishing to
// a Board (and to p's publisher), and waits for it until grace past it;
// then it is abandoned and what it published on the Board stands (an incumbent as Feasible, or a bound
// alone as Unknown; nil when it published nothing).
func (pf Portfolio) runExact(ctx context.Context, until time.Time, grace time.Duration, p *Problem) (ex *Result, abandoned bool, err error) {
	exactCtx, cancel := context.WithDeadline(ctx, until)
	board := NewBoard()
	q := p.WithPublisher(board)
	done := make(chan outcome, 1)
	go func() {
		defer cancel()
		r, err := pf.Exact.Solve(exactCtx, q)
		done <- outcome{r, err}
	}()
	timer := time.NewTimer(max(0, time.Until(until)+grace))
	defer timer.Stop()
	select {
	case o := <-done:
		return o.res, false, o.err
	case <-timer.C:
		// Abandoned: the exact solver overran its share. What it
		// published stands: its incumbent and its bound.
		if allocs, obj, bound, ok := board.Best(); ok {
			return &Result{Status: Feasible, Allocations: allocs, Objective: obj, Bound: bound, Solver: pf.Exact.Name()}, true, nil
		} else if !math.IsNaN(bound) {
			return &Result{Status: Unknown, Bound: bound, Solver: pf.Exact.Name()}, true, nil
		}
		return nil, true, nil
	}
}
