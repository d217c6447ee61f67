package heuristics

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// This file keeps PBSList.Solve as it was first written (maps of
// resources, every node's units at every candidate time) as the
// reference the faster Solve must agree with.

// refListJob is a waiting job as the list scheduler reads it.
type refListJob struct {
	count int
	per   model.Resources
	whole bool // whole-node units (no select): one per node, exclusive
	excl  bool
	arr   string
	dur   int64
}

// refListItem is one use of a node over [from, to).
type refListItem struct {
	from, to int64
	use      model.Resources
	excl     bool
}

// referenceSchedule schedules every waiting job of q.Window that can ever start.
func (p PBSList) referenceSchedule(ctx context.Context, q *solver.ScheduleProblem) (*solver.Schedule, error) {
	w, g := q.Window, q.Grid()
	n := w.Topology.NumNodes()
	usable := make([]bool, n)
	for _, k := range w.Idle {
		usable[k] = true
	}
	cal := make([][]refListItem, n)
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			usable[k] = true
			it := refListItem{from: w.Time, to: r.End, excl: r.Select == nil || r.Place.Exclusive}
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
			cal[k] = append(cal[k], refListItem{from: r.Start, to: r.End, excl: true})
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
		lj, bad := refReadListJob(job)
		if bad != "" {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j, Reason: bad})
			continue
		}
		// A job that does not fit on the empty usable nodes never starts.
		var empty []int
		for k := range n {
			if usable[k] {
				empty = append(empty, refUnitsOn(lj, nil, capOf(k), 0, 1))
			} else {
				empty = append(empty, 0)
			}
		}
		if refPlace(lj, empty) == nil {
			out.Deferred = append(out.Deferred, model.Deferral{Job: j,
				Reason: fmt.Sprintf("its %d units never fit on the usable nodes (capacities, place=%s)", lj.count, job.Place.Arrange())})
			continue
		}
		lo := w.Time
		if p.Depth >= 0 && pos > p.Depth {
			lo = latest
		}
		cands := []int64{refCeilGrid(lo, w.Time, g)}
		for k := range n {
			for _, it := range cal[k] {
				if it.to > lo {
					cands = append(cands, refCeilGrid(it.to, w.Time, g))
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
					caps[k] = refUnitsOn(lj, cal[k], capOf(k), t, t+lj.dur)
				}
			}
			if units = refPlace(lj, caps); units != nil {
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
			it := refListItem{from: start, to: start + lj.dur, excl: lj.excl}
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

// refCeilGrid rounds x up to the grid t0 + k·g (x ≥ t0).
func refCeilGrid(x, t0, g int64) int64 {
	if x <= t0 {
		return t0
	}
	return t0 + (x-t0+g-1)/g*g
}

// refReadListJob reads a job's units; bad says why it cannot be scheduled.
func refReadListJob(j *model.Job) (lj refListJob, bad string) {
	lj = refListJob{dur: j.Walltime, arr: j.Place.Arrange(), excl: j.Place.Exclusive}
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

// refUnitsOn returns how many of the job's units fit on a node with
// capacities capacity and uses items over [from, to), at most lj.count.
func refUnitsOn(lj refListJob, items []refListItem, capacity model.Resources, from, to int64) int {
	var active []refListItem
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
func refPlace(lj refListJob, caps []int) map[int]int {
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

// TestPBSListMatchesReference: the calendar-vector Solve gives exactly
// the reference's schedules (starts, nodes, units, deferrals, objective)
// on random small windows of every kind (whole-node and units jobs, every
// place, running jobs, reservations, down nodes) and on Eurora-like ones,
// for both orders, several backfill depths and grids.
func TestPBSListMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	var windows []*model.Window
	for range 600 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(8), 1+rng.IntN(12), 10)
		if err != nil {
			t.Fatal(err)
		}
		windows = append(windows, w)
	}
	for seed := range uint64(6) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 60})
		if err != nil {
			t.Fatal(err)
		}
		windows = append(windows, w)
	}
	compared := 0
	for i, w := range windows {
		for _, p := range []PBSList{PBSFifo(), PBSWalltime(), {Depth: 0}, {Depth: -1}, {ByWalltime: true, Depth: 2}} {
			for _, g := range []int64{1, 10, 30, 60} {
				q := &solver.ScheduleProblem{Window: w, Granularity: g}
				want, werr := p.referenceSchedule(context.Background(), q)
				got, gerr := p.Solve(context.Background(), q)
				if (werr != nil) != (gerr != nil) {
					t.Fatalf("window %d, %s, grid %d: error %v, reference %v", i, p.Name(), g, gerr, werr)
				}
				if werr != nil {
					continue
				}
				if math.IsNaN(got.Bound) && math.IsNaN(want.Bound) {
					got.Bound, want.Bound = 0, 0 // NaN ≠ NaN
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("window %d, %s, grid %d:\n got %+v\nwant %+v", i, p.Name(), g, got, want)
				}
				compared++
			}
		}
	}
	t.Logf("%d schedules compared", compared)
}

// TestPBSListTruncate: with Truncate, a list schedule stopped by its
// deadline keeps a prefix of the full schedule (the same start, nodes and
// units for every job it scheduled), at least its first TruncateMin jobs,
// and defers the others; without it, the answer is Unknown.
func TestPBSListTruncate(t *testing.T) {
	w, err := instances.Eurora(instances.EuroraConfig{Seed: 3, Jobs: 60})
	if err != nil {
		t.Fatal(err)
	}
	full, err := PBSFifo().Solve(context.Background(), &solver.ScheduleProblem{Window: w})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := PBSFifo()
	if res, err := p.Solve(ctx, &solver.ScheduleProblem{Window: w}); err != nil || res.Status != solver.Unknown {
		t.Fatalf("without Truncate: %v, %v", res, err)
	}
	p.Truncate = true
	res, err := p.Solve(ctx, &solver.ScheduleProblem{Window: w})
	// Late from the start, it still places its first TruncateMin jobs, as
	// the full schedule does, and defers the rest.
	if err != nil || res.Status != solver.Feasible || len(res.Allocations) != TruncateMin || len(res.Allocations)+len(res.Deferred) != len(w.Jobs) {
		t.Fatalf("truncated at once: %d allocations, %d deferred, %v", len(res.Allocations), len(res.Deferred), err)
	}
	for i, a := range res.Allocations {
		if !reflect.DeepEqual(a, full.Allocations[i]) {
			t.Fatalf("truncated at once: allocation %d is %+v, the full schedule's %+v", i, a, full.Allocations[i])
		}
	}
	// Jobs cut off by the deadline are deferred for the time, so a later
	// decision may start them.
	for _, d := range res.Deferred {
		if !d.ForTime {
			t.Errorf("truncated: job %d deferred (%s) not for the time", d.Job, d.Reason)
		}
	}
	// A job that never fits is deferred for good, not for the time.
	huge := w.Jobs[0]
	huge.ID = "huge"
	if huge.Select, err = model.ParseSelect("1:ncpus=100000"); err != nil {
		t.Fatal(err)
	}
	wh := *w
	wh.Jobs = append(slices.Clone(w.Jobs), huge)
	whole, err := p.Solve(context.Background(), &solver.ScheduleProblem{Window: &wh})
	if err != nil || len(whole.Deferred) != 1 || whole.Deferred[0].Job != len(w.Jobs) || whole.Deferred[0].ForTime {
		t.Errorf("a job that never fits: %+v, %v", whole.Deferred, err)
	}
	// Stopped after some jobs: a prefix of the full schedule.
	for _, stop := range []int{1, 5, 20, 40} {
		ctx := &stopAfter{Context: context.Background(), n: stop}
		res, err := p.Solve(ctx, &solver.ScheduleProblem{Window: w})
		if err != nil || res.Status != solver.Feasible {
			t.Fatalf("stop %d: %v, %v", stop, res, err)
		}
		if len(res.Allocations)+len(res.Deferred) != len(w.Jobs) || len(res.Allocations) == 0 {
			t.Fatalf("stop %d: %d allocations, %d deferred of %d jobs", stop, len(res.Allocations), len(res.Deferred), len(w.Jobs))
		}
		if err := model.Check(w, res.Allocations); err != nil {
			t.Fatal(err)
		}
		for i, a := range res.Allocations {
			if !reflect.DeepEqual(a, full.Allocations[i]) {
				t.Fatalf("stop %d: allocation %d is %+v, the full schedule's %+v", stop, i, a, full.Allocations[i])
			}
		}
	}
}

// stopAfter is a context whose Err turns to Canceled after n calls.
type stopAfter struct {
	context.Context
	n int
}

func (s *stopAfter) Err() error {
	if s.n--; s.n < 0 {
		return context.Canceled
	}
	return nil
}
