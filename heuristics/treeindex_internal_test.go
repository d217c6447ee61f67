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

// TestMishraCostStretches: cost, which prices each stretch of pairs on the
// same two leaves once, answers what pricing every pair answers.
func TestMishraCostStretches(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for i := range 300 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 60, 3)
		m := newMishra(w)
		for c := range m.commCnt {
			m.commCnt[c] = rng.IntN(3)
		}
		nodes := slices.Clone(w.Idle)
		rng.Shuffle(len(nodes), func(a, b int) { nodes[a], nodes[b] = nodes[b], nodes[a] })
		nodes = nodes[:rng.IntN(len(nodes)+1)]
		slices.Sort(nodes)
		for _, pattern := range []string{"", "rd", "rhvd", "binomial"} {
			comm := rng.IntN(2) == 0
			if got, want := m.cost(nodes, comm, pattern), m.costEveryPair(nodes, comm, pattern); got != want {
				t.Fatalf("window %d, %d nodes, %q: cost %v, every pair %v", i, len(nodes), pattern, got, want)
			}
		}
	}
}

// costEveryPair is cost as it was: every pair of every step priced.
func (m *mishra) costEveryPair(nodes []int, comm bool, pattern string) float64 {
	if len(nodes) < 2 {
		return 0
	}
	leaf := make([]int, len(nodes))
	for i, id := range nodes {
		leaf[i] = m.t.Node(id).Leaf
		if comm {
			m.extra[leaf[i]]++
		}
	}
	defer func() {
		for _, l := range leaf {
			m.extra[l] = 0
		}
	}()
	pair := func(i, j int) float64 {
		a, b := leaf[i], leaf[j]
		ca := float64(m.commCnt[a]+m.extra[a]) / float64(m.size[a])
		if a == b {
			return 2 * (1 + ca)
		}
		cb := float64(m.commCnt[b]+m.extra[b]) / float64(m.size[b])
		c3 := float64(m.commCnt[a]+m.extra[a]+m.commCnt[b]+m.extra[b]) / float64(m.size[a]+m.size[b])
		return float64(2*m.lcaLevel(a, b)) * (1 + ca + cb + c3/2)
	}
	n := len(nodes)
	var total float64
	for k := 1; k < n; k <<= 1 {
		var step float64
		if pattern == "binomial" {
			for i := 0; i < k && i+k < n; i++ {
				step = max(step, pair(i, i+k))
			}
		} else {
			for i := range n {
				if j := i ^ k; j > i && j < n {
					step = max(step, pair(i, j))
				}
			}
		}
		total += step
	}
	return total
}
