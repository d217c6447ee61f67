package model

import (
	"fmt"
	"math"
	"slices"
)

// This file holds the part of Check for the time-and-resource model of
// [Bridi16]: units allocations and reservations. Like the rest of Check,
// it is written from the definitions alone and shares no code with any
// solver, encoder or heuristic.
//
// The rules, in full:
//
//   - A job with a select statement consists of that statement's units; the
//     statement must have one chunk (count units, each needing the
//     chunk's amounts) and no string-valued resources. A job without a
//     select is Nodes whole-node units: one unit per node, each node used
//     by nothing else while the job runs.
//   - A units allocation gives every unit a node: Units[n] ≥ 1 units on
//     node n, Nodes lists exactly the keys of Units, the counts add up to
//     the job's units; place=pack puts them all on one node and
//     place=scatter at most one on each node.
//   - A node is usable when it is idle or runs a job (it is free once the
//     job ends); a node that is neither is down.
//   - Running jobs use their nodes until End: a job without a select uses
//     them whole (exclusively); with units, units × the chunk's amounts on
//     each node; with a select but without units, the whole statement on
//     each of its nodes. place=excl makes a running job exclusive.
//   - At every time, on every node on which a units allocation runs, the
//     amounts used by running jobs and by allocated jobs add up to at most
//     the node's capacity (Window.Resources; a resource a node does not
//     list has capacity 0), for every resource; a job that is exclusive
//     (place=excl, or whole-node) shares none of its nodes with another
//     job while it runs. A job runs over [Start, Start + Walltime).
//   - No allocation, of either kind, runs on a reserved node while the
//     reservation lasts.

// unitsOf returns how job j is divided into units: count units each
// needing per; whole when the job takes whole nodes (no select). bad is
// non-empty when the job cannot be a units allocation.
func unitsOf(j *Job) (count int, per Resources, whole bool, bad string) {
	if j.Select == nil {
		return j.Nodes, nil, true, ""
	}
	if len(j.Select) != 1 {
		return 0, nil, false, fmt.Sprintf("its select has %d chunks; a units allocation needs one", len(j.Select))
	}
	c := j.Select[0]
	if len(c.Labels) > 0 {
		return 0, nil, false, "its select has string-valued resources, which units allocations do not support"
	}
	return c.Count, c.Amounts, false, ""
}

// nodeUse is one job's use of one node over [from, to).
type nodeUse struct {
	from, to int64
	use      Resources // nil: nothing counted (whole-node uses are exclusive)
	excl     bool
	id       string // the job's ID, for messages (see who)
	running  bool   // a running job's use
	units    bool   // a units allocation
	alloc    bool   // an allocation (not a running job)
}

// who names u's job in messages: "job x" or "running job r".
func (u *nodeUse) who() string {
	if u.running {
		return "running job " + u.id
	}
	return "job " + u.id
}

// checkUnits checks the units allocations of allocs (see the rules above).
func checkUnits(w *Window, allocs []Allocation, add func(string, ...any)) {
	n := w.Topology.NumNodes()
	hasUnits := false
	for _, al := range allocs {
		hasUnits = hasUnits || al.Units != nil
	}
	if !hasUnits {
		return
	}
	usable := make([]bool, n)
	for _, k := range w.Idle {
		usable[k] = true
	}
	perNode := make([][]nodeUse, n)
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			usable[k] = true
			u := nodeUse{from: math.MinInt64, to: r.End, id: r.ID, running: true, excl: r.Select == nil || r.Place.Exclusive}
			switch {
			case r.Select == nil:
			case r.Units != nil && len(r.Select) == 1:
				u.use = scaled(r.Select[0].Amounts, int64(r.Units[k]))
			default:
				u.use = Resources{}
				for _, c := range r.Select {
					for res, v := range c.Amounts {
						u.use[res] += v * int64(c.Count)
					}
				}
			}
			perNode[k] = append(perNode[k], u)
		}
	}
	seen := make([]bool, len(w.Jobs))
	for _, al := range allocs {
		if al.Job < 0 || al.Job >= len(w.Jobs) || seen[al.Job] {
			continue // reported by Check
		}
		seen[al.Job] = true
		job := &w.Jobs[al.Job]
		if al.Start < w.Time || al.Start-w.Time > MaxTime {
			continue // reported by Check
		}
		end := al.Start + job.Walltime
		if al.Units == nil {
			for _, k := range al.Nodes {
				if k >= 0 && k < n {
					perNode[k] = append(perNode[k], nodeUse{from: al.Start, to: end, excl: true, id: job.ID, alloc: true})
				}
			}
			continue
		}
		count, per, whole, bad := unitsOf(job)
		if bad != "" {
			add("job %s: %s", job.ID, bad)
			continue
		}
		ok := true
		total := 0
		for k, u := range al.Units {
			if k < 0 || k >= n {
				add("job %s: units on node id %d, which is not in the topology", job.ID, k)
				ok = false
				continue
			}
			if u < 1 {
				add("job %s: %d units on node %s (want at least 1, or leave the node out)", job.ID, u, w.Topology.Name(k))
				ok = false
			}
			if whole && u > 1 {
				add("job %s: %d units on node %s, but it takes whole nodes (one unit per node)", job.ID, u, w.Topology.Name(k))
				ok = false
			}
			if job.Place.Arrangement == ArrangeScatter && u > 1 {
				add("job %s: %d units on node %s, but place=scatter allows one per node", job.ID, u, w.Topology.Name(k))
				ok = false
			}
			total += u
		}
		if total != count {
			add("job %s: got %d units, requested %d", job.ID, total, count)
			ok = false
		}
		if job.Place.Arrangement == ArrangePack && len(al.Units) > 1 {
			add("job %s: units on %d nodes, but place=pack puts them on one", job.ID, len(al.Units))
			ok = false
		}
		keys, same := unitNodes(&al)
		if !same {
			nodes := slices.Clone(al.Nodes)
			slices.Sort(nodes)
			add("job %s: nodes %v are not the nodes of its units %v", job.ID, nodes, keys)
			ok = false
		}
		if !ok {
			continue
		}
		for _, k := range keys {
			if !usable[k] {
				add("job %s: node %s is neither idle nor freed by a running job", job.ID, w.Topology.Name(k))
				continue
			}
			var use Resources
			if !whole {
				use = scaled(per, int64(al.Units[k]))
			}
			perNode[k] = append(perNode[k], nodeUse{from: al.Start, to: end, use: use, excl: whole || job.Place.Exclusive,
				id: job.ID, units: true, alloc: true})
		}
	}
	for k, uses := range perNode {
		checkNode(w, k, uses, add)
	}
}

// unitNodes returns the nodes of al's units, sorted, and whether al.Nodes
// lists exactly them (sorted, the same list). A one-node allocation (the
// common case of a pseudo-node) is read without new lists.
func unitNodes(al *Allocation) (keys []int, same bool) {
	if len(al.Nodes) == 1 && len(al.Units) == 1 {
		if _, ok := al.Units[al.Nodes[0]]; ok {
			return al.Nodes, true
		}
	}
	keys = make([]int, 0, len(al.Units))
	for k := range al.Units {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	nodes := slices.Clone(al.Nodes)
	slices.Sort(nodes)
	return keys, slices.Equal(nodes, keys)
}

// scaled returns r × f: r itself when f is 1 (the uses only read it).
func scaled(r Resources, f int64) Resources {
	if f == 1 {
		return r
	}
	out := make(Resources, len(r))
	for k, v := range r {
		out[k] = v * f
	}
	return out
}

// checkNode checks one node's uses: at the start of every allocation, the
// uses active then (from ≤ t < to) must fit the node's capacities and
// respect exclusivity, whenever a units allocation is among them (the
// whole-node rules of Check cover the rest). Usage rises only when an
// allocation starts, so these instants are the only ones to check.
//
// The amounts in use at each such instant are summed once per instant
// (a difference array over the sorted instants), not once per pair of
// uses: a node with hundreds of uses (a pseudo-node standing for a
// whole cluster) costs O(n log n), not O(n²). Exclusivity is checked
// pairwise, but only against the uses that make a pair exclusive.
func checkNode(w *Window, k int, uses []nodeUse, add func(string, ...any)) {
	hasUnits := false
	for _, u := range uses {
		hasUnits = hasUnits || u.units
	}
	if !hasUnits {
		return
	}
	name := w.Topology.Name(k)
	var capacity Resources
	if w.Resources != nil {
		capacity = w.Resources[k]
	}
	// The resources any use names, sorted.
	var names []string
	for _, u := range uses {
		for res := range u.use {
			names = append(names, res)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	at := sumAtStarts(uses, names)
	var excl []int // the exclusive uses, in order
	for oi, o := range uses {
		if o.excl {
			excl = append(excl, oi)
		}
	}
	overflow := make([]bool, len(names))
	for si, s := range uses {
		if !s.alloc {
			continue
		}
		t := s.from
		ti, _ := slices.BinarySearch(at.times, t)
		if at.units[ti] == 0 {
			continue
		}
		// Exclusivity: report each overlapping pair once, at the later
		// start (the earlier index when both start together); a pair
		// counts when either use is exclusive.
		pair := func(oi int) {
			o := uses[oi]
			if !(o.from <= t && t < o.to) || oi == si || !(s.units || o.units) {
				return
			}
			if o.from == t && o.alloc && oi > si {
				return
			}
			ex := &s
			if !s.excl {
				ex = &o
			}
			add("node %s: %s and %s share the node at %d, but %s is exclusive", name, o.who(), s.who(), t, ex.who())
		}
		if s.excl {
			for oi := range uses {
				pair(oi)
			}
		} else {
			for _, oi := range excl {
				pair(oi)
			}
		}
		// Capacities: the resources the active uses name, in order.
		row := ti * len(names)
		for ri, res := range names {
			if at.named[row+ri] > 0 && at.total[row+ri] > capacity[res] && !overflow[ri] {
				overflow[ri] = true
				add("node %s: at %d the jobs on it use %s=%d, above its capacity %d", name, t, res, at.total[row+ri], capacity[res])
			}
		}
	}
}

// startSums are the sums over a node's uses active at each allocation's
// start: times are the distinct starts, sorted; at times[i], units[i]
// units allocations are active, and of resource names[r] they use
// total[i·len(names)+r] in all, named[i·len(names)+r] of them naming it.
type startSums struct {
	times []int64
	units []int
	total []int64
	named []int
}

// sumAtStarts sums uses at each allocation's start (see startSums): each
// use is added where it begins to be active among the sorted starts and
// taken off where it stops, and a running sum over the starts reads the
// totals.
func sumAtStarts(uses []nodeUse, names []string) startSums {
	var times []int64
	for _, u := range uses {
		if u.alloc {
			times = append(times, u.from)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	nt, nr := len(times), len(names)
	// Differences at index i apply from times[i] on; index nt is past
	// the last start.
	units := make([]int, nt+1)
	total := make([]int64, (nt+1)*nr)
	named := make([]int, (nt+1)*nr)
	for _, u := range uses {
		lo, _ := slices.BinarySearch(times, u.from) // first start ≥ from
		hi, _ := slices.BinarySearch(times, u.to)   // first start ≥ to
		if lo >= hi {
			continue // active at no start
		}
		if u.units {
			units[lo]++
			units[hi]--
		}
		for ri, res := range names {
			v, ok := u.use[res]
			if !ok {
				continue
			}
			total[lo*nr+ri] += v
			total[hi*nr+ri] -= v
			named[lo*nr+ri]++
			named[hi*nr+ri]--
		}
	}
	for i := 1; i < nt; i++ {
		units[i] += units[i-1]
		for ri := range nr {
			total[i*nr+ri] += total[(i-1)*nr+ri]
			named[i*nr+ri] += named[(i-1)*nr+ri]
		}
	}
	return startSums{times: times, units: units[:nt], total: total[:nt*nr], named: named[:nt*nr]}
}

// checkReservations checks that no allocation runs on a reserved node
// while the reservation lasts.
func checkReservations(w *Window, allocs []Allocation, add func(string, ...any)) {
	if len(w.Reservations) == 0 {
		return
	}
	n := w.Topology.NumNodes()
	reserved := make(map[int][]int) // node → indices into w.Reservations
	for ri, r := range w.Reservations {
		for _, k := range r.Nodes {
			reserved[k] = append(reserved[k], ri)
		}
	}
	seen := make([]bool, len(w.Jobs))
	for _, al := range allocs {
		if al.Job < 0 || al.Job >= len(w.Jobs) || seen[al.Job] {
			continue
		}
		seen[al.Job] = true
		job := &w.Jobs[al.Job]
		end := al.Start + job.Walltime
		nodes := al.Nodes
		if al.Units != nil {
			nodes = nodes[:0:0]
			for k := range al.Units {
				nodes = append(nodes, k)
			}
			slices.Sort(nodes)
		}
		for _, k := range nodes {
			if k < 0 || k >= n {
				continue
			}
			for _, ri := range reserved[k] {
				r := &w.Reservations[ri]
				if al.Start < r.End && r.Start < end {
					id := r.ID
					if id == "" {
						id = fmt.Sprintf("reservations[%d]", ri)
					}
					add("job %s: node %s is reserved (%s) over [%d, %d), the job runs over [%d, %d)",
						job.ID, w.Topology.Name(k), id, r.Start, r.End, al.Start, end)
				}
			}
		}
	}
}
