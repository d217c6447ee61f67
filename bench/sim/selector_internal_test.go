package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// TestPickAsScan holds the strategies' counts and picks (per-leaf idle
// counts a word of the bitset at a time, each pod's leaves listed once,
// only pods with idle nodes sorted) to the node-by-node scan they
// replaced (refCounts, refPick: the code before, kept here), on random
// idle sets of layouts whose leaves straddle words, a cluster smaller
// than its topology (a partial last leaf) and a fat tree; both count
// paths (ranges and the scan kept for leaves that are not consecutive
// ids) and the counts occupy and free keep are compared.
func TestPickAsScan(t *testing.T) {
	type shape struct {
		topo  func() (*model.Topology, error)
		nodes int // 0: all the topology's
	}
	shapes := []shape{
		{func() (*model.Topology, error) { return model.NewLayout(2, 2, 4) }, 0},
		{func() (*model.Topology, error) { return model.NewLayout(5, 3, 7) }, 0},
		{func() (*model.Topology, error) { return model.NewLayout(20, 4, 10) }, 0},
		{func() (*model.Topology, error) { return model.NewLayout(9, 4, 10) }, 333},
		{func() (*model.Topology, error) { return model.NewFatTree(6, 0) }, 0},
	}
	rng := rand.New(rand.NewPCG(7, 33))
	picks, podPicks := 0, 0
	for si, sh := range shapes {
		topo, err := sh.topo()
		if err != nil {
			t.Fatal(err)
		}
		size := sh.nodes
		if size == 0 {
			size = topo.NumNodes()
		}
		c := NewCluster(topo, size, model.DefaultCostModel, []trace.Job{{ID: "x", Runtime: 1, Nodes: 1}}, 0)
		l := newLeaves(c)
		if !l.ranges {
			t.Fatalf("shape %d: leaves not seen as ranges of ids", si)
		}
		scan := *l
		scan.ranges = false
		l.track(c) // the counts kept by occupy and free from here on
		for round := range 200 {
			density := rng.Float64()
			for k := range size {
				switch idle := rng.Float64() < density; {
				case idle && !c.isIdle(k):
					c.free([]int{k})
				case !idle && c.isIdle(k):
					c.occupy(0, []int{k}, 0)
				}
			}
			wantLeaf, wantPod := refCounts(l, c)
			if !slices.Equal(l.leafIdle, wantLeaf) || !slices.Equal(l.podIdle, wantPod) {
				t.Fatalf("shape %d round %d: kept counts %v %v, want %v %v", si, round, l.leafIdle, l.podIdle, wantLeaf, wantPod)
			}
			for _, tl := range []*leaves{l, &scan} {
				leaf, pod := tl.counts(c, nil, nil)
				if !slices.Equal(leaf, wantLeaf) || !slices.Equal(pod, wantPod) {
					t.Fatalf("shape %d round %d (ranges %v): counts %v %v, want %v %v", si, round, tl.ranges, leaf, pod, wantLeaf, wantPod)
				}
			}
			for range 8 {
				n := 1 + rng.IntN(c.nIdle+2)
				for _, st := range []Strategy{DepthFirst, BreadthFirst, FirstFitStrategy} {
					got, want := l.pick(c, n, st), refPick(l, c, n, st)
					if !slices.Equal(got, want) {
						t.Fatalf("shape %d round %d: %v of %d nodes (%d idle): %v, want %v", si, round, st, n, c.nIdle, got, want)
					}
					picks++
					if st == DepthFirst && slices.Max(wantLeaf) < min(n, c.nIdle) {
						podPicks++
					}
				}
			}
		}
	}
	// Most depth-first picks must reach the pods (no leaf holds them).
	if podPicks < 2000 {
		t.Errorf("only %d depth-first picks went past the leaves (of %d picks)", podPicks, picks)
	}
}

// refCounts and refPick are leaves.counts and leaves.pick as they were,
// node by node.
func refCounts(l *leaves, c *Cluster) ([]int, []int) {
	var leafIdle, podIdle []int
	leafIdle = append(leafIdle[:0], make([]int, len(l.nodes))...)
	podIdle = append(podIdle[:0], make([]int, l.npods)...)
	for i, ns := range l.nodes {
		for _, k := range ns {
			if c.isIdle(k) {
				leafIdle[i]++
			}
		}
		podIdle[l.pod[i]] += leafIdle[i]
	}
	return leafIdle, podIdle
}

func refPick(l *leaves, c *Cluster, n int, st Strategy) []int {
	n = min(n, c.nIdle)
	out := make([]int, 0, n)
	if st == FirstFitStrategy {
		return c.appendLowestIdle(out, n)
	}
	leafIdle, podIdle := refCounts(l, c)
	take := func(leaf int) {
		for _, k := range l.nodes[leaf] {
			if len(out) == n {
				return
			}
			if c.isIdle(k) {
				out = append(out, k)
			}
		}
	}
	if st == BreadthFirst {
		next := make([]int, len(l.nodes)) // position in each leaf's list
		for len(out) < n {
			for i, ns := range l.nodes {
				for ; next[i] < len(ns) && len(out) < n; next[i]++ {
					if k := ns[next[i]]; c.isIdle(k) {
						out = append(out, k)
						next[i]++
						break
					}
				}
			}
		}
		return out
	}
	// Depth-first: the tightest single leaf, else the tightest pod, else
	// the pods with the most idle nodes.
	best := -1
	for i, f := range leafIdle {
		if f >= n && (best < 0 || f < leafIdle[best]) {
			best = i
		}
	}
	if best >= 0 {
		take(best)
		return out
	}
	byIdle := func(idle []int) func(a, b int) int {
		return func(a, b int) int {
			if c := cmp.Compare(idle[b], idle[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		}
	}
	pods := make([]int, 0, l.npods)
	bestPod := -1
	for p, f := range podIdle {
		if f >= n && (bestPod < 0 || f < podIdle[bestPod]) {
			bestPod = p
		}
		pods = append(pods, p)
	}
	if bestPod >= 0 {
		pods = []int{bestPod}
	} else {
		slices.SortFunc(pods, byIdle(podIdle))
	}
	order := make([]int, 0, len(l.nodes))
	for _, p := range pods {
		order = order[:0]
		for i := range l.nodes {
			if l.pod[i] == p && leafIdle[i] > 0 {
				order = append(order, i)
			}
		}
		slices.SortFunc(order, byIdle(leafIdle))
		for _, i := range order {
			take(i)
			if len(out) == n {
				return out
			}
		}
	}
	return out
}
