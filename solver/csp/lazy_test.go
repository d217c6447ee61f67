package csp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/optsched/optsched/model"
)

// lazyWindow returns a window of 2 to 6 jobs on a random small layout
// (one pod in a quarter of them, where a block round the end of Q can
// cost the least), idle nodes in runs or scattered, sizes from 1 to 20
// nodes, a hop cost from 1 to 40 (so that a price one above another is
// a price blocks have) and either cost kind.
func lazyWindow(rng *rand.Rand) *model.Window {
	pods := 2 + rng.IntN(6)
	if rng.IntN(4) == 0 {
		pods = 1
	}
	topo, err := model.NewLayout(pods, 1+rng.IntN(4), 2+rng.IntN(7))
	if err != nil {
		panic(err)
	}
	w := &model.Window{Topology: topo, Cost: model.DefaultCostModel}
	if rng.IntN(2) == 0 {
		w.Cost.Kind = model.CostLanPaper
	}
	w.Cost.HopCost = 1 + rng.Int64N(40)
	p := 0.3 + 0.7*rng.Float64()
	idle := rng.IntN(2) == 0
	for k := range topo.NumNodes() {
		if rng.IntN(6) == 0 {
			idle = rng.Float64() < p
		}
		if idle || rng.IntN(10) == 0 {
			w.Idle = append(w.Idle, k)
		}
	}
	left := len(w.Idle)
	for j := 0; j < 2+rng.IntN(5) && left >= 1; j++ {
		size := 1 + rng.IntN(min(20, left))
		left -= size
		w.Jobs = append(w.Jobs, model.Job{ID: fmt.Sprint("j", j), Nodes: size, Walltime: 60, Queue: model.DefaultQueue})
	}
	return w
}

// TestLazyTrivialAsFull holds the lazy trivial path to the general one
// (every block priced, the sequential and greedy placements, the trivial
// bound) on 6,000 seeded random windows: the same status, objective,
// bound, method, states and allocations. Enough windows must take the
// lazy path, with both its answers (the sequential placement, the greedy
// one) and greedy answers with a block round the end of Q, and enough
// must fall back, for the test to say anything.
func TestLazyTrivialAsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 9))
	lazy, seq, wraps, full := 0, 0, 0, 0
	for i := range 6000 {
		w := lazyWindow(rng)
		if len(w.Jobs) < 2 {
			continue
		}
		p := allJobs(w)
		got, want := mustSolve(t, Solver{}, p), mustSolve(t, Solver{priceAll: true}, p)
		g, f := got.Stats.CSP, want.Stats.CSP
		if got.Status != want.Status || got.Objective != want.Objective || got.Bound != want.Bound ||
			g.Method != f.Method || g.States != f.States || !reflect.DeepEqual(got.Allocations, want.Allocations) {
			t.Fatalf("window %d: lazy %v %d %v %s %v, full %v %d %v %s %v", i, got.Status, got.Objective, got.Bound,
				g.Method, got.Allocations, want.Status, want.Objective, want.Bound, f.Method, want.Allocations)
		}
		if f.Lazy {
			t.Fatalf("window %d: priceAll took the lazy path", i)
		}
		if !g.Lazy {
			if !g.LazyFellBack {
				t.Fatalf("window %d: neither lazy nor fallen back", i)
			}
			full++
			continue
		}
		lazy++
		if reflect.DeepEqual(got.Allocations, seqResult(p).Allocations) {
			seq++
		}
		for _, a := range got.Allocations {
			// A block round the end of Q: its node list is not ascending.
			if !slices.IsSorted(a.Nodes) {
				wraps++
				break
			}
		}
	}
	t.Logf("lazy %d (the sequential placement %d, greedy with a block round the end %d), full %d", lazy, seq, wraps, full)
	if lazy < 1000 || seq < 300 || lazy-seq < 500 || wraps < 20 || full < 1000 {
		t.Errorf("lazy %d (sequential %d, wrapping %d), full %d: too few to exercise the lazy path", lazy, seq, wraps, full)
	}
}

// TestFirstLeast holds firstLeast to a scan of every block's price: with
// least the least price over random free spans (not only MinCost), it
// finds the first position of that price, wherever it falls in its
// stretch, blocks round the end of Q included.
func TestFirstLeast(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 10))
	inside := 0
	for i := range 5000 {
		w := lazyWindow(rng)
		if i%2 == 0 {
			w.Cost.HopCost = 1 // many ties: prices floored at 1
		}
		q := w.Idle
		nq := len(q)
		if nq < 2 {
			continue
		}
		r := 1 + rng.IntN(nq)
		// Random used blocks, as greedy leaves them.
		var used []span
		for range rng.IntN(4) {
			used = addSpan(used, rng.IntN(nq), 1+rng.IntN(max(1, nq/4)), nq)
		}
		used = mergeSpans(used)
		fit := fitSpans(nil, used, nq, r, nq)
		least, want := int64(-1), -1
		for _, f := range fit {
			for k := f.lo; k < f.hi; k++ {
				if c := w.Cost.Cost(w.Topology, w.Block(k, r)); least < 0 || c < least {
					least, want = c, k
				}
			}
		}
		if want < 0 {
			continue
		}
		h := model.GetHopCounter(w.Topology)
		got, err := firstLeast(context.Background(), h, w, r, least, fit)
		h.Release()
		if err != nil || got != want {
			t.Fatalf("window %d (|Q| %d, r %d, fit %v): %d, %v, want %d", i, nq, r, fit, got, err, want)
		}
		if slices.ContainsFunc(fit, func(f span) bool { return f.lo < want }) && want > 0 &&
			w.Cost.Cost(w.Topology, w.Block(want-1, r)) > least && w.Topology.Node(q[want-1]).Leaf == w.Topology.Node(q[want]).Leaf {
			inside++ // not the first of its stretch on the out end
		}
	}
	if inside < 100 {
		t.Errorf("%d answers past the first of a stretch: too few", inside)
	}
	t.Logf("%d answers past the first of a stretch", inside)
}

// TestLazyTrivialDeadline: an ended context makes the lazy path step
// aside, and the answer is the general path's (the sequential placement).
func TestLazyTrivialDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rng := rand.New(rand.NewPCG(33, 11))
	for range 200 {
		w := lazyWindow(rng)
		if len(w.Jobs) < 2 {
			continue
		}
		p := allJobs(w)
		if _, ok := (Solver{}).lazyTrivial(ctx, p); ok {
			t.Fatal("the lazy path answered after the deadline")
		}
		res, err := Solver{}.Solve(ctx, p)
		if err != nil || res.Stats.CSP == nil || !res.Stats.CSP.InterruptedBuilding {
			t.Fatalf("after the deadline: %v, %+v", err, res)
		}
	}
}
