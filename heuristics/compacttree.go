package heuristics

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/optsched/optsched/model"
)

// treeShape picks k of the nodes for which ok holds so that the most
// node pairs share a switch, counted over the switches for which count
// holds: Σ over them of n(n−1)/2, n the picked nodes under the switch.
// Counted over every switch (LeavesTree), this is the least CH cost of
// k nodes on a tree whose leaves are all at the same depth: a pair's
// hops fall by 2 for each switch it shares below its top one, so the
// cost is a constant less 2c/k times that sum (model.CostModel, lan-code
// and lan-paper alike). It returns the sum and the nodes (in id order),
// or -1 and nil when fewer than k nodes are ok. A dynamic programme over
// the tree: O(N × k) per switch level, N the nodes.
func treeShape(t *model.Topology, ok func(id int) bool, k int, count func(s int) bool) (int, []int) {
	const none = -1 << 40
	// An item is a child of a switch: a node (table [0] or [0, 0]) or a
	// switch (its table, memoised).
	type item struct {
		node, sw int
	}
	tabs := make([][]int, t.NumSwitches())
	// prefix[s][i] is the best sum over the first i items of s; items[s]
	// the items.
	prefix := make([][][]int, t.NumSwitches())
	items := make([][]item, t.NumSwitches())
	var tab func(s int) []int
	itemTab := func(it item) []int {
		if it.sw >= 0 {
			return tab(it.sw)
		}
		if ok(it.node) {
			return []int{0, 0}
		}
		return []int{0}
	}
	conv := func(g, f []int) []int {
		out := make([]int, min(len(g)+len(f)-1, k+1))
		for j := range out {
			out[j] = none
			for a := max(0, j-len(g)+1); a < len(f) && a <= j; a++ {
				if g[j-a] > none && f[a] > none {
					out[j] = max(out[j], g[j-a]+f[a])
				}
			}
		}
		return out
	}
	tab = func(s int) []int {
		if tabs[s] != nil {
			return tabs[s]
		}
		sw := t.Switch(s)
		for _, c := range sw.Switches {
			items[s] = append(items[s], item{-1, c})
		}
		for _, id := range sw.Nodes {
			items[s] = append(items[s], item{id, -1})
		}
		g := []int{0}
		prefix[s] = [][]int{g}
		for _, it := range items[s] {
			g = conv(g, itemTab(it))
			prefix[s] = append(prefix[s], g)
		}
		out := slices.Clone(g)
		if count(s) {
			for j := range out {
				if out[j] > none {
					out[j] += j * (j - 1) / 2
				}
			}
		}
		tabs[s] = out
		return out
	}
	// The roots, under a virtual top that counts no pairs.
	var roots []item
	for s := range t.NumSwitches() {
		if t.Switch(s).Parent < 0 {
			roots = append(roots, item{-1, s})
		}
	}
	g := []int{0}
	top := [][]int{g}
	for _, it := range roots {
		g = conv(g, itemTab(it))
		top = append(top, g)
	}
	if k >= len(g) || g[k] <= none {
		return -1, nil
	}
	var nodes []int
	// take picks j nodes from items its (with prefix tables pre) whose
	// best sum is pre[len(its)][j].
	var take func(its []item, pre [][]int, j int)
	var takeItem func(it item, j int)
	take = func(its []item, pre [][]int, j int) {
		for i := len(its) - 1; i >= 0 && j > 0; i-- {
			f := itemTab(its[i])
			want := pre[i+1][j]
			for a := min(j, len(f)-1); a >= 0; a-- {
				if j-a < len(pre[i]) && pre[i][j-a] > none && f[a] > none && pre[i][j-a]+f[a] == want {
					takeItem(its[i], a)
					j -= a
					break
				}
			}
		}
	}
	takeItem = func(it item, j int) {
		switch {
		case j == 0:
		case it.sw < 0:
			nodes = append(nodes, it.node)
		default:
			take(items[it.sw], prefix[it.sw], j)
		}
	}
	take(roots, top, k)
	slices.Sort(nodes)
	return g[k], nodes
}

// shapeCount is which switches cw.Leaves counts the pairs under, for
// LeavesTree (every switch) and LeavesTop (the top-level switches short
// of the whole tree: the roots when there are several, as on PBS's
// tiers, where the quads are the roots; the root's children when one
// root holds every node).
func shapeCount(t *model.Topology, s LeafShape) func(int) bool {
	if s != LeavesTop {
		return func(int) bool { return true }
	}
	roots := 0
	for sw := range t.NumSwitches() {
		if t.Switch(sw).Parent < 0 {
			roots++
		}
	}
	return func(sw int) bool {
		p := t.Switch(sw).Parent
		if roots > 1 {
			return p < 0
		}
		return p >= 0 && t.Switch(p).Parent < 0
	}
}

// decideTree is DecideCompactWait for a job that no switch short of the
// whole tree holds, under cw.Leaves = LeavesTree or LeavesTop: it fits
// now when the free nodes give it as many node pairs under a common
// switch (treeShape, over the switches the shape counts) as the nodes
// that will ever be empty by the running jobs' ends do, and otherwise
// waits, within limit, for the soonest time the nodes' EmptyAt gives it
// that many. Its Switch is the lowest switch above the nodes it takes or
// waits for, and Nodes (when waiting) those nodes.
func decideTree(cw CompactWait, in CompactInput, d CompactDecision, limit int64) CompactDecision {
	t := in.Topo
	count := shapeCount(t, cw.Leaves)
	free := func(id int) bool { return id < len(in.Free) && in.Free[id] }
	empty := func(id int) int64 {
		if id < len(in.EmptyAt) {
			return in.EmptyAt[id]
		}
		return CompactNever
	}
	type event struct {
		at int64
		id int
	}
	var events []event
	ever := make([]bool, t.NumNodes())
	for id := range t.NumNodes() {
		switch e := empty(id); {
		case free(id):
			ever[id] = true
		case e != CompactNever:
			ever[id] = true
			events = append(events, event{max(e, in.Now), id})
		}
	}
	want, _ := treeShape(t, func(id int) bool { return ever[id] }, in.Nodes, count)
	if want < 0 {
		d.Reason = fmt.Sprintf("fewer than %d nodes will ever be empty for it by the running jobs' ends: placed as it fits", in.Nodes)
		return d
	}
	avail := make([]bool, t.NumNodes())
	for id := range avail {
		avail[id] = free(id)
	}
	if got, nodes := treeShape(t, func(id int) bool { return avail[id] }, in.Nodes, count); got >= want {
		d.Fit, d.FitNodes = nodesTop(t, nodes), nodes
		d.Reason = fmt.Sprintf("fits now in its %s shape (%d node pairs under a common switch, the most the nodes give)", cw.Leaves, got)
		return d
	}
	if d.Waited >= d.Bound {
		d.Reason = fmt.Sprintf("has waited %s, its compact-wait bound %s: placed as it fits now, not in its %s shape", secs(d.Waited), secs(d.Bound), cw.Leaves)
		return d
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	var got []int
	at := int64(CompactNever)
	for i := 0; i < len(events); {
		j := i
		for ; j < len(events) && events[j].at == events[i].at; j++ {
			avail[events[j].id] = true
		}
		if p, nodes := treeShape(t, func(id int) bool { return avail[id] }, in.Nodes, count); p >= want {
			got, at = nodes, events[i].at
			break
		}
		i = j
	}
	switch {
	case got == nil:
		d.Reason = fmt.Sprintf("its %s shape (%d node pairs under a common switch) will never be empty by the running jobs' ends: placed as it fits now", cw.Leaves, want)
		return d
	case at > limit && !cw.Blind:
		d.Reason = fmt.Sprintf("its %s shape will be empty in %s, after its compact-wait bound %s: placed as it fits now", cw.Leaves, secs(at-in.Now), secs(d.Bound))
		return d
	}
	if lb := cw.leavesBound(in.Now, in.Walltime); at > lb {
		d.Reason = fmt.Sprintf("its %s shape will be empty in %s, more than --compact-wait-leaves-fraction %g × its walltime %s: placed as it fits now",
			cw.Leaves, secs(at-in.Now), cw.LeavesFraction, secs(in.Walltime))
		return d
	}
	d.Wait, d.Switch, d.At, d.Nodes = true, nodesTop(t, got), at, got
	d.Reason = fmt.Sprintf("waiting up to %s more (compact-wait bound %s, waited %s) for its %s shape: %d nodes with %d pairs under a common switch will be empty in %s by the running jobs' %s",
		secs(max(limit-in.Now, 0)), secs(d.Bound), secs(d.Waited), cw.Leaves, in.Nodes, want, secs(max(at-in.Now, 0)), cw.basis())
	if at > limit {
		d.Reason += ", after the bound (--compact-wait-mode blind: it waits out its bound all the same)"
	}
	return d
}

// nodesTop is the lowest switch above every node of nodes (leavesTop of
// their leaves).
func nodesTop(t *model.Topology, nodes []int) int {
	ts := make([]shapeTake, 0, len(nodes))
	for _, id := range nodes {
		ts = append(ts, shapeTake{leaf: t.Node(id).Leaf, n: 1})
	}
	return leavesTop(t, ts)
}
