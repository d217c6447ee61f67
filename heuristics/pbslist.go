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
// Schedule checks ctx between jobs and answers Status Unknown when it
// expires before every job is scheduled.
type PBSList struct {
	// ByWalltime orders the jobs by increasing walltime (PBSWalltime);
	// otherwise by submission time (PBSFifo). Ties keep window order.
	ByWalltime bool
	// Depth limits backfilling (see PBSList); negative: unlimited.
	Depth int
}

// PBSFifo is Bridi et al.'s PBSFifo: submission order, backfilling
// limited to the first 10 queued jobs.
func PBSFifo() PBSList { return PBSList{Depth: 10} }

// PBSWalltime is Bridi et al.'s PBSWalltime: increasing walltime,
// backfilling limited to the first 400 queued jobs.
func PBSWalltime() PBSList { return PBSList{ByWalltime: true, Depth: 400} }

var _ solver.Scheduler = PBSList{}

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
	per   model.Resources
	whole bool // whole-node units (no select): one per node, exclusive
	excl  bool
	arr   string
	dur   int64
}

// listItem is one use of a node over [from, to).
type listItem struct {
	from, to int64
	use      model.Resources
	excl     bool
}

// Schedule schedules every waiting job of w that can ever start.
func (p PBSList) Schedule(ctx context.Context, w *model.Window, opt solver.ScheduleOptions) (*solver.Schedule, error) {
	g := opt.Grid()
	n := w.Topology.NumNodes()
	usable := make([]bool, n)
	for _, k := range w.Idle {
		usable[k] = true
	}
	cal := make([][]listItem, n)
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			usable[k] = true
			it := listItem{from: w.Time, to: r.End, excl: r.Select == nil || r.Place.Exclusive}
			switch {
			case r.Select == nil:
			case r.Units != nil && len(r.Select) == 1:
				it.use = model.Resources{}
				for res, v := range r.Select[0].Amounts {
					it.use[res] = v * int64(r.Units[k])
				}
			default:
				it.use = model.Resources{}
				for _, c := range r.Select {
					for res, v := range c.Amounts {
						it.use[res] += v * int64(c.Count)
					}
				}
			}
			cal[k] = append(cal[k], it)
		}
	}
	for _, r := range w.Reservations {
		for _, k := range r.Nodes {
			cal[k] = append(cal[k], listItem{from: r.Start, to: r.End, excl: true})
		}
	}
	capOf := func(k int) model.Resources {
		if w.Resources == nil {
			return nil
		}
		return w.Resources[k]
	}

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
	latest := w.Time // the latest start of the jobs ahead
	for pos, j := range order {
		if ctx.Err() != nil {
			return &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: p.Name()}, nil
		}
		job := &w.Jobs[j]
		lj, bad := readListJob(job)
		if bad != "" {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j, Reason: bad})
			continue
		}
		// A job that does not fit on the empty usable nodes never starts.
		var empty []int
		for k := range n {
			if usable[k] {
				empty = append(empty, unitsOn(lj, nil, capOf(k), 0, 1))
			} else {
				empty = append(empty, 0)
			}
		}
		if place(lj, empty) == nil {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j,
				Reason: fmt.Sprintf("its %d units never fit on the usable nodes (capacities, place=%s)", lj.count, job.Place.Arrange())})
			continue
		}
		lo := w.Time
		if p.Depth >= 0 && pos > p.Depth {
			lo = latest
		}
		cands := []int64{ceilGrid(lo, w.Time, g)}
		for k := range n {
			for _, it := range cal[k] {
				if it.to > lo {
					cands = append(cands, ceilGrid(it.to, w.Time, g))
				}
			}
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
		var units map[int]int
		var start int64
		for _, t := range cands {
			caps := make([]int, n)
			for k := range n {
				if usable[k] {
					caps[k] = unitsOn(lj, cal[k], capOf(k), t, t+lj.dur)
				}
			}
			if units = place(lj, caps); units != nil {
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
				it.use = model.Resources{}
				for res, v := range lj.per {
					it.use[res] = v * int64(u)
				}
			}
			cal[k] = append(cal[k], it)
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
func readListJob(j *model.Job) (lj listJob, bad string) {
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
	lj.count, lj.per = j.Select[0].Count, j.Select[0].Amounts
	return lj, ""
}

// unitsOn returns how many of the job's units fit on a node with
// capacities capacity and uses items over [from, to), at most lj.count.
func unitsOn(lj listJob, items []listItem, capacity model.Resources, from, to int64) int {
	var active []listItem
	for _, it := range items {
		if it.from < to && from < it.to {
			if it.excl || lj.excl {
				return 0
			}
			active = append(active, it)
		}
	}
	if lj.whole {
		return 1
	}
	// The highest use of each resource over [from, to): usage rises only
	// where an item starts.
	points := []int64{from}
	for _, it := range active {
		if it.from > from {
			points = append(points, it.from)
		}
	}
	peak := model.Resources{}
	for _, t := range points {
		sum := model.Resources{}
		for _, it := range active {
			if it.from <= t && t < it.to {
				for res, v := range it.use {
					sum[res] += v
				}
			}
		}
		for res, v := range sum {
			peak[res] = max(peak[res], v)
		}
	}
	units := lj.count
	for res, v := range peak {
		if _, needed := lj.per[res]; !needed && v > capacity[res] {
			return 0 // already over capacity: no job may join
		}
	}
	for res, need := range lj.per {
		if need <= 0 {
			if peak[res] > capacity[res] {
				return 0
			}
			continue
		}
		avail := capacity[res] - peak[res]
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

// place spreads the job's units first-fit over nodes with room caps[k];
// nil when they do not fit.
func place(lj listJob, caps []int) map[int]int {
	if lj.arr == model.ArrangePack {
		for k, c := range caps {
			if c >= lj.count {
				return map[int]int{k: lj.count}
			}
		}
		return nil
	}
	units := map[int]int{}
	rem := lj.count
	for k, c := range caps {
		if rem == 0 {
			break
		}
		if c > 0 {
			u := min(c, rem)
			units[k] = u
			rem -= u
		}
	}
	if rem > 0 {
		return nil
	}
	return units
}
