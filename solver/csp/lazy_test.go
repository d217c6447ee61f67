package csp

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestLazyTrivialAsFull holds the lazy trivial path to the general one
// (every block priced, the sequential and greedy placements, the trivial
// bound) on 4,000 seeded random windows of 2 to 6 jobs on small layouts:
// the same status, objective, bound, method, states and allocations.
// Enough windows must take the lazy path, both its answers (the
// sequential placement, the greedy one) and its fallback, for the test
// to say anything.
func TestLazyTrivialAsFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 7))
	lazy, seq, fell := 0, 0, 0
	for i := range 4000 {
		w := randomLayoutWindow(rng, 6, 3+rng.IntN(40))
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
		switch {
		case g.Lazy:
			lazy++
			if reflect.DeepEqual(got.Allocations, seqResult(p).Allocations) {
				seq++
			}
		case f.Method == "trivial":
			fell++ // trivial, but some block of the least price is not MinCost
		}
	}
	t.Logf("lazy %d (sequential %d), trivial by the full path only %d", lazy, seq, fell)
	if lazy < 800 || seq < 100 || lazy-seq < 400 {
		t.Errorf("lazy path %d times, %d of them the sequential placement: the test does not exercise it", lazy, seq)
	}
}
