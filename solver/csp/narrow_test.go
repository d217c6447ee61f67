package csp

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/optsched/optsched/solver"
)

// mostCost returns Σ_s ε_s × the dearest block of size s: what
// narrowCosts holds against inf32.
func mostCost(st *search) int64 {
	var most int64
	for s, c := range st.g.Cost {
		var top int64
		for _, v := range c {
			top = max(top, v)
		}
		most += int64(st.eps[s]) * top
	}
	return most
}

// TestNarrowAsWide holds the exact DP on int32 tables to the one on int64
// tables (noNarrow) on 900 seeded random layouts, with the rotations and
// the wrap DPs each forced on a third of them: the same status, objective,
// bound, allocations and DP counts. A third of the windows price a hop so
// that the dearest placement lands between half and twice inf32, so that
// narrowCosts both accepts and refuses near its limit (a limit set too
// high overflows the narrow sums and fails the test).
func TestNarrowAsWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 27))
	modes := []int{modeAuto, modeRotations, modeWraps}
	narrow, wide, nearNarrow, nearWide := 0, 0, 0, 0
	for i := range 900 {
		w := randomLayoutWindow(rng, 6, 120)
		p := allJobs(w)
		if len(p.Jobs) < 2 {
			continue
		}
		near := i%3 == 2
		if near {
			st, err := newSearch(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			most := mostCost(st)
			st.g.Release()
			if most <= 0 {
				continue
			}
			// Prices are near-linear in the hop cost.
			target := float64(inf32) * (0.5 + 1.5*rng.Float64())
			w.Cost.HopCost = max(1, int64(float64(w.Cost.HopCost)*target/float64(most)))
		}
		st, err := newSearch(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		st.narrowCosts()
		isNarrow := st.cost32 != nil
		if isNarrow != (mostCost(st) < inf32) {
			t.Fatalf("window %d: narrow %v with the dearest placement at %d (inf32 %d)", i, isNarrow, mostCost(st), inf32)
		}
		st.g.Release()
		switch {
		case isNarrow && near:
			nearNarrow++
		case near:
			nearWide++
		case isNarrow:
			narrow++
		default:
			wide++
		}
		s := Solver{mode: modes[i%len(modes)]}
		got := mustSolve(t, s, p)
		noNarrow = true
		want := mustSolve(t, s, p)
		noNarrow = false
		gs, ws := *got.Stats.CSP, *want.Stats.CSP
		gs.ElapsedMS, ws.ElapsedMS = 0, 0
		if got.Status != want.Status || got.Objective != want.Objective || got.Bound != want.Bound ||
			!reflect.DeepEqual(got.Allocations, want.Allocations) || gs != ws {
			t.Fatalf("window %d (mode %d, narrow %v): int32 tables %v %d %v %+v, int64 %v %d %v %+v", i, s.mode, isNarrow,
				got.Status, got.Objective, got.Allocations, gs, want.Status, want.Objective, want.Allocations, ws)
		}
		if got.Status != solver.Optimal {
			t.Fatalf("window %d: %v without a deadline", i, got.Status)
		}
	}
	if narrow < 300 || nearNarrow < 30 || nearWide < 30 {
		t.Errorf("narrow %d, near the limit narrow %d and wide %d: too few", narrow, nearNarrow, nearWide)
	}
	t.Logf("narrow %d, wide %d; near the limit narrow %d, wide %d", narrow, wide, nearNarrow, nearWide)
}
