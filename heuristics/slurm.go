package heuristics

import (
	"context"
	"fmt"
	"slices"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Slurm is the best-fit allocation of Slurm's topology/tree plugin
// (select/cons_res and cons_tres "_eval_nodes_topo", select/linear
// "_job_test_topo"), the node selection a Slurm site with a
// topology.conf gets. Jobs are placed in the problem's order, each on the
// idle nodes the jobs before it left:
//
//  1. Top switch. The lowest-level switch whose subtree holds at least the
//     job's node count of idle nodes; among several at that level, the one
//     with the fewest idle nodes (best fit), then the lowest switch index.
//     Only leaves below it are used.
//  2. Leaves, one at a time, until the job has its nodes: the best leaf
//     below the top switch by the keys below.
//  3. Within a leaf, the lowest idle node ids first: all of the leaf's idle
//     nodes, or the r the job still needs.
//
// The keys of rule 2, in order, with r the nodes the job still needs:
//
//   - closeness: the level of the lowest switch a leaf shares with the
//     leaves the job already uses, lower first (none used yet: all equal);
//   - fit: the lowest level at which the leaf, or a switch above it up to
//     the top switch, holds r idle nodes, and among those the one with the
//     fewest. At the leaf level this is "the smallest leaf that holds the
//     rest"; one level up, "the leaf under the parent switch with the
//     fewest idle nodes that still holds the rest";
//   - size: among leaves that only hold r together at the same switch, the
//     larger subtree where their branches part, then the larger leaf ("else
//     the largest leaf"; Slurm's _topo_compare_switches also compares the
//     switches where two leaves' branches part);
//   - the lowest leaf switch index.
//
// Rule 1 is the top-switch rule of Slurm's select plugins up to the 23.x
// series ("Determine lowest level switch satisfying request with best
// fit"); the topology/tree plugin of later releases (eval_nodes_tree.c)
// starts from the highest-level switch and leans on its distance-based leaf
// choice (rule 2) instead.
//
// Where this simplifies Slurm: whole nodes only (no CPU, memory or GRES
// counts), no node weights, required nodes, --switches limits or
// min/max node ranges. Slurm's pairwise leaf comparison
// (_topo_choose_best_switch with the switch distance table) depends on the
// order it visits the leaves; here the keys above form a total order,
// closeness first. In a forest topology with no single tree holding the
// job, where Slurm would refuse the job, the trees' roots are taken to meet
// at a virtual switch above them. Slurm builds its switch levels from 0 at
// the leaves; model.Switch.Level starts at 1, which changes nothing.
//
// Slurm takes O(L·h) time per leaf it picks, on L leaf switches of a tree
// of height h, and ignores ctx. Incremental places the same way, keeping
// its tree between jobs, in O(h² log d) per leaf on an ordered topology
// (d children a switch).
type Slurm struct{}

var _ solver.Solver = Slurm{}

// Name returns "slurm".
func (Slurm) Name() string { return "slurm" }

// Solve places the problem's jobs one after another with Slurm's best fit.
// It looks at ctx before every job: when ctx ends first, the jobs not yet
// placed take the free nodes first-fit (leaf by leaf in index order, in
// linear time), so that the answer is always a whole feasible allocation;
// Stats.Slurm then counts them (FirstFitJobs).
func (Slurm) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	if err := checkFits("slurm", p); err != nil {
		return nil, err
	}
	w := p.Window
	tr := newTree(w)
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "tree", Solver: "slurm"}
	res.Allocations = make([]model.Allocation, 0, len(p.Jobs))
	late, leaf := 0, 0
	for _, j := range p.Jobs {
		n := w.Jobs[j].Nodes
		var nodes []int
		if late == 0 && ctx.Err() == nil {
			nodes = tr.slurmPlace(n)
		} else {
			late++
			nodes, leaf = tr.firstFit(n, leaf)
		}
		res.Allocations = append(res.Allocations, model.Allocation{Job: j, Nodes: nodes, Start: w.Time})
	}
	if late > 0 {
		res.Stats.Slurm = &solver.SlurmStats{FirstFitJobs: late}
	}
	res.Objective = solver.Objective(w, res.Allocations)
	return res, nil
}

// firstFit takes n free nodes from the leaves in index order, starting at
// leaf from (the leaves before it have none left), and returns them in
// increasing id order with the leaf to start from next time.
func (tr *tree) firstFit(n, from int) ([]int, int) {
	out := make([]int, 0, n)
	var ends []int
	for rem := n; rem > 0; from++ {
		if k := min(rem, len(tr.free[from])); k > 0 {
			out = tr.takeInto(out, from, k)
			ends = append(ends, len(out))
			rem -= k
			if len(tr.free[from]) > 0 {
				break // the next job starts on this leaf
			}
		}
	}
	return sortSegments(out, ends), from
}

// checkFits rejects a problem whose jobs need more nodes than are idle.
func checkFits(name string, p *solver.Problem) error {
	need := 0
	for _, j := range p.Jobs {
		need += p.Window.Jobs[j].Nodes
	}
	if need > len(p.Window.Idle) {
		return fmt.Errorf("%s: the jobs need %d nodes, %d are idle", name, need, len(p.Window.Idle))
	}
	return nil
}

// A tree is a window's switch tree with the idle nodes the jobs placed so
// far have left: per leaf the free node ids, per switch the free count of
// its subtree. Switch -1 stands for the virtual switch above all roots.
type tree struct {
	t        *model.Topology
	parent   []int
	level    []int
	children [][]int
	// free[s] lists leaf s's free node ids, increasing; nil above leaves.
	free [][]int
	// cnt[s] is the number of free nodes below switch s.
	cnt []int
	// total is the number of free nodes in the whole tree.
	total int
	// top is the level of the virtual switch: one above the tallest tree.
	top int
	// byCnt[c] is a min-heap of the level-1 switches that had c free
	// nodes when pushed (an entry is stale when the count has changed
	// since), and upper lists the switches above level 1: topSwitch's
	// index, so that it does not scan every switch per job (10⁴ leaves
	// on a 10⁶-node layout).
	byCnt [][]int
	upper []int
	// sortBuf is sortSegmentsBuf's scratch; near and marked are
	// slurmPlace's (the switches above the leaves a job took, and which).
	sortBuf []int
	near    []bool
	marked  []int
	// fx, when set, indexes the tree for an Incremental allocator (it
	// then keeps no byCnt heaps: their stale entries would pile up over
	// a long simulation).
	fx *treeIndex
}

func newTree(w *model.Window) *tree {
	t := w.Topology
	ns := t.NumSwitches()
	tr := &tree{
		t: t, parent: make([]int, ns), level: make([]int, ns), children: make([][]int, ns),
		free: make([][]int, ns), cnt: make([]int, ns), total: len(w.Idle), top: t.Height() + 1,
	}
	for s := range ns {
		sw := t.Switch(s)
		tr.parent[s], tr.level[s], tr.children[s] = sw.Parent, sw.Level, sw.Switches
	}
	for _, id := range w.Idle {
		leaf := t.Node(id).Leaf
		tr.free[leaf] = append(tr.free[leaf], id)
		for s := leaf; s >= 0; s = tr.parent[s] {
			tr.cnt[s]++
		}
	}
	for s := range ns {
		if tr.level[s] != 1 {
			tr.upper = append(tr.upper, s)
			continue
		}
		tr.index(s)
	}
	return tr
}

// index files level-1 switch s under its current count.
func (tr *tree) index(s int) {
	if tr.fx != nil {
		return
	}
	c := tr.cnt[s]
	if c <= 0 {
		return
	}
	for len(tr.byCnt) <= c {
		tr.byCnt = append(tr.byCnt, nil)
	}
	h := append(tr.byCnt[c], s)
	for i := len(h) - 1; i > 0; { // sift up
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	tr.byCnt[c] = h
}

// lowestWith returns the lowest-index level-1 switch with exactly c free
// nodes, or -1, dropping stale heap entries on the way.
func (tr *tree) lowestWith(c int) int {
	if c >= len(tr.byCnt) {
		return -1
	}
	h := tr.byCnt[c]
	for len(h) > 0 {
		if s := h[0]; tr.cnt[s] == c {
			tr.byCnt[c] = h
			return s
		}
		// pop the stale minimum
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && h[l] < h[m] {
				m = l
			}
			if r < len(h) && h[r] < h[m] {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	tr.byCnt[c] = h
	return -1
}

// levelOf returns the level of switch s, or of the virtual switch for -1.
func (tr *tree) levelOf(s int) int {
	if s < 0 {
		return tr.top
	}
	return tr.level[s]
}

// take removes the k lowest free node ids of leaf and returns them.
func (tr *tree) take(leaf, k int) []int {
	if tr.fx != nil {
		return tr.takeInto(nil, leaf, k)
	}
	out := slices.Clone(tr.free[leaf][:k])
	tr.free[leaf] = tr.free[leaf][k:]
	tr.count(leaf, -k)
	return out
}

// takeInto appends the k lowest free node ids of leaf to out and removes
// them, keeping the leaf's list where it is (an indexed tree gives nodes
// back: the list never outgrows its leaf).
func (tr *tree) takeInto(out []int, leaf, k int) []int {
	f := tr.free[leaf]
	out = append(out, f[:k]...)
	tr.free[leaf] = f[:copy(f, f[k:])]
	tr.count(leaf, -k)
	return out
}

// scratch returns tr.sortBuf with room for n ids.
func (tr *tree) scratch(n int) []int {
	if cap(tr.sortBuf) < n {
		tr.sortBuf = make([]int, n)
	}
	return tr.sortBuf[:n]
}

// count adds delta to the free counts on leaf's path and to the total.
func (tr *tree) count(leaf, delta int) {
	for s := leaf; s >= 0; s = tr.parent[s] {
		tr.cnt[s] += delta
		if tr.level[s] == 1 {
			tr.index(s)
		}
	}
	tr.total += delta
	if tr.fx != nil {
		tr.fx.moved(leaf, delta)
	}
}

// give returns ids (free no more, all of them on leaf) to leaf's free
// nodes.
func (tr *tree) give(leaf int, ids []int) {
	tr.putBack(leaf, ids)
	tr.count(leaf, len(ids))
}

// putBack is give without the counts.
func (tr *tree) putBack(leaf int, ids []int) {
	f := tr.free[leaf]
	n := len(f)
	f = append(f, ids...)
	switch {
	case !slices.IsSorted(ids):
		slices.Sort(f)
	case n > 0 && f[n-1] > ids[0]:
		// Merge the two increasing lists from the back.
		i, j := n-1, len(ids)-1
		for k := len(f) - 1; j >= 0; k-- {
			if i >= 0 && f[i] > ids[j] {
				f[k] = f[i]
				i--
			} else {
				f[k] = ids[j]
				j--
			}
		}
	}
	tr.free[leaf] = f
}

// topSwitch returns the lowest-level switch with at least n free nodes
// below it, the one with the fewest among several at that level, then the
// lowest index; -1 (the virtual switch) when no tree holds n.
func (tr *tree) topSwitch(n int) int {
	if tr.fx != nil && n > 0 {
		return tr.fx.topSwitch(n)
	}
	if n <= 0 {
		return tr.topSwitchScan(n)
	}
	// Level 1 first: the fewest free nodes at least n, then the lowest
	// index — by count, from the index.
	for c := max(n, 1); c < len(tr.byCnt); c++ {
		if s := tr.lowestWith(c); s >= 0 {
			return s
		}
	}
	best := -1
	for _, s := range tr.upper {
		c := tr.cnt[s]
		if c < n {
			continue
		}
		if best < 0 || tr.level[s] < tr.level[best] || (tr.level[s] == tr.level[best] && c < tr.cnt[best]) {
			best = s
		}
	}
	return best
}

// topSwitchScan is topSwitch by a scan of every switch: the reference the
// tests hold the index to.
func (tr *tree) topSwitchScan(n int) int {
	best := -1
	for s, c := range tr.cnt {
		if c < n {
			continue
		}
		if best < 0 || tr.level[s] < tr.level[best] || (tr.level[s] == tr.level[best] && c < tr.cnt[best]) {
			best = s
		}
	}
	return best
}

// leavesUnder appends the leaf switches below s (all leaves for -1) that
// have free nodes, in increasing index order.
func (tr *tree) leavesUnder(s int) []int {
	var out []int
	if s < 0 {
		for l, f := range tr.free {
			if len(f) > 0 {
				out = append(out, l)
			}
		}
		return out
	}
	var walk func(s int)
	walk = func(s int) {
		if len(tr.children[s]) == 0 {
			if len(tr.free[s]) > 0 {
				out = append(out, s)
			}
			return
		}
		for _, c := range tr.children[s] {
			walk(c)
		}
	}
	walk(s)
	slices.Sort(out)
	return out
}

// A slurmKey ranks a candidate leaf for Slurm's next pick; see Slurm.
type slurmKey struct {
	leaf int
	// dist is the level of the lowest switch shared with a used leaf.
	dist int
	// fitLevel and fitCnt describe the lowest switch on the leaf's path
	// (the leaf included) that still holds the remaining need.
	fitLevel, fitCnt int
	// sizes are the free counts of the switches strictly below that switch
	// down to the leaf, top first.
	sizes []int
}

// less reports whether leaf a is a better pick than leaf b.
func (a *slurmKey) less(b *slurmKey) bool {
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	if a.fitLevel != b.fitLevel {
		return a.fitLevel < b.fitLevel
	}
	if a.fitCnt != b.fitCnt {
		return a.fitCnt < b.fitCnt
	}
	for i := 0; i < len(a.sizes) && i < len(b.sizes); i++ {
		if a.sizes[i] != b.sizes[i] {
			return a.sizes[i] > b.sizes[i]
		}
	}
	if len(a.sizes) != len(b.sizes) {
		return len(a.sizes) < len(b.sizes)
	}
	return a.leaf < b.leaf
}

// slurmKeyOf fills k for leaf with rem nodes still needed. near marks the
// switches above the leaves the job already uses; used says whether there
// are any.
func (tr *tree) slurmKeyOf(k *slurmKey, leaf, rem int, near []bool, used bool) {
	k.leaf, k.sizes = leaf, k.sizes[:0]
	k.dist = 0
	if used {
		k.dist = tr.top
		for s := leaf; s >= 0; s = tr.parent[s] {
			if near[s] {
				k.dist = tr.level[s]
				break
			}
		}
	}
	// Climb until a switch holds rem. Below the top switch this stops at
	// the top switch at the latest, which held the whole job at its start.
	s := leaf
	for {
		if tr.cnt[s] >= rem {
			k.fitLevel, k.fitCnt = tr.level[s], tr.cnt[s]
			break
		}
		k.sizes = append(k.sizes, tr.cnt[s])
		if tr.parent[s] < 0 {
			k.fitLevel, k.fitCnt = tr.top, tr.total
			break
		}
		s = tr.parent[s]
	}
	slices.Reverse(k.sizes)
}

// slurmPlace takes n nodes for one job by Slurm's rules and returns them in
// increasing id order.
func (tr *tree) slurmPlace(n int) []int {
	if tr.fx != nil {
		return tr.slurmPlaceIndexed(n)
	}
	top := tr.topSwitch(n)
	cands := tr.leavesUnder(top)
	// near is kept between jobs and cleared by what was marked: a fresh
	// one a job (a flag per switch) was most of the time on 10⁴ switches.
	if len(tr.near) != len(tr.cnt) {
		tr.near = make([]bool, len(tr.cnt))
	}
	near := tr.near
	defer func() {
		for _, s := range tr.marked {
			near[s] = false
		}
		tr.marked = tr.marked[:0]
	}()
	used := false
	out := make([]int, 0, n)
	var best, cur slurmKey
	for rem := n; rem > 0; {
		pick := -1
		for _, l := range cands {
			if len(tr.free[l]) == 0 {
				continue
			}
			tr.slurmKeyOf(&cur, l, rem, near, used)
			if pick < 0 || cur.less(&best) {
				pick = l
				best, cur = cur, best
			}
		}
		k := min(rem, len(tr.free[pick]))
		out = append(out, tr.take(pick, k)...)
		rem -= k
		for s := pick; s >= 0 && !near[s]; s = tr.parent[s] {
			near[s] = true
			tr.marked = append(tr.marked, s)
		}
		used = true
	}
	slices.Sort(out)
	return out
}

// slurmPlaceIndexed is slurmPlace on an indexed tree: the same picks,
// each found in O(h² log d) (h levels, d children a switch) rather than by
// ranking every candidate leaf. The leaves the job may take next are
// those below the lowest switch that is above a leaf it took and still
// has free nodes (the top switch before the first pick): they are all
// equally close, and closer than any other.
func (tr *tree) slurmPlaceIndexed(n int) []int {
	x := tr.fx
	region := x.topSwitch(n)
	if region < 0 {
		region = x.v
	}
	out := make([]int, 0, n)
	var ends []int
	for rem := n; rem > 0; {
		pick := x.slurmPick(region, rem)
		k := min(rem, len(tr.free[pick]))
		out = tr.takeInto(out, pick, k)
		ends = append(ends, len(out))
		rem -= k
		for region = pick; region >= 0 && x.cnt(region) == 0; region = x.up[region] {
		}
	}
	return sortSegmentsBuf(out, ends, tr.scratch(n))
}

// sortSegments returns ids in increasing order, ids being segments that
// each increase (segment i ends at ends[i]): the segments in the order of
// their first ids, which is the answer when they do not interleave (the
// leaves of a generated layout hold runs of ids), else a sort.
func sortSegments(ids, ends []int) []int {
	return sortSegmentsBuf(ids, ends, nil)
}

// sortSegmentsBuf is sortSegments, sorting ids in place through buf (at
// least len(ids) long) when given.
func sortSegmentsBuf(ids, ends, buf []int) []int {
	if len(ends) < 2 {
		return ids
	}
	// Each segment's first id above its number, sorted as integers.
	keys := make([]uint64, len(ends))
	lo := 0
	for i, e := range ends {
		if uint64(ids[lo]) >= 1<<32 {
			slices.Sort(ids)
			return ids
		}
		keys[i] = uint64(ids[lo])<<32 | uint64(i)
		lo = e
	}
	slices.Sort(keys)
	var out []int
	if buf != nil {
		out = buf[:0]
	} else {
		out = make([]int, 0, len(ids))
	}
	for _, k := range keys {
		i := int(k & (1<<32 - 1))
		lo := 0
		if i > 0 {
			lo = ends[i-1]
		}
		out = append(out, ids[lo:ends[i]]...)
	}
	if !slices.IsSorted(out) {
		slices.Sort(out)
	}
	if buf != nil {
		copy(ids, out)
		return ids
	}
	return out
}
