package heuristics

import (
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/instances"
)

// TestTopSwitchIndex: the indexed topSwitch answers what a scan of every
// switch answers, for every request size, while random takes drain the
// trees of random windows of every topology kind.
func TestTopSwitchIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	checked := 0
	for i := range 300 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 16, 3)
		tr := newTree(w)
		for tr.total > 0 {
			for n := 1; n <= tr.total+1; n++ {
				if got, want := tr.topSwitch(n), tr.topSwitchScan(n); got != want {
					t.Fatalf("window %d, %d free, n %d: index %d, scan %d", i, tr.total, n, got, want)
				}
				checked++
			}
			var leaves []int
			for l, f := range tr.free {
				if len(f) > 0 {
					leaves = append(leaves, l)
				}
			}
			l := leaves[rng.IntN(len(leaves))]
			tr.take(l, 1+rng.IntN(len(tr.free[l])))
		}
	}
	if checked < 1000 {
		t.Errorf("only %d queries checked", checked)
	}
}
