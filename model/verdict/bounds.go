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
	return newBounder(w).bound(n)
}

// A bounder holds what JobLowerBound needs of a window's idle nodes,
// computed once for every job of the window: the prefix sums of their
// depths d(a), smallest first, and per switch depth the idle counts of
// the switches, largest first.
type bounder struct {
	w       *model.Window
	sumD    []int64 // sumD[k]: the k smallest depths added
	byDepth [][]int
}

func newBounder(w *model.Window) *bounder {
	t := w.Topology
	depthOf := make(map[int32]int)
	idleBelow := make(map[int32]int)
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
	b := &bounder{w: w, sumD: make([]int64, len(ds)+1)}
	for i, d := range ds {
		b.sumD[i+1] = b.sumD[i] + int64(d)
	}
	for s, c := range idleBelow {
		d := depthOf[s]
		for len(b.byDepth) <= d {
			b.byDepth = append(b.byDepth, nil)
		}
		b.byDepth[d] = append(b.byDepth[d], c)
	}
	for _, cs := range b.byDepth {
		slices.SortFunc(cs, func(x, y int) int { return y - x })
	}
	return b
}

// bound is JobLowerBound(b.w, n).
func (b *bounder) bound(n int) int64 {
	if n <= 1 {
		return 1
	}
	if n > len(b.w.Idle) {
		return 0 // the job cannot start: no bound to give
	}
	var pairs int64
	for _, cs := range b.byDepth {
		left := n
		for _, c := range cs {
			if left == 0 {
				break
			}
			k := int64(min(c, left))
			pairs += k * (k - 1) / 2
			left -= int(k)
		}
	}
	hops := int64(n-1)*b.sumD[n] - 2*pairs
	return b.w.Cost.FromHops(n, hops)
}

// placementBudget bounds the node prices BestPlacement computes (each
// O(height)), so that judging an answer on a large window stays cheap.
const placementBudget = 3_000_000

// BestPlacement returns the least total CH cost (under w.Cost) of the
// placements of jobs (indices into w.Jobs, whose node counts sum to at
// most the idle nodes) that it tries, all made of runs of the idle
// sequence — the blocks D(i, n) of [Lan23] §IV-A, feasible in every
// whole-node encoding — in three orders (as given, largest first,
// smallest first): each job in turn on its cheapest block that overlaps
// no block taken before (greedyBlocks), and the jobs laid one after
// another along the sequence, wrapping at its end, from evenly spaced
// starting positions; as many positions as placementBudget allows (every
// position on small windows). It is a witness, not an optimum: an answer
// claiming optimality that costs more is wrong.
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
	for _, order := range orders {
		if c, ok := greedyBlocks(w, order, placementBudget/len(orders)); ok && (best < 0 || c < best) {
			best = c
		}
	}
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

// greedyBlocks places the jobs in order, each on the cheapest block D(i,
// n) of the idle sequence that overlaps no block placed before, trying
// evenly spaced positions i, as many as budget node prices allow. ok is
// false when a job finds no free block (the blocks before it left only
// gaps too short).
func greedyBlocks(w *model.Window, order []int, budget int) (cost int64, ok bool) {
	q := len(w.Idle)
	used := make([]bool, q)
	nodes := make([]int, 0, q)
	for _, j := range order {
		n := w.Jobs[j].Nodes
		tries := min(q, max(1, budget/(len(order)*n)))
		bestAt, bestCost := -1, int64(0)
		for k := 0; k < tries; k++ {
			at := int(int64(k) * int64(q) / int64(tries))
			free := true
			for d := 0; d < n && free; d++ {
				free = !used[(at+d)%q]
			}
			if !free {
				continue
			}
			nodes = nodes[:0]
			for d := 0; d < n; d++ {
				nodes = append(nodes, w.Idle[(at+d)%q])
			}
			if c := w.Cost.Cost(w.Topology, nodes); bestAt < 0 || c < bestCost {
				bestAt, bestCost = at, c
			}
		}
		if bestAt < 0 {
			return 0, false
		}
		for d := 0; d < n; d++ {
			used[(bestAt+d)%q] = true
		}
		cost += bestCost
	}
	return cost, true
}
