package pbsched

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// The partial-node placements of `optsched pbs plan --partial`.
const (
	PartialFirstFit = "first-fit"
	PartialCP       = "cp"
)

// This file is the cp path of the partial-node jobs: instead of the first
// fit of pbsfit.go, the partial-node jobs that the time-and-resource model
// can express go through the CP/SAT scheduler (solver/sat, the model of
// [Bridi16]) on the free vnodes, which decides when and where each of
// them starts; the jobs it starts now are this cycle's starts and the
// others wait with their planned start (a reservation the next cycle
// recomputes).
//
// The reduction of the PBS state to a model.Window (documented, and
// conservative: it never lets a job use what PBS would not give it):
//
//   - Nodes: the owned vnodes whose state is exactly "free", that belong
//     to no queue and that the whole-node starts of this cycle do not
//     hold. Every other vnode is down to the model.
//   - Capacities: resources_available of each vnode, for the consumable
//     resources the jobs ask for (a resource a vnode does not list has
//     capacity 0, as in fitState).
//   - Running jobs: one fixed running job per (job, vnode) of each
//     running job's exec_vnode, using the amounts exec_vnode names there
//     until stime + walltime (a year without a walltime); the partial-node
//     jobs the first fit started this cycle likewise until now + walltime;
//     and whatever resources_assigned holds beyond those (jobs qstat did
//     not list) as a running use that never ends within the horizon. A
//     running use is exclusive when the job is exclusive on the vnode
//     (exclusiveOn: its place and the vnode's sharing).
//   - Jobs: the partial-node candidates whose chunks are all alike (one
//     chunk of the select, Count units), name no vnode property, are not
//     exclusive on any window vnode and use no place=group; place=pack
//     and scatter/vscatter become model.Place arrangements. Every queue
//     weighs 1, so the objective is the total queue time Σ (s_j − submit_j)
//     of [Bridi16] Eq. (2). Other partial-node jobs take the first fit.
//
// Solvers, in order: sat (seeded by the PBS list schedules) within the
// time limit, then the PBS FIFO list schedule, then the first fit. Every
// schedule passes solver.SolveWindow's checks (model.Check) before it
// is used, and the qrun commands then pass Check like every other.

// cpEligible says why a partial-node candidate cannot go to the cp
// scheduler, or "".
func (c *cluster) cpEligible(cand *candidate) string {
	j := cand.job
	if len(cand.chunks) != 1 {
		return fmt.Sprintf("its select has %d different chunks", len(cand.chunks))
	}
	if j.Place.Group != "" {
		return "place=group"
	}
	for k := range cand.chunks[0].labels {
		if c.checked[k] || k == "host" || k == "vnode" {
			return "its chunks name vnode property " + k
		}
	}
	// The first free vnode on which the place is exclusive, kept by place.
	name, ok := c.exclFree[j.Place]
	if !ok {
		for _, v := range c.vnodes {
			if v.free && v.n.Queue == "" && exclusiveOn(v.n, j.Place) {
				name = v.n.Name
				break
			}
		}
		if c.exclFree == nil {
			c.exclFree = map[pbs.Place]string{}
		}
		c.exclFree[j.Place] = name
	}
	if name != "" {
		return "it is exclusive on vnode " + name
	}
	if why := c.hostRules(cand, c.vnodes); why != "" {
		return why
	}
	return ""
}

// cpAmounts are the amounts of a unit the model counts: those fitState
// checks.
func (c *cluster) cpAmounts(u chunkReq) model.Resources {
	out := model.Resources{}
	for k, a := range u.amounts {
		if c.checks(k) {
			out[k] = a
		}
	}
	return out
}

// cpWindow builds the time-and-resource window of the cp candidates (see
// the reduction above). held are the vnodes first-fit jobs of this cycle
// take exclusively; wholeUntil the vnodes the whole-node starts take,
// each until the start's walltime ends; ff the first-fit starts of this
// cycle.
func (c *cluster) cpWindow(cands []*candidate, held map[string]bool, wholeUntil map[string]int64, ff []*Start) *model.Window {
	now := c.st.Now
	w := &model.Window{Time: now, Topology: c.topo, Cost: model.DefaultCostModel,
		Resources: make([]model.Resources, c.topo.NumNodes())}
	keys := map[string]bool{}
	for _, cand := range cands {
		u := cand.units[0]
		amounts := c.cpAmounts(u)
		for k := range amounts {
			keys[k] = true
		}
		place := model.Place{}
		switch cand.job.Place.Arrangement {
		case "pack":
			place.Arrangement = model.ArrangePack
		case "scatter", "vscatter":
			place.Arrangement = model.ArrangeScatter
		}
		w.Jobs = append(w.Jobs, model.Job{ID: cand.job.ID, Nodes: len(cand.units), Walltime: cand.walltime,
			Submit: cand.submit, Queue: cand.job.Queue, NWP: cand.nwp,
			Select: model.Select{{Count: len(cand.units), Amounts: amounts}}, Place: place})
	}
	in := map[string]*vnode{}
	for _, v := range c.vnodes {
		if v.free && v.n.Queue == "" && !held[v.n.Name] {
			in[v.n.Name] = v
			r := model.Resources{}
			for k := range keys {
				r[k] = v.n.Available[k]
			}
			w.Resources[v.id] = r
		}
	}
	busy := map[int]bool{}
	// used[vnode] sums what the listed running jobs use there.
	used := map[string]model.Resources{}
	addUse := func(id, vn string, amounts model.Resources, end int64, place pbs.Place) {
		v := in[vn]
		if v == nil {
			return
		}
		r := model.Resources{}
		for k := range keys {
			r[k] = amounts[k]
		}
		if used[vn] == nil {
			used[vn] = model.Resources{}
		}
		for k, a := range amounts {
			used[vn][k] += a
		}
		w.Running = append(w.Running, model.RunningJob{ID: id + "@" + vn, Nodes: []int{v.id}, End: max(end, now+1),
			Select: model.Select{{Count: 1, Amounts: r}}, Units: map[int]int{v.id: 1},
			Place: model.Place{Exclusive: exclusiveOn(v.n, place)}})
		busy[v.id] = true
	}
	for i := range c.st.Jobs.Jobs {
		j := &c.st.Jobs.Jobs[i]
		if len(j.ExecVnode) == 0 {
			continue
		}
		end := c.runningEnd(j)
		per := map[string]model.Resources{}
		for _, ch := range j.ExecVnode {
			for _, vu := range ch {
				if per[vu.Vnode] == nil {
					per[vu.Vnode] = model.Resources{}
				}
				for k, a := range vu.Amounts {
					per[vu.Vnode][k] += a
				}
			}
		}
		for _, vn := range slices.Sorted(maps.Keys(per)) {
			addUse(j.ID, vn, per[vn], end, j.Place)
		}
	}
	for _, vn := range slices.Sorted(maps.Keys(wholeUntil)) {
		if v := in[vn]; v != nil {
			addUse("whole-node start", vn, v.n.Available, wholeUntil[vn], pbs.Place{Sharing: "excl"})
		}
	}
	// Residual resources_assigned: jobs qstat did not list.
	for _, vn := range slices.Sorted(maps.Keys(in)) {
		v := in[vn]
		rest := model.Resources{}
		for k, a := range v.n.Assigned {
			if d := a - used[vn][k]; d > 0 && keys[k] {
				rest[k] = d
			}
		}
		if len(rest) > 0 {
			addUse("resources_assigned", vn, rest, now+defaultWalltime, pbs.Place{Sharing: "shared"})
		}
	}
	for _, s := range ff {
		per := map[string]model.Resources{}
		for _, ch := range s.Chunks {
			if per[ch.Vnode] == nil {
				per[ch.Vnode] = model.Resources{}
			}
			for k, a := range c.cpAmounts(chunkReq{amounts: ch.Amounts}) {
				per[ch.Vnode][k] += a
			}
			if _, ok := ch.Amounts["ncpus"]; !ok {
				per[ch.Vnode]["ncpus"]++ // PBS's default ncpus=1
			}
		}
		wall, place := int64(defaultWalltime), pbs.Place{}
		for _, cand := range c.cands {
			if cand.job.ID == s.Job {
				wall, place = cand.walltime, cand.job.Place
			}
		}
		for _, vn := range slices.Sorted(maps.Keys(per)) {
			addUse(s.Job, vn, per[vn], now+wall, place)
		}
	}
	for _, v := range in {
		if !busy[v.id] {
			w.Idle = append(w.Idle, v.id)
		}
	}
	slices.Sort(w.Idle)
	return w
}

// schedulePartialCP schedules the cp candidates. It returns the starts of
// now and the deferrals (later starts with their planned time); ok is
// false when every scheduler failed (the caller falls back to the first
// fit), with the failures in why.
func schedulePartialCP(ctx context.Context, c *cluster, cands []*candidate, held map[string]bool, wholeUntil map[string]int64, ff []*Start,
	opt Options, p *placement) (starts []*Start, deferred []Reason, why string, ok bool) {
	w := c.cpWindow(cands, held, wholeUntil, ff)
	scheds := opt.Schedulers
	p.CP = &SolveDoc[float64]{Jobs: len(w.Jobs), Status: "none", Solver: "none"}
	// The schedulers share four fifths of half the time limit (no more
	// than the cycle has left); compacting their schedule takes the rest.
	end := time.Now().Add(opt.left(opt.TimeLimit / 2))
	until := time.Now().Add(time.Until(end) * 4 / 5)
	res, failures := firstAnswer(ctx, w, scheds, "schedule", func(s solver.Scheduler) (solver.Options, error) {
		left := max(time.Millisecond, time.Until(until))
		if _, ok := s.(sat.Solver); ok && len(w.Jobs) > 0 && !cp.Fits(cp.Options(w), left) {
			// sat would only run its list schedules, which do not stop
			// with a partial schedule: the next scheduler takes the time.
			return solver.Options{}, fmt.Errorf("the window of %d jobs on %d usable vnodes is too large to model within %v",
				len(w.Jobs), cp.Options(w)/len(w.Jobs), left.Round(time.Millisecond))
		}
		return solver.Options{TimeLimit: left}, nil
	})
	if res == nil {
		return nil, nil, errors.Join(failures...).Error(), false
	}
	if len(failures) > 0 {
		p.CP.Fallback = fmt.Sprintf("%v; the %s schedule was used", errors.Join(failures...), res.Solver)
		p.Notes = append(p.Notes, "partial-node scheduler failed, fallback used: "+p.CP.Fallback)
	}
	checked := slices.Clone(res.Allocations)
	if !heuristics.CompactNow(w, res.Allocations, end) {
		p.Notes = append(p.Notes, "the time limit stopped the compaction of the partial-node starts onto vnodes in use")
	}
	if err := model.Check(w, res.Allocations); err != nil {
		// Not expected: CompactNow keeps the schedule feasible. Keep
		// the schedule the scheduler gave, which passed the same check.
		copy(res.Allocations, checked)
		p.Notes = append(p.Notes, fmt.Sprintf("compacting the partial-node starts gave an infeasible schedule, which was dropped: %v", err))
	}
	*p.CP = solveDoc(w, res, p.CP.Fallback)
	p.CPWindow, p.CPAllocs = w, res.Allocations
	for _, a := range res.Allocations {
		cand := cands[a.Job]
		nodes := slices.Sorted(maps.Keys(a.Units))
		if a.Start > w.Time {
			var on []string
			for _, id := range nodes {
				on = append(on, fmt.Sprintf("%s×%d", w.Topology.Name(id), a.Units[id]))
			}
			deferred = append(deferred, Reason{cand.job.ID, fmt.Sprintf("planned start %s (in %s) on %s by the %s schedule of the partial-node jobs",
				time.Unix(a.Start, 0).UTC().Format(time.RFC3339), time.Duration(a.Start-w.Time)*time.Second, strings.Join(on, ", "), res.Solver)})
			continue
		}
		st := &Start{Job: cand.job.ID, Queue: cand.job.Queue, Path: PathPartial, Placement: res.Solver, Why: cand.path, Cost: -1}
		for _, id := range nodes {
			for range a.Units[id] {
				st.Chunks = append(st.Chunks, VChunk{Vnode: w.Topology.Name(id), Amounts: cand.units[0].written, Labels: cand.units[0].wlabels})
			}
		}
		starts = append(starts, st)
	}
	usable := 0
	for _, r := range w.Resources {
		if r != nil {
			usable++
		}
	}
	for _, df := range res.Deferred {
		why := df.Reason
		if strings.Contains(why, "never fit") {
			// The job fits the owned vnodes when they are empty (plan
			// checked that): what stops it is which vnodes are free now.
			why = fmt.Sprintf("its chunks fit none of the %s the partial-node schedule may use (free, in no queue, not held by this cycle's whole-node starts), even empty: %s",
				plural(usable, "vnode"), why)
		}
		deferred = append(deferred, Reason{w.Jobs[df.Job].ID, "no start in the partial-node schedule: " + why})
	}
	return starts, deferred, "", true
}
