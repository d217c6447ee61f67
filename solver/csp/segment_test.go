package csp

import (
	"math/rand/v2"
	"slices"
	"testing"

	enc "github.com/optsched/optsched/encode/csp"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// permutations calls f with every distinct ordering of xs.
func permutations(xs []int, f func([]int)) {
	var rec func(int)
	rec = func(i int) {
		if i == len(xs) {
			f(xs)
			return
		}
		seen := map[int]bool{}
		for j := i; j < len(xs); j++ {
			if seen[xs[j]] {
				continue
			}
			seen[xs[j]] = true
			xs[i], xs[j] = xs[j], xs[i]
			rec(i + 1)
			xs[i], xs[j] = xs[j], xs[i]
		}
	}
	rec(0)
}

// TestSegmentDPMatchesEnumeration checks segmentDP against orderedDP on
// every ordering of the segment, on random small windows: the same best
// cost, an order that keeps the blocks outside the segment, and starts
// that realise the cost.
func TestSegmentDPMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	checked := 0
	for i := range 300 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 18, 6)
		sel := model.SelectJobs(w, 0)
		g, err := enc.Build(w, sel.Multi)
		if err != nil {
			t.Fatal(err)
		}
		st := &search{g: g, nq: g.NumVertices(), eps: g.Counts(), best: inf, stats: &solver.CSPStats{}, pub: (&solver.Problem{}).Publish()}
		var order []int
		for s, e := range st.eps {
			for range e {
				order = append(order, s)
			}
		}
		n := len(order)
		if n == 0 {
			continue
		}
		rng.Shuffle(n, func(a, b int) { order[a], order[b] = order[b], order[a] })
		k := 1 + rng.IntN(n)
		a := rng.IntN(n - k + 1)
		want := int64(inf)
		seg := slices.Clone(order[a : a+k])
		permutations(seg, func(p []int) {
			o := slices.Concat(order[:a], p, order[a+k:])
			if c, s := st.orderedDP(o); s != nil {
				want = min(want, c)
			}
		})
		got, o, starts := st.segmentDP(order, a, k)
		if want >= inf {
			if o != nil {
				t.Fatalf("window %d: segmentDP placed blocks that do not fit", i)
			}
			continue
		}
		checked++
		if got != want || o == nil {
			t.Fatalf("window %d (order %v, segment %d+%d): segmentDP %d, enumeration %d", i, order, a, k, got, want)
		}
		if !slices.Equal(o[:a], order[:a]) || !slices.Equal(o[a+k:], order[a+k:]) {
			t.Fatalf("window %d: order %v became %v outside the segment %d+%d", i, order, o, a, k)
		}
		ms, mo := slices.Clone(order[a:a+k]), slices.Clone(o[a:a+k])
		slices.Sort(ms)
		slices.Sort(mo)
		if !slices.Equal(ms, mo) {
			t.Fatalf("window %d: segment %v became %v", i, order[a:a+k], o[a:a+k])
		}
		if c := g.Objective(starts); c != got {
			t.Fatalf("window %d: starts cost %d, segmentDP says %d", i, c, got)
		}
		if oc, _ := st.orderedDP(o); oc != got {
			t.Fatalf("window %d: the returned order costs %d, segmentDP says %d", i, oc, got)
		}
		allocs, err := g.Allocate(starts)
		if err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
		if err := model.Check(w, allocs); err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
	}
	if checked < 200 {
		t.Fatalf("only %d windows checked", checked)
	}
}
