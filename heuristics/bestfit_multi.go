package heuristics

import (
	"slices"

	"github.com/optsched/optsched/model"
)

// BestFitMulti moves the multi-node whole-node starts of a solved window,
// each onto nodes of the same CH cost inside the fullest switch that
// holds them, so that emptier switches stay whole for later jobs. The
// window's solve minimises this window's CH cost and is indifferent
// between placements of equal cost, whose first it takes in node order;
// PBS's placement sets (and Slurm's tree best fit) take the smallest set
// that fits instead, which leaves whole quads for the 3- and 4-node jobs
// that come later. Measured on the PBS test server, that is where
// optsched's CH cost was above pbs_sched's with placement sets. Both the
// PBS and the Slurm planners apply it (and BestFitSingles) to their
// whole-node windows.
//
// The jobs are placed again from the largest, over the idle nodes that
// no single-node start holds. Each considers, for every switch with
// enough free nodes, the nodes a recursive best fit takes below it
// (the child that holds them all with the fewest free nodes; else the
// fullest children whole and the remainder by best fit), and takes the
// one of exactly its solved cost in the lowest and then fullest switch
// (then the fullest parent, up the tree, then the first switch). When a
// job finds no such set (its solved nodes spanned roots, say), every
// multi-node job keeps its solved nodes. Each job's cost is unchanged,
// so the window's objective is too.
func BestFitMulti(w *model.Window, allocs []model.Allocation) {
	t := w.Topology
	var multi []int
	held := make(map[int]bool) // by the single-node starts
	for i, a := range allocs {
		if len(a.Nodes) >= 2 {
			multi = append(multi, i)
		} else {
			for _, n := range a.Nodes {
				held[n] = true
			}
		}
	}
	if len(multi) == 0 {
		return
	}
	free := make(map[int]bool)
	count := make([]int, t.NumSwitches())
	for _, n := range w.Idle {
		if held[n] || free[n] {
			continue
		}
		free[n] = true
		for _, s := range t.Ancestors(n) {
			count[s]++
		}
	}
	// The multi-node starts' nodes are free to place again.
	take := func(n int) {
		free[n] = false
		for _, s := range t.Ancestors(n) {
			count[s]--
		}
	}
	// pick returns k free nodes below switch s by best fit.
	var pick func(s, k int, out []int) []int
	pick = func(s, k int, out []int) []int {
		sw := t.Switch(s)
		if len(sw.Switches) == 0 {
			for _, n := range sw.Nodes {
				if k == 0 {
					break
				}
				if free[n] {
					out = append(out, n)
					k--
				}
			}
			return out
		}
		best := -1
		for _, c := range sw.Switches {
			if count[c] >= k && (best < 0 || count[c] < count[best]) {
				best = c
			}
		}
		if best >= 0 {
			return pick(best, k, out)
		}
		cs := slices.Clone(sw.Switches)
		slices.SortStableFunc(cs, func(a, b int) int { return count[b] - count[a] })
		for i, c := range cs {
			if k == 0 || count[c] == 0 {
				break
			}
			if count[c] <= k {
				k -= count[c]
				out = pick(c, count[c], out)
				continue
			}
			// The remainder by best fit among the children left.
			fit := c
			for _, d := range cs[i:] {
				if count[d] >= k && count[d] < count[fit] {
					fit = d
				}
			}
			return pick(fit, k, out)
		}
		return out
	}
	// less orders two candidate switches: lower, then fuller, then the
	// fuller parent, and so on up.
	less := func(a, b int) bool {
		for a >= 0 && b >= 0 {
			if la, lb := t.Switch(a).Level, t.Switch(b).Level; la != lb {
				return la < lb
			}
			if count[a] != count[b] {
				return count[a] < count[b]
			}
			a, b = t.Switch(a).Parent, t.Switch(b).Parent
		}
		return false
	}
	slices.SortStableFunc(multi, func(a, b int) int { return len(allocs[b].Nodes) - len(allocs[a].Nodes) })
	// The switches from the leaves up: a job's search stops at the first
	// level above the one where it found a set.
	byLevel := make([]int, t.NumSwitches())
	for s := range byLevel {
		byLevel[s] = s
	}
	slices.SortStableFunc(byLevel, func(a, b int) int { return t.Switch(a).Level - t.Switch(b).Level })
	placed := make([][]int, len(allocs))
	for _, i := range multi {
		k := len(allocs[i].Nodes)
		want := w.Cost.Cost(t, allocs[i].Nodes)
		var best []int
		bestAt := -1
		for _, s := range byLevel {
			if bestAt >= 0 && t.Switch(s).Level > t.Switch(bestAt).Level {
				break // no higher switch comes before a lower one
			}
			if count[s] < k || (bestAt >= 0 && !less(s, bestAt)) {
				continue
			}
			nodes := pick(s, k, nil)
			if len(nodes) != k || w.Cost.Cost(t, nodes) != want {
				continue
			}
			best, bestAt = nodes, s
		}
		if best == nil {
			return // allocs are untouched so far
		}
		slices.Sort(best)
		placed[i] = best
		for _, n := range best {
			take(n)
		}
	}
	for _, i := range multi {
		allocs[i].Nodes = placed[i]
	}
}
