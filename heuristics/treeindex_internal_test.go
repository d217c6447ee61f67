package heuristics

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/instances"
)

// TestSlurmIndexedAsScan: on random windows of every topology kind, an
// indexed tree places every job where the scan of every candidate leaf
// places it, while jobs take nodes and give them back.
func TestSlurmIndexedAsScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	indexed, placed := 0, 0
	for i := range 400 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 40, 3)
		ref, fast := newTree(w), newTree(w)
		fast.fx = newTreeIndex(fast)
		if fast.fx == nil {
			continue
		}
		indexed++
		var held [][]int
		for step := range 60 {
			if ref.total > 0 && (len(held) == 0 || rng.IntN(3) > 0) {
				n := 1 + rng.IntN(ref.total)
				if rng.IntN(2) == 0 {
					n = 1 + rng.IntN(min(ref.total, 12))
				}
				if got, want := fast.topSwitch(n), ref.topSwitch(n); got != want {
					t.Fatalf("window %d step %d n %d: top switch %d, scan %d", i, step, n, got, want)
				}
				want := ref.slurmPlace(n)
				got := fast.slurmPlace(n)
				if !slices.Equal(got, want) {
					t.Fatalf("window %d step %d n %d: indexed %v, scan %v", i, step, n, got, want)
				}
				held = append(held, got)
				placed++
				continue
			}
			if len(held) == 0 {
				break
			}
			k := rng.IntN(len(held))
			giveAll(ref, held[k])
			giveAll(fast, held[k])
			held = slices.Delete(held, k, k+1)
		}
	}
	if indexed < 200 || placed < 5000 {
		t.Errorf("only %d indexed windows, %d jobs placed", indexed, placed)
	}
}

// giveAll returns nodes to their leaves.
func giveAll(tr *tree, nodes []int) {
	for len(nodes) > 0 {
		leaf := tr.t.Node(nodes[0]).Leaf
		k := 1
		for k < len(nodes) && tr.t.Node(nodes[k]).Leaf == leaf {
			k++
		}
		tr.give(leaf, nodes[:k])
		nodes = nodes[k:]
	}
}
