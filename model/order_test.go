package model

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestOrderIsTheStableSort: Order equals the stable sort of the window's
// jobs on (−nwp, nodes), ties in window order, on windows full of ties;
// every third window has radixMin jobs or more (the radix sort), some
// with large node counts and waiting periods (digits above the first).
func TestOrderIsTheStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 1))
	for r := range 60 {
		n := 1 + rng.IntN(300)
		if r%3 == 0 {
			n = radixMin + rng.IntN(3*radixMin)
		}
		w := &Window{Jobs: make([]Job, n)}
		wide := r%2 == 0
		for i := range w.Jobs {
			w.Jobs[i] = Job{NWP: rng.IntN(4), Nodes: 1 + rng.IntN(5)}
			if wide {
				w.Jobs[i].NWP = rng.IntN(1 << 20)
				w.Jobs[i].Nodes = 1 + rng.IntN(1<<21)
			}
			if rng.IntN(20) == 0 {
				w.Jobs[i].NWP = 1<<31 - 1
			}
		}
		want := make([]int, len(w.Jobs))
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int {
			ja, jb := &w.Jobs[a], &w.Jobs[b]
			if ja.NWP != jb.NWP {
				return jb.NWP - ja.NWP
			}
			return ja.Nodes - jb.Nodes
		})
		if got := Order(w); !slices.Equal(got, want) {
			t.Fatalf("Order = %v, want %v", got, want)
		}
	}
}

// TestJobIndices: the look-up agrees with JobIndex on every id, a
// duplicate's first index included, and misses what is not waiting.
func TestJobIndices(t *testing.T) {
	w := &Window{Jobs: []Job{{ID: "a"}, {ID: "b"}, {ID: "a"}, {ID: "c"}}}
	look := w.JobIndices()
	for _, id := range []string{"a", "b", "c", "d", ""} {
		i, ok := look(id)
		wi, wok := w.JobIndex(id)
		if i != wi || ok != wok {
			t.Errorf("%q: %d %v, JobIndex %d %v", id, i, ok, wi, wok)
		}
	}
}
