package sat

import (
	"context"
	"testing"
	"time"
)

// TestPlan checks the invariants of Solve's time plan: every phase has
// a name, a run and a share of the time left in (0, 100] %, only the last
// (the last search) takes all of it, and no floor exceeds its ceiling.
// Walked at limits from 1 µs to 1 min with every phase using all of its
// part (never past the deadline), the phases spend at most the limit,
// every phase gets some time whenever some is left when it begins, and
// from 100 ms on the last search keeps at least a quarter of the limit.
func TestPlan(t *testing.T) {
	for i, ph := range plan {
		last := i == len(plan)-1
		if ph.name == "" || ph.run == nil {
			t.Errorf("phase %d: name %q, run %v", i, ph.name, ph.run != nil)
		}
		if ph.share <= 0 || ph.share > 100 || (ph.share == 100) != last {
			t.Errorf("%s: share %d %%", ph.name, ph.share)
		}
		if ph.floor < 0 || ph.ceiling < 0 || ph.ceiling > 0 && ph.floor > ph.ceiling {
			t.Errorf("%s: floor %v, ceiling %v", ph.name, ph.floor, ph.ceiling)
		}
		if last && (ph.floor != 0 || ph.ceiling != 0) {
			t.Errorf("%s: the last phase takes what is left, not floor %v, ceiling %v", ph.name, ph.floor, ph.ceiling)
		}
	}
	for _, limit := range []time.Duration{time.Microsecond, time.Millisecond, 10 * time.Millisecond, 22 * time.Millisecond,
		50 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second, time.Minute} {
		left := limit
		var part time.Duration
		for _, ph := range plan {
			part = min(left, ph.part(left))
			if left > 0 && part <= 0 {
				t.Errorf("limit %v: %s gets nothing of %v", limit, ph.name, left)
			}
			left -= part
		}
		if left < 0 {
			t.Errorf("limit %v: the phases spend %v", limit, limit-left)
		}
		if limit >= 100*time.Millisecond && part < limit/4 {
			t.Errorf("limit %v: the last search keeps %v", limit, part)
		}
	}
}

// TestPhaseBudget: a phase's context never ends after Solve's, the
// last search's is Solve's own, and without a deadline no phase gets
// one.
func TestPhaseBudget(t *testing.T) {
	for _, limit := range []time.Duration{time.Microsecond, 10 * time.Millisecond, time.Second} {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		dl, _ := ctx.Deadline()
		for i, ph := range plan {
			pctx, pcancel := ph.budget(ctx)
			pdl, ok := pctx.Deadline()
			if !ok || pdl.After(dl) {
				t.Errorf("limit %v, %s: deadline %v (%v), Schedule's %v", limit, ph.name, pdl, ok, dl)
			}
			if i == len(plan)-1 && pctx != ctx {
				t.Errorf("limit %v, %s: not Schedule's own context", limit, ph.name)
			}
			pcancel()
		}
		cancel()
	}
	for _, ph := range plan {
		pctx, pcancel := ph.budget(context.Background())
		if _, ok := pctx.Deadline(); ok {
			t.Errorf("%s: a deadline without one", ph.name)
		}
		pcancel()
	}
}
