package heuristics

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/model"
)

// CompactNow is the compaction of a units schedule that the PBS planner
// runs on its cp schedule: it moves the units that start now off idle vnodes onto vnodes
// already in use (by running jobs or by other jobs starting now), in
// topology order, wherever the schedule stays feasible: the starts and so
// the objective do not change, and idle vnodes stay whole for the
// whole-node window. allocs, which must be a checked schedule of w
// (solver.SolveWindow's), is changed in place; the moves are those of
// trying every unit node k of every job starting now, in allocation
// order, against every vnode m in use, in id order, and keeping the first
// move model.Check would accept.
//
// Each move is checked incrementally, on the two vnodes it changes: job
// i leaving k cannot break k, and on m the rules of model.Check for a
// units allocation (its place, the reservations, and every vnode's
// capacities and exclusivity at every start on it, by model.NodeUsesFit,
// the per-node rule of model.Check) are applied to m's uses alone. When deadline (zero: none) passes,
// compaction stops with the moves made so far: the schedule is then
// valid, only less compact. It returns false when the deadline stopped it.
func CompactNow(w *model.Window, allocs []model.Allocation, deadline time.Time) bool {
	cs := newCompaction(w, allocs)
	if cs == nil {
		return true
	}
	for i := range allocs {
		a := &allocs[i]
		if a.Start != w.Time {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(a.Units)) {
			if cs.inUse(k, i) {
				continue
			}
			if !deadline.IsZero() && time.Now().After(deadline) {
				return false
			}
			for pos, m := range cs.cands {
				if m < 0 || m == k || !cs.inUse(m, i) {
					continue
				}
				if cs.full(m) {
					cs.cands[pos] = -1 // no unit of a job starting now fits m again
					continue
				}
				if cs.tryMove(i, k, m) {
					break
				}
			}
		}
	}
	return true
}

// compaction is CompactNow's view of the schedule: the uses of every
// usable vnode over time, as checkUnits of model.Check builds them, with
// the resources as vectors.
type compaction struct {
	w      *model.Window
	allocs []model.Allocation
	// res names the resources of the vectors; capacity is each vnode's.
	res      []string
	capacity [][]int64
	// uses[m] are the uses of vnode m; own[i][m] indexes job i's use of m
	// in uses[m] (allocation i). A use that ends is left in place as
	// never active (from = to = 0, job -2), so that indices stay.
	uses [][]model.NodeUse
	own  []map[int]int
	// nowUsers[m] counts the allocations starting now with units on m;
	// usedNow[m] sums the uses of m active at the window time.
	nowUsers []int
	usedNow  [][]int64
	idle     []bool
	// cands are the vnodes in use, in id order (-1 once they can take no
	// more); minUnit is the least every job starting now needs of each
	// resource per unit.
	cands   []int
	minUnit []int64
	// activeNow: every job starting now has a positive walltime.
	activeNow bool
	// per[i] is allocation i's per-unit vector (nil for a whole-node job).
	per [][]int64
	// reserved[m] lists the reservations of m.
	reserved [][]int
}

// newCompaction builds the view; nil when no allocation has units.
func newCompaction(w *model.Window, allocs []model.Allocation) *compaction {
	hasUnits := false
	for _, a := range allocs {
		hasUnits = hasUnits || a.Units != nil
	}
	if !hasUnits {
		return nil
	}
	n := w.Topology.NumNodes()
	cs := &compaction{w: w, allocs: allocs, uses: make([][]model.NodeUse, n), own: make([]map[int]int, len(allocs)),
		nowUsers: make([]int, n), usedNow: make([][]int64, n), idle: make([]bool, n), capacity: make([][]int64, n),
		per: make([][]int64, len(allocs)), reserved: make([][]int, n)}
	index := map[string]int{}
	key := func(r string) int {
		if x, ok := index[r]; ok {
			return x
		}
		index[r] = len(cs.res)
		cs.res = append(cs.res, r)
		return index[r]
	}
	for _, r := range w.Resources {
		for _, k := range slices.Sorted(maps.Keys(r)) {
			key(k)
		}
	}
	for _, r := range w.Running {
		for _, c := range r.Select {
			for _, k := range slices.Sorted(maps.Keys(c.Amounts)) {
				key(k)
			}
		}
	}
	for _, j := range w.Jobs {
		for _, c := range j.Select {
			for _, k := range slices.Sorted(maps.Keys(c.Amounts)) {
				key(k)
			}
		}
	}
	vec := func(r model.Resources, f int64) []int64 {
		v := make([]int64, len(cs.res))
		for k, a := range r {
			v[index[k]] += a * f
		}
		return v
	}
	usable := make([]bool, n)
	for _, k := range w.Idle {
		usable[k], cs.idle[k] = true, true
	}
	for k := range n {
		var capacity model.Resources
		if w.Resources != nil {
			capacity = w.Resources[k]
		}
		cs.capacity[k] = vec(capacity, 1)
		cs.usedNow[k] = make([]int64, len(cs.res))
	}
	for ri, r := range w.Reservations {
		for _, k := range r.Nodes {
			if k >= 0 && k < n {
				cs.reserved[k] = append(cs.reserved[k], ri)
			}
		}
	}
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			usable[k] = true
			u := model.NodeUse{From: math.MinInt64, To: r.End, Excl: r.Select == nil || r.Place.Exclusive}
			switch {
			case r.Select == nil:
			case r.Units != nil && len(r.Select) == 1:
				u.Use = vec(r.Select[0].Amounts, int64(r.Units[k]))
			default:
				u.Use = make([]int64, len(cs.res))
				for _, c := range r.Select {
					for res, v := range c.Amounts {
						u.Use[index[res]] += v * int64(c.Count)
					}
				}
			}
			cs.add(k, u)
		}
	}
	for i, a := range allocs {
		job := &w.Jobs[a.Job]
		end := a.Start + job.Walltime
		cs.own[i] = map[int]int{}
		if a.Units == nil {
			for _, k := range a.Nodes {
				cs.add(k, model.NodeUse{From: a.Start, To: end, Excl: true, Alloc: true})
			}
			continue
		}
		if job.Select != nil {
			cs.per[i] = vec(job.Select[0].Amounts, 1)
		}
		for _, k := range slices.Sorted(maps.Keys(a.Units)) {
			u := model.NodeUse{From: a.Start, To: end, Excl: job.Select == nil || job.Place.Exclusive, Units: true, Alloc: true}
			if cs.per[i] != nil {
				u.Use = scaledVec(cs.per[i], a.Units[k])
			}
			cs.own[i][k] = len(cs.uses[k])
			cs.add(k, u)
			if a.Start == w.Time {
				cs.nowUsers[k]++
			}
		}
	}
	cs.minUnit = make([]int64, len(cs.res))
	cs.activeNow = true
	first := true
	for i, a := range allocs {
		if a.Start != w.Time || a.Units == nil {
			continue
		}
		cs.activeNow = cs.activeNow && w.Jobs[a.Job].Walltime > 0
		p := cs.per[i]
		if p == nil {
			p = make([]int64, len(cs.res))
		}
		for r := range cs.minUnit {
			if first || p[r] < cs.minUnit[r] {
				cs.minUnit[r] = p[r]
			}
		}
		first = false
	}
	for k := range n {
		if usable[k] && (!cs.idle[k] || cs.nowUsers[k] > 0) {
			cs.cands = append(cs.cands, k)
		}
	}
	return cs
}

func scaledVec(v []int64, f int) []int64 {
	out := make([]int64, len(v))
	for r, a := range v {
		out[r] = a * int64(f)
	}
	return out
}

// add records use u of vnode k.
func (cs *compaction) add(k int, u model.NodeUse) {
	cs.uses[k] = append(cs.uses[k], u)
	if u.From <= cs.w.Time && cs.w.Time < u.To {
		for r, a := range u.Use {
			cs.usedNow[k][r] += a
		}
	}
}

// inUse is CompactNow's test: vnode k is not idle, or an allocation
// other than self starts now on it.
func (cs *compaction) inUse(k, self int) bool {
	if !cs.idle[k] {
		return true
	}
	mine := 0
	if cs.allocs[self].Units[k] > 0 {
		mine = 1
	}
	return cs.nowUsers[k]-mine > 0
}

// full reports that no unit of any job starting now can join vnode m:
// usage at the window time only grows while compacting (a vnode loses
// uses only when it stops being in use), so once a resource every such
// job needs is short, or an exclusive running job holds m now, it stays
// so. (Only when every job starting now runs at the window time, i.e.
// has a positive walltime.)
func (cs *compaction) full(m int) bool {
	if !cs.activeNow {
		return false
	}
	for r, need := range cs.minUnit {
		if need > 0 && cs.usedNow[m][r]+need > cs.capacity[m][r] {
			return true
		}
	}
	for _, u := range cs.uses[m] {
		if u.Excl && !u.Alloc && u.From <= cs.w.Time && cs.w.Time < u.To {
			return true
		}
	}
	return false
}

// tryMove moves allocation i's units on k to m when the schedule stays
// feasible, and reports whether it did.
func (cs *compaction) tryMove(i, k, m int) bool {
	a := &cs.allocs[i]
	job := &cs.w.Jobs[a.Job]
	add := a.Units[k]
	u0 := a.Units[m]
	after := u0 + add
	// The job's own rules (checkUnits): units per vnode and place.
	if (job.Select == nil || job.Place.Arrangement == model.ArrangeScatter) && after > 1 {
		return false
	}
	if nodes := len(a.Units) - 1 + b2i(u0 == 0); job.Place.Arrangement == model.ArrangePack && nodes > 1 {
		return false
	}
	from, to := a.Start, a.Start+job.Walltime
	for _, ri := range cs.reserved[m] {
		if r := &cs.w.Reservations[ri]; from < r.End && r.Start < to {
			return false
		}
	}
	// The window time is the job's start: its use is active then unless
	// its walltime is 0, and the capacities must hold.
	var addVec []int64
	if cs.per[i] != nil {
		addVec = scaledVec(cs.per[i], add)
	}
	if from < to {
		for r, v := range addVec {
			if v > 0 && cs.usedNow[m][r]+v > cs.capacity[m][r] {
				return false
			}
		}
	}
	// m's uses with job i's new use, checked by model.NodeUsesFit.
	uses := slices.Clone(cs.uses[m])
	mine := model.NodeUse{From: from, To: to, Excl: job.Select == nil || job.Place.Exclusive, Units: true, Alloc: true}
	if cs.per[i] != nil {
		mine.Use = scaledVec(cs.per[i], after)
	}
	at, had := cs.own[i][m]
	if had {
		uses[at] = mine
	} else {
		uses = append(uses, mine)
	}
	if !model.NodeUsesFit(uses, cs.capacity[m]) {
		return false
	}
	// Commit: job i leaves k and has after units on m.
	units := maps.Clone(a.Units)
	delete(units, k)
	units[m] = after
	a.Units, a.Nodes = units, slices.Sorted(maps.Keys(units))
	kat := cs.own[i][k]
	old := cs.uses[k][kat]
	if old.From <= cs.w.Time && cs.w.Time < old.To {
		for r, v := range old.Use {
			cs.usedNow[k][r] -= v
		}
	}
	cs.uses[k][kat] = model.NodeUse{}
	delete(cs.own[i], k)
	cs.nowUsers[k]--
	if had {
		cs.uses[m][at] = mine
	} else {
		cs.own[i][m] = len(cs.uses[m])
		cs.uses[m] = append(cs.uses[m], mine)
		cs.nowUsers[m]++
	}
	if from <= cs.w.Time && cs.w.Time < to {
		for r, v := range addVec {
			cs.usedNow[m][r] += v
		}
	}
	if cs.idle[k] && cs.nowUsers[k] == 0 {
		if pos, ok := slices.BinarySearch(cs.cands, k); ok {
			cs.cands[pos] = -1
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
