package heuristics

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// PBSList is a list scheduler over the time-and-resource model of
// [Bridi16] (solver.Scheduler; the rules are model.Check's): the waiting
// jobs are taken in priority order and each gets the earliest start on the
// time grid at which its units fit on the nodes, around the running jobs,
// the reservations and the jobs scheduled before it, placed first-fit in
// node order. Backfilling is limited as in PBS Professional and
// bench/sim's pbs-fifo and pbs-walltime policies: the first Depth+1 jobs
// in order (the head and Depth more) may start wherever they fit
// earliest, even before jobs ahead of them; a later job starts no earlier
// than every job ahead of it. No job is ever preempted.
//
// PBSFifo and PBSWalltime are Bridi et al.'s baselines; the exact CP/SAT
// scheduler (solver/sat) also takes its first upper bound from them.
//
// Solve checks ctx between jobs and between the candidate start times
// of a job, and answers Status Unknown when it expires before every job is
// scheduled — or, with Truncate, the schedule of the jobs taken so far.
type PBSList struct {
	// ByWalltime orders the jobs by increasing walltime (PBSWalltime);
	// otherwise by submission time (PBSFifo). Ties keep window order.
	ByWalltime bool
	// Depth limits backfilling (see PBSList); negative: unlimited.
	Depth int
	// Truncate: when ctx expires, answer the jobs scheduled so far
	// (status feasible) and defer the others for the time. A list schedule
	// never moves a job for a later one, so those jobs start exactly where
	// the whole schedule would start them; only the later jobs are
	// missing. The first TruncateMin jobs of its order are scheduled
	// whatever the time, so that a truncated schedule — the answer of
	// last resort — never comes back empty for want of time.
	Truncate bool
}

// PBSFifo is Bridi et al.'s PBSFifo: submission order, backfilling
// limited to the first 10 queued jobs.
func PBSFifo() PBSList { return PBSList{Depth: 10} }

// PBSWalltime is Bridi et al.'s PBSWalltime: increasing walltime,
// backfilling limited to the first 400 queued jobs.
func PBSWalltime() PBSList { return PBSList{ByWalltime: true, Depth: 400} }

var _ solver.Scheduler = PBSList{}

// TruncateMin is how many jobs, in its order, a truncating list schedule
// places however late it is (see PBSList.Truncate): a count, not a time,
// so that the floor does not depend on the machine's speed.
const TruncateMin = 16

// Truncated returns p with Truncate set: the list schedule that sat falls
// back to when no list schedule finished within the time limit.
func (p PBSList) Truncated() solver.Scheduler {
	p.Truncate = true
	return p
}

// Name returns "pbs-walltime" or "pbs-fifo" (with the depth when it is not
// the default).
func (p PBSList) Name() string {
	switch {
	case p.ByWalltime && p.Depth == 400:
		return "pbs-walltime"
	case !p.ByWalltime && p.Depth == 10:
		return "pbs-fifo"
	case p.ByWalltime:
		return fmt.Sprintf("pbs-walltime-%d", p.Depth)
	}
	return fmt.Sprintf("pbs-fifo-%d", p.Depth)
}

// listJob is a waiting job as the list scheduler reads it.
type listJob struct {
	count int
	per   []int64 // per unit, by resource index; nil for whole-node units
	whole bool    // whole-node units (no select): one per node, exclusive
	excl  bool
	arr   string
	dur   int64
}

// listItem is one use of a node over [from, to).
type listItem struct {
	from, to int64
	use      []int64 // by resource index; nil: nothing counted
	excl     bool
}

// listState is the calendar of a list schedule: every node's uses over
// time, with the resources as vectors (capacities and amounts are
// non-negative, as the window readers make them).
type listState struct {
	w     *model.Window
	index map[string]int
	nres  int
	// capacity[k] is node k's capacity vector (0 for what it does not
	// list); usable are the idle or running nodes, in id order.
	capacity [][]int64
	usable   []int
	cal      [][]listItem
	// ends are the distinct ends of every item of the calendar, sorted:
	// the only times (on the grid) at which a job may start after lo.
	ends []int64
	// never keeps, by job shape, whether the units fit the empty nodes.
	never    map[string]bool
	sum, top []int64 // scratch
	// now holds what every usable node has free at the window time, for
	// the starts then (see nowTree).
	now *nowTree
	pos []int // node id → position in usable (−1: not usable)
}

func newListState(w *model.Window) *listState {
	n := w.Topology.NumNodes()
	ls := &listState{w: w, index: map[string]int{}, capacity: make([][]int64, n), cal: make([][]listItem, n), never: map[string]bool{}}
	for i, k := range model.ResourceNames(w) {
		ls.index[k] = i
	}
	ls.nres = len(ls.index)
	ls.sum, ls.top = make([]int64, ls.nres), make([]int64, ls.nres)
	for k := range n {
		var r model.Resources
		if w.Resources != nil {
			r = w.Resources[k]
		}
		ls.capacity[k] = ls.vec(r, 1)
	}
	usable := make([]bool, n)
	for _, k := range w.Idle {
		usable[k] = true
	}
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			usable[k] = true
			it := listItem{from: w.Time, to: r.End, excl: r.Select == nil || r.Place.Exclusive}
			switch {
			case r.Select == nil:
			case r.Units != nil && len(r.Select) == 1:
				it.use = ls.vec(r.Select[0].Amounts, int64(r.Units[k]))
			default:
				it.use = make([]int64, ls.nres)
				for _, c := range r.Select {
					for res, v := range c.Amounts {
						it.use[ls.index[res]] += v * int64(c.Count)
					}
				}
			}
			ls.add(k, it)
		}
	}
	for _, r := range w.Reservations {
		for _, k := range r.Nodes {
			ls.add(k, listItem{from: r.Start, to: r.End, excl: true})
		}
	}
	ls.pos = make([]int, n)
	for k, u := range usable {
		ls.pos[k] = -1
		if u {
			ls.pos[k] = len(ls.usable)
			ls.usable = append(ls.usable, k)
		}
	}
	ls.now = newNowTree(len(ls.usable), ls.nres)
	for p, k := range ls.usable {
		ls.refreshNow(k, p)
	}
	return ls
}

// refreshNow recomputes node k's leaf (position p) of the now tree: its
// capacity less the uses active at the window time, all −1 when an
// exclusive use is active then; and 1 in the last slot when nothing is.
func (ls *listState) refreshNow(k, p int) {
	leaf := ls.now.leaf(p)
	copy(leaf, ls.capacity[k])
	leaf[ls.nres] = 1
	t := ls.w.Time
	for i := range ls.cal[k] {
		it := &ls.cal[k][i]
		if it.from <= t && t < it.to {
			leaf[ls.nres] = 0
			if it.excl {
				for r := range ls.nres {
					leaf[r] = -1
				}
				break
			}
			for r, v := range it.use {
				leaf[r] -= v
			}
		}
	}
	ls.now.update(p)
}

// vec returns r × f as a vector.
func (ls *listState) vec(r model.Resources, f int64) []int64 {
	v := make([]int64, ls.nres)
	for k, a := range r {
		v[ls.index[k]] = a * f
	}
	return v
}

// add puts item it on node k's calendar.
func (ls *listState) add(k int, it listItem) {
	ls.cal[k] = append(ls.cal[k], it)
	if i, ok := slices.BinarySearch(ls.ends, it.to); !ok {
		ls.ends = slices.Insert(ls.ends, i, it.to)
	}
	if ls.now != nil && ls.pos[k] >= 0 && it.from <= ls.w.Time && ls.w.Time < it.to {
		ls.refreshNow(k, ls.pos[k])
	}
}

// Solve schedules every waiting job of w that can ever start.
func (p PBSList) Solve(ctx context.Context, q *solver.ScheduleProblem) (*solver.Schedule, error) {
	w, g := q.Window, q.Grid()
	ls := newListState(w)

	order := make([]int, len(w.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ja, jb := &w.Jobs[a], &w.Jobs[b]
		if p.ByWalltime && ja.Walltime != jb.Walltime {
			return cmp.Compare(ja.Walltime, jb.Walltime)
		}
		return cmp.Compare(ja.Submit, jb.Submit)
	})

	out := &solver.Schedule{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "cp", Solver: p.Name()}
	stopped := func(pos int) (*solver.Schedule, error) {
		if !p.Truncate {
			return &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: p.Name()}, nil
		}
		for _, j := range order[pos:] {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j,
				Reason: fmt.Sprintf("the %s list schedule reached its time limit before this job", p.Name()), ForTime: true})
		}
		out.Objective = model.WeightedQueueTime(w, out.Allocations)
		return out, nil
	}
	latest := w.Time // the latest start of the jobs ahead
	late := func(pos int) bool { return ctx.Err() != nil && (!p.Truncate || pos >= TruncateMin) }
	for pos, j := range order {
		if late(pos) {
			return stopped(pos)
		}
		job := &w.Jobs[j]
		lj, bad := ls.readListJob(job)
		if bad != "" {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j, Reason: bad})
			continue
		}
		// A job that does not fit on the empty usable nodes never starts.
		if ls.neverFits(&lj) {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j,
				Reason: fmt.Sprintf("its %d units never fit on the usable nodes (capacities, place=%s)", lj.count, job.Place.Arrange())})
			continue
		}
		lo := w.Time
		if p.Depth >= 0 && pos > p.Depth {
			lo = latest
		}
		// The candidate starts: lo and every end after it, on the grid.
		cands := []int64{ceilGrid(lo, w.Time, g)}
		first, _ := slices.BinarySearch(ls.ends, lo+1)
		for _, e := range ls.ends[first:] {
			if t := ceilGrid(e, w.Time, g); t != cands[len(cands)-1] {
				cands = append(cands, t)
			}
		}
		var units map[int]int
		var start int64
		for c, t := range cands {
			if c > 0 && late(pos) {
				return stopped(pos)
			}
			if units = ls.place(&lj, t, t+lj.dur); units != nil {
				start = t
				break
			}
		}
		if units == nil {
			return nil, fmt.Errorf("pbs list: job %s fits on the empty nodes but at no event time (a bug)", job.ID)
		}
		nodes := make([]int, 0, len(units))
		for k, u := range units {
			nodes = append(nodes, k)
			it := listItem{from: start, to: start + lj.dur, excl: lj.excl}
			if !lj.whole {
				it.use = make([]int64, ls.nres)
				for r, v := range lj.per {
					it.use[r] = v * int64(u)
				}
			}
			ls.add(k, it)
		}
		slices.Sort(nodes)
		out.Allocations = append(out.Allocations, model.Allocation{Job: j, Nodes: nodes, Start: start, Units: units})
		latest = max(latest, start)
	}
	out.Objective = model.WeightedQueueTime(w, out.Allocations)
	return out, nil
}

// ceilGrid rounds x up to the grid t0 + k·g (x ≥ t0).
func ceilGrid(x, t0, g int64) int64 {
	if x <= t0 {
		return t0
	}
	return t0 + (x-t0+g-1)/g*g
}

// readListJob reads a job's units; bad says why it cannot be scheduled.
func (ls *listState) readListJob(j *model.Job) (lj listJob, bad string) {
	lj = listJob{dur: j.Walltime, arr: j.Place.Arrange(), excl: j.Place.Exclusive}
	if j.Select == nil {
		lj.count, lj.whole, lj.excl = j.Nodes, true, true
		return lj, ""
	}
	if len(j.Select) != 1 {
		return lj, fmt.Sprintf("its select has %d chunks; the time-and-resource model needs one", len(j.Select))
	}
	if len(j.Select[0].Labels) > 0 {
		return lj, "its select has string-valued resources, which the time-and-resource model does not support"
	}
	lj.count, lj.per = j.Select[0].Count, ls.vec(j.Select[0].Amounts, 1)
	return lj, ""
}

// neverFits reports whether the job's units do not fit on the usable
// nodes even when they are empty; kept by the job's shape.
func (ls *listState) neverFits(lj *listJob) bool {
	key := fmt.Sprint(lj.count, lj.whole, lj.arr, lj.per)
	never, ok := ls.never[key]
	if !ok {
		never = ls.placeOn(lj, func(k int) int { return ls.unitsOn(lj, nil, k, 0, 1) }) == nil
		ls.never[key] = never
	}
	return never
}

// place places the job's units over [from, to), first-fit in node order
// (see placeOn); nil when they do not fit.
func (ls *listState) place(lj *listJob, from, to int64) map[int]int {
	caps := func(k int) int { return ls.unitsOn(lj, ls.cal[k], k, from, to) }
	if from != ls.w.Time || to <= from || lj.whole {
		return ls.placeOn(lj, caps)
	}
	// At the window time, the now tree skips the nodes that have too
	// little of some resource free then, or an exclusive use (any use,
	// for an exclusive job): no unit fits there over [from, to).
	need := make([]int64, ls.nres+1)
	copy(need, lj.per)
	if lj.excl {
		need[ls.nres] = 1
	}
	if !slices.ContainsFunc(need, func(v int64) bool { return v > 0 }) {
		return ls.placeOn(lj, caps)
	}
	return ls.placeFrom(lj, caps, func(p int) int { return ls.now.first(p, need) })
}

// placeOn spreads the job's units first-fit over the usable nodes, in id
// order, with room caps(k) on node k (0 on the others); nil when they do
// not fit. It asks caps only as far as it needs to.
func (ls *listState) placeOn(lj *listJob, caps func(k int) int) map[int]int {
	return ls.placeFrom(lj, caps, func(p int) int {
		if p < len(ls.usable) {
			return p
		}
		return -1
	})
}

// placeFrom is placeOn over the usable positions next(p) gives: the
// first position at or after p that may have room (−1: none); those it
// skips must have none.
func (ls *listState) placeFrom(lj *listJob, caps func(k int) int, next func(p int) int) map[int]int {
	if lj.count <= 0 {
		// Every node has room for no units.
		if lj.arr == model.ArrangePack {
			if ls.w.Topology.NumNodes() == 0 {
				return nil
			}
			return map[int]int{0: lj.count}
		}
		return map[int]int{}
	}
	if lj.arr == model.ArrangePack {
		for p := next(0); p >= 0; p = next(p + 1) {
			if k := ls.usable[p]; caps(k) >= lj.count {
				return map[int]int{k: lj.count}
			}
		}
		return nil
	}
	units := map[int]int{}
	rem := lj.count
	for p := next(0); p >= 0; p = next(p + 1) {
		k := ls.usable[p]
		if c := caps(k); c > 0 {
			u := min(c, rem)
			units[k] = u
			if rem -= u; rem == 0 {
				return units
			}
		}
	}
	return nil
}

// nowTree is a segment tree over the usable nodes' positions: each leaf
// a vector (what the node has free at the window time, and a last slot),
// each inner node the element-wise maximum of its leaves, so that first
// finds the first leaf with at least need in every slot quickly.
type nowTree struct {
	n, width int
	size     int // leaves, a power of two
	v        []int64
}

func newNowTree(n, nres int) *nowTree {
	t := &nowTree{n: n, width: nres + 1, size: 1}
	for t.size < max(1, n) {
		t.size *= 2
	}
	t.v = make([]int64, 2*t.size*t.width)
	for i := range t.v {
		t.v[i] = -1 // empty leaves hold nothing
	}
	return t
}

func (t *nowTree) at(i int) []int64 { return t.v[i*t.width : (i+1)*t.width] }

// leaf returns position p's vector, to be set and then update(p)d.
func (t *nowTree) leaf(p int) []int64 { return t.at(t.size + p) }

// update recomputes the maxima above position p.
func (t *nowTree) update(p int) {
	for i := (t.size + p) / 2; i >= 1; i /= 2 {
		a, l, r := t.at(i), t.at(2*i), t.at(2*i+1)
		for s := range a {
			a[s] = max(l[s], r[s])
		}
	}
}

// first returns the first position at or after p whose leaf has at least
// need in every slot where need is positive, or −1.
func (t *nowTree) first(p int, need []int64) int {
	if p >= t.n {
		return -1
	}
	return t.search(1, 0, t.size, p, need)
}

func (t *nowTree) search(i, lo, hi, p int, need []int64) int {
	if hi <= p {
		return -1
	}
	a := t.at(i)
	for s, v := range need {
		if v > 0 && a[s] < v {
			return -1
		}
	}
	if hi-lo == 1 {
		if lo >= t.n {
			return -1
		}
		return lo
	}
	mid := (lo + hi) / 2
	if r := t.search(2*i, lo, mid, p, need); r >= 0 {
		return r
	}
	return t.search(2*i+1, mid, hi, p, need)
}

// unitsOn returns how many of the job's units fit on node k, with uses
// items, over [from, to), at most lj.count.
func (ls *listState) unitsOn(lj *listJob, items []listItem, k int, from, to int64) int {
	active := 0
	for i := range items {
		if it := &items[i]; it.from < to && from < it.to {
			if it.excl || lj.excl {
				return 0
			}
			active++
		}
	}
	if lj.whole {
		return 1
	}
	// The highest use of each resource over [from, to): usage rises only
	// where an item starts.
	peak := ls.top
	clear(peak)
	if active > 0 {
		ls.sumAt(items, from, to, from, peak)
		for i := range items {
			if it := &items[i]; it.from > from && it.from < to && from < it.to {
				ls.sumAt(items, from, to, it.from, peak)
			}
		}
	}
	capv := ls.capacity[k]
	units := lj.count
	for r, need := range lj.per {
		if need <= 0 {
			if peak[r] > capv[r] {
				return 0 // already over capacity: no job may join
			}
			continue
		}
		avail := capv[r] - peak[r]
		if avail < 0 {
			return 0
		}
		units = int(min(int64(units), avail/need))
	}
	if lj.arr == model.ArrangeScatter {
		units = min(units, 1)
	}
	return max(units, 0)
}

// sumAt raises peak to the uses of the items active at t (among those
// overlapping [from, to)).
func (ls *listState) sumAt(items []listItem, from, to, t int64, peak []int64) {
	sum := ls.sum
	clear(sum)
	for i := range items {
		it := &items[i]
		if it.from < to && from < it.to && it.from <= t && t < it.to {
			for r, v := range it.use {
				sum[r] += v
			}
		}
	}
	for r, v := range sum {
		peak[r] = max(peak[r], v)
	}
}
