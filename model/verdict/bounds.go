package verdict

import (
	"slices"

	"github.com/optsched/optsched/model"
)

// JobLowerBound returns a lower bound on the CH cost of any n of w's idle
// nodes, under w.Cost: no allocator, of any encoding, can place a job of
// n nodes for less. The sum over a window's selected multi-node jobs is a
// lower bound on the window's optimum.
//
// It follows from the identity behind Eq. (1) on a tree: for a node set
// S, Σ_{pairs} hops = (|S|−1)·Σ_{a∈S} d(a) − 2·Σ_s C(cnt_S(s), 2), with
// d(a) the links from node a to the top and cnt_S(s) the nodes of S
// below switch s. The first sum is at least that of the n idle nodes
// nearest the top; the switches at one depth hold disjoint nodes, so the
// second sum is at most, depth by depth, that of filling the switches
// with the most idle nodes first. The cost is non-decreasing in the hops,
// so pricing that least hop count bounds the cost from below. It is exact
// when the switches with the most idle nodes nest (the usual case of a
// mostly idle layout) and never above the true least cost.
func JobLowerBound(w *model.Window, n int) int64 {
	if n <= 1 {
		return 1
	}
	if n > len(w.Idle) {
		return 0 // the job cannot start: no bound to give
	}
	t := w.Topology
	depthOf := map[int32]int{}
	idleBelow := map[int32]int{}
	ds := make([]int, 0, len(w.Idle))
	for _, a := range w.Idle {
		anc := t.Ancestors(a)
		ds = append(ds, len(anc)+1)
		for k, s := range anc {
			depthOf[s] = len(anc) - 1 - k
			idleBelow[s]++
		}
	}
	slices.Sort(ds)
	var sumD int64
	for _, d := range ds[:n] {
		sumD += int64(d)
	}
	byDepth := map[int][]int{}
	for s, c := range idleBelow {
		byDepth[depthOf[s]] = append(byDepth[depthOf[s]], c)
	}
	var pairs int64
	for _, cs := range byDepth {
		slices.Sort(cs)
		left := n
		for i := len(cs) - 1; i >= 0 && left > 0; i-- {
			c := int64(min(cs[i], left))
			pairs += c * (c - 1) / 2
			left -= int(c)
		}
	}
	hops := int64(n-1)*sumD - 2*pairs
	return w.Cost.FromHops(n, hops)
}

// placementBudget bounds the node prices BestPlacement computes (each
// O(height)), so that judging an answer on a large window stays cheap.
const placementBudget = 3_000_000

// BestPlacement returns the least total CH cost (under w.Cost) of the
// placements of jobs (indices into w.Jobs, whose node counts sum to at
// most the idle nodes) that it tries: the jobs laid one after another
// along the idle sequence, wrapping at its end — runs of the idle
// sequence, the blocks D(i, n) of [Lan23] §IV-A, feasible in every
// whole-node encoding — in three orders (as given, largest first,
// smallest first) and from evenly spaced starting positions, as many as
// placementBudget allows (every position on small windows). It is a
// witness, not an optimum: an answer claiming optimality that costs more
// is wrong.
func BestPlacement(w *model.Window, jobs []int) int64 {
	q := len(w.Idle)
	total := 0
	for _, j := range jobs {
		total += w.Jobs[j].Nodes
	}
	if total > q || total == 0 {
		return 0
	}
	byDesc := slices.Clone(jobs)
	slices.SortStableFunc(byDesc, func(a, b int) int { return w.Jobs[b].Nodes - w.Jobs[a].Nodes })
	byAsc := slices.Clone(byDesc)
	slices.Reverse(byAsc)
	orders := [][]int{jobs, byDesc, byAsc}
	starts := min(q, max(1, placementBudget/(len(orders)*total)))
	best := int64(-1)
	nodes := make([]int, 0, total)
	for _, order := range orders {
		for k := 0; k < starts; k++ {
			pos := int(int64(k) * int64(q) / int64(starts))
			var cost int64
			for _, j := range order {
				nodes = nodes[:0]
				for range w.Jobs[j].Nodes {
					nodes = append(nodes, w.Idle[pos])
					pos++
					if pos == q {
						pos = 0
					}
				}
				cost += w.Cost.Cost(w.Topology, nodes)
			}
			if best < 0 || cost < best {
				best = cost
			}
		}
	}
	return best
}
