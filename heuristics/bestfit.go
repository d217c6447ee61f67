package heuristics

import (
	"slices"

	"github.com/optsched/optsched/model"
)

// BestFitSingles moves the single-node whole-node starts of a solved
// window onto the idle nodes that leave the free nodes least scattered:
// each, in turn, takes the node among those the multi-node starts left
// whose leaf switch has the fewest such nodes, then whose parent has the
// fewest, and so on up (Slurm's best fit), then the lowest id. A job on
// one node has the same CH cost on any node, so the window's objective
// is unchanged, but the empty switches stay whole for the multi-node
// jobs of later cycles: the solve minimises this window's cost and is
// indifferent to where a single-node job goes. Nothing moves under a
// cost model that prices single nodes differently.
func BestFitSingles(w *model.Window, allocs []model.Allocation) {
	var singles []int
	taken := make(map[int]bool)
	for i, a := range allocs {
		switch {
		case len(a.Nodes) == 1:
			singles = append(singles, i)
		default:
			for _, n := range a.Nodes {
				taken[n] = true
			}
		}
	}
	if len(singles) == 0 {
		return
	}
	one := w.Cost.Cost(w.Topology, []int{allocs[singles[0]].Nodes[0]})
	var pool []int
	count := make(map[int32]int)
	for _, n := range w.Idle {
		if taken[n] {
			continue
		}
		if w.Cost.Cost(w.Topology, []int{n}) != one {
			return
		}
		pool = append(pool, n)
		for _, s := range w.Topology.Ancestors(n) {
			count[s]++
		}
	}
	// better reports whether node a leaves the free nodes less scattered
	// than node b.
	better := func(a, b int) bool {
		sa, sb := w.Topology.Ancestors(a), w.Topology.Ancestors(b)
		for l := range min(len(sa), len(sb)) {
			if ca, cb := count[sa[l]], count[sb[l]]; ca != cb {
				return ca < cb
			}
		}
		return a < b
	}
	for _, i := range singles {
		a := &allocs[i]
		old := a.Nodes[0]
		best := -1
		for k, n := range pool {
			if best < 0 || better(n, pool[best]) {
				best = k
			}
		}
		n := pool[best]
		if n != old {
			a.Nodes = []int{n}
		}
		pool = slices.Delete(pool, best, best+1)
		for _, s := range w.Topology.Ancestors(n) {
			count[s]--
		}
	}
}
