package heuristics

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
)

// shapeTake is one leaf of a leaf-shape placement and how many of the
// job's nodes it takes.
type shapeTake struct{ leaf, n int }

// leafShape places k nodes on leaves with cnt[l] nodes available: the
// leaves with the most first, each taken whole while the job needs at
// least its count; the rest on the leaf of the fewest available nodes
// that holds it (best fit, as Slurm's tree takes), among those not
// taken. It returns the takes and the node pairs within a leaf (Σ n(n−1)/2,
// the larger the cheaper: on one level of leaves the CH cost falls as it
// grows, and taking the fullest leaves first maximises it), or nil when
// fewer than k are available.
func leafShape(cnt []int, k int) ([]shapeTake, int) {
	var ls []int
	total := 0
	for l, c := range cnt {
		if c > 0 {
			ls = append(ls, l)
			total += c
		}
	}
	if total < k {
		return nil, 0
	}
	slices.SortStableFunc(ls, func(a, b int) int { return cmp.Compare(cnt[b], cnt[a]) })
	var out []shapeTake
	pairs := 0
	for i, r := 0, k; r > 0; i++ {
		l := ls[i]
		if cnt[l] > r {
			// The rest fits this leaf: best fit among it and the later
			// (no fuller) leaves.
			for _, m := range ls[i+1:] {
				if cnt[m] >= r && cnt[m] < cnt[l] {
					l = m
				}
			}
			out = append(out, shapeTake{l, r})
			pairs += r * (r - 1) / 2
			break
		}
		out = append(out, shapeTake{l, cnt[l]})
		pairs += cnt[l] * (cnt[l] - 1) / 2
		r -= cnt[l]
	}
	return out, pairs
}

// decideLeaves is DecideCompactWait for a job that no switch short of
// the whole tree holds, under cw.Leaves (LeavesBestFewest: LeavesBest's
// decision when it fits now or waits, else LeavesFewest's): it fits now when the free nodes
// give it the wanted shape on the leaves (CompactWait.Leaves), and
// otherwise waits, within limit, for the soonest time the nodes' EmptyAt
// gives it that shape. Its Switch is the lowest switch above the leaves
// it takes or waits for, and Nodes (when waiting) all their nodes.
func decideLeaves(cw CompactWait, in CompactInput, d CompactDecision, limit int64) CompactDecision {
	if cw.Leaves == LeavesBestFewest {
		b, f := cw, cw
		b.Leaves, f.Leaves = LeavesBest, LeavesFewest
		if db := decideLeaves(b, in, d, limit); db.Wait || db.Fit >= 0 {
			return db
		}
		return decideLeaves(f, in, d, limit)
	}
	t := in.Topo
	free := func(id int) bool { return id < len(in.Free) && in.Free[id] }
	empty := func(id int) int64 {
		if id < len(in.EmptyAt) {
			return in.EmptyAt[id]
		}
		return CompactNever
	}
	size := make([]int, t.NumSwitches())
	avail := make([]int, t.NumSwitches())
	type event struct {
		at   int64
		leaf int
	}
	var events []event
	for id := range t.NumNodes() {
		l := t.Node(id).Leaf
		switch e := empty(id); {
		case free(id):
			size[l]++
			avail[l]++
		case e != CompactNever:
			size[l]++
			events = append(events, event{max(e, in.Now), l})
		}
	}
	want, wantPairs := leafShape(size, in.Nodes)
	if want == nil {
		d.Reason = fmt.Sprintf("fewer than %d nodes will ever be empty for it by the running jobs' ends: placed as it fits", in.Nodes)
		return d
	}
	good := func(cnt []int) ([]shapeTake, bool) {
		got, pairs := leafShape(cnt, in.Nodes)
		switch {
		case got == nil:
			return nil, false
		case cw.Leaves == LeavesFewest:
			return got, len(got) <= len(want)
		default:
			return got, pairs >= wantPairs
		}
	}
	shape := func(ts []shapeTake) string {
		var parts []string
		for _, x := range ts {
			parts = append(parts, fmt.Sprintf("%d on %s", x.n, t.Switch(x.leaf).Name))
		}
		return strings.Join(parts, " + ")
	}
	if got, ok := good(avail); ok {
		d.Fit = leavesTop(t, got)
		for _, x := range got {
			n := 0
			for _, id := range t.Switch(x.leaf).Nodes {
				if free(id) && n < x.n {
					d.FitNodes = append(d.FitNodes, id)
					n++
				}
			}
		}
		d.Reason = fmt.Sprintf("fits now in its %s shape on the leaves (%s)", cw.Leaves, shape(got))
		return d
	}
	if d.Waited >= d.Bound {
		d.Reason = fmt.Sprintf("has waited %s, its compact-wait bound %s: placed as it fits now, not in its %s shape on the leaves", secs(d.Waited), secs(d.Bound), cw.Leaves)
		return d
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	var got []shapeTake
	at := int64(CompactNever)
	for i := 0; i < len(events); {
		j := i
		for ; j < len(events) && events[j].at == events[i].at; j++ {
			avail[events[j].leaf]++
		}
		if g, ok := good(avail); ok {
			got, at = g, events[i].at
			break
		}
		i = j
	}
	switch {
	case got == nil:
		d.Reason = fmt.Sprintf("its %s shape on the leaves (%s) will never be empty by the running jobs' ends: placed as it fits now", cw.Leaves, shape(want))
		return d
	case at > limit && !cw.Blind:
		d.Reason = fmt.Sprintf("its %s shape on the leaves (%s) will be empty in %s, after its compact-wait bound %s: placed as it fits now",
			cw.Leaves, shape(got), secs(at-in.Now), secs(d.Bound))
		return d
	}
	if lb := cw.leavesBound(in.Now, in.Walltime); at > lb {
		d.Reason = fmt.Sprintf("its %s shape on the leaves (%s) will be empty in %s, more than --compact-wait-leaves-fraction %g × its walltime %s: placed as it fits now",
			cw.Leaves, shape(got), secs(at-in.Now), cw.LeavesFraction, secs(in.Walltime))
		return d
	}
	d.Wait, d.Switch, d.At = true, leavesTop(t, got), at
	for _, x := range got {
		d.Nodes = append(d.Nodes, t.Switch(x.leaf).Nodes...)
	}
	slices.Sort(d.Nodes)
	d.Reason = fmt.Sprintf("waiting up to %s more (compact-wait bound %s, waited %s) for its %s shape on the leaves: its %d nodes as %s will be empty in %s by the running jobs' %s",
		secs(max(limit-in.Now, 0)), secs(d.Bound), secs(d.Waited), cw.Leaves, in.Nodes, shape(got), secs(max(at-in.Now, 0)), cw.basis())
	if at > limit {
		d.Reason += ", after the bound (--compact-wait-mode blind: it waits out its bound all the same)"
	}
	return d
}

// leavesTop is the lowest switch above every leaf of ts (a leaf itself
// when there is one; the highest root reached when the leaves are in
// different trees).
func leavesTop(t *model.Topology, ts []shapeTake) int {
	top := ts[0].leaf
	for _, x := range ts[1:] {
		a, b := top, x.leaf
		for a != b {
			switch la, lb := t.Switch(a).Level, t.Switch(b).Level; {
			case la <= lb && t.Switch(a).Parent >= 0:
				a = t.Switch(a).Parent
			case t.Switch(b).Parent >= 0:
				b = t.Switch(b).Parent
			default:
				// Different trees: the higher root.
				if la > lb {
					b = a
				} else {
					a = b
				}
			}
		}
		top = a
	}
	return top
}
