package pbsched

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/output"
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
// schedule passes solver.ScheduleWindow's checks (model.Check) before it
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

// cpScheduleFunc makes the partial-node scheduler chain: the first that
// returns a schedule wins.
type cpScheduleFunc func() []solver.Scheduler

// DefaultCPSchedulers is sat seeded by the PBS list schedules, then the
// PBS FIFO list schedule alone, which at the deadline keeps the jobs it
// scheduled (the same starts as its whole schedule) and defers the rest.
func DefaultCPSchedulers() []solver.Scheduler {
	fifo := heuristics.PBSFifo()
	fifo.Truncate = true
	return []solver.Scheduler{sat.Solver{Initial: catalog.ListSchedulers()}, fifo}
}

// CPDoc summarises the partial-node cp schedule of a cycle.
type CPDoc struct {
	Jobs      int      `json:"jobs"`
	Status    string   `json:"status"`
	Solver    string   `json:"solver"`
	Objective *float64 `json:"objective"`
	Bound     *float64 `json:"bound"`
	ElapsedMS float64  `json:"elapsed_ms"`
	Fallback  string   `json:"fallback,omitempty"`
}

// schedulePartialCP schedules the cp candidates. It returns the starts of
// now and the deferrals (later starts with their planned time); ok is
// false when every scheduler failed (the caller falls back to the first
// fit), with the failures in why.
func schedulePartialCP(ctx context.Context, c *cluster, cands []*candidate, held map[string]bool, wholeUntil map[string]int64, ff []*Start,
	opt Options, p *placement) (starts []*Start, deferred []Reason, why string, ok bool) {
	w := c.cpWindow(cands, held, wholeUntil, ff)
	scheds := DefaultCPSchedulers()
	if opt.NewSchedulers != nil {
		scheds = opt.NewSchedulers()
	}
	p.CP = &CPDoc{Jobs: len(w.Jobs), Status: "none", Solver: "none"}
	var failures []error
	var res *solver.ScheduleResult
	// The schedulers share four fifths of half the time limit (no more
	// than the cycle has left); compacting their schedule takes the rest.
	end := time.Now().Add(opt.left(opt.TimeLimit / 2))
	until := time.Now().Add(time.Until(end) * 4 / 5)
	for _, s := range scheds {
		left := max(time.Millisecond, time.Until(until))
		if ss, ok := s.(sat.Solver); ok && len(w.Jobs) > 0 && !cp.Fits(cp.Options(w), left) {
			// sat would only run its list schedules, which do not stop
			// with a partial schedule: the next scheduler takes the time.
			failures = append(failures, fmt.Errorf("%s: the window of %d jobs on %d usable vnodes is too large to model within %v",
				ss.Name(), len(w.Jobs), cp.Options(w)/len(w.Jobs), left.Round(time.Millisecond)))
			continue
		}
		r, err := solver.ScheduleWindow(ctx, w, s, solver.ScheduleOptions{}, left)
		switch {
		case err != nil:
			failures = append(failures, fmt.Errorf("%s: %w", s.Name(), err))
			continue
		case r.Status == solver.Unknown || r.Status == solver.Infeasible:
			failures = append(failures, fmt.Errorf("%s: %s, no schedule", s.Name(), r.Status))
			continue
		}
		res = r
		break
	}
	if res == nil {
		return nil, nil, errors.Join(failures...).Error(), false
	}
	if len(failures) > 0 {
		p.CP.Fallback = fmt.Sprintf("%v; the %s schedule was used", errors.Join(failures...), res.Solver)
		p.Notes = append(p.Notes, "partial-node scheduler failed, fallback used: "+p.CP.Fallback)
	}
	checked := slices.Clone(res.Allocations)
	if !compactNow(w, res.Allocations, end) {
		p.Notes = append(p.Notes, "the time limit stopped the compaction of the partial-node starts onto vnodes in use")
	}
	if err := model.Check(w, res.Allocations); err != nil {
		// Not expected: compactNow keeps the schedule feasible. Keep
		// the schedule the scheduler gave, which passed the same check.
		copy(res.Allocations, checked)
		p.Notes = append(p.Notes, fmt.Sprintf("compacting the partial-node starts gave an infeasible schedule, which was dropped: %v", err))
	}
	head := *res // the summary only: its document would list every allocation
	head.Allocations, head.Deferred = nil, nil
	d := output.Answer(w, &head)
	p.CP.Status, p.CP.Solver, p.CP.Objective, p.CP.Bound, p.CP.ElapsedMS = d.Status, d.Solver, d.Objective, d.Bound, d.ElapsedMS
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

// compactNow moves the units that start now off idle vnodes onto vnodes
// already in use (by running jobs or by other jobs starting now), in
// topology order, wherever the schedule stays feasible: the starts and so
// the objective do not change, and idle vnodes stay whole for the
// whole-node window. allocs, which must be a checked schedule of w
// (solver.ScheduleWindow's), is changed in place; the moves are those of
// trying every unit node k of every job starting now, in allocation
// order, against every vnode m in use, in id order, and keeping the first
// move model.Check would accept.
//
// Each move is checked incrementally, on the two vnodes it changes: job
// i leaving k cannot break k, and on m the rules of model.Check for a
// units allocation (its place, the reservations, and every vnode's
// capacities and exclusivity at every start on it, as checkNode states
// them) are applied to m's uses alone. When deadline (zero: none) passes,
// compaction stops with the moves made so far: the schedule is then
// valid, only less compact. It returns false when the deadline stopped it.
func compactNow(w *model.Window, allocs []model.Allocation, deadline time.Time) bool {
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

// compaction is compactNow's view of the schedule: the uses of every
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
	uses [][]cUse
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

// cUse is one use of one vnode over [from, to), as checkUnits' nodeUse.
type cUse struct {
	from, to int64
	use      []int64 // nil: nothing counted
	excl     bool
	units    bool
	alloc    bool
	job      int // the allocation's index; -1 for a running job
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
	cs := &compaction{w: w, allocs: allocs, uses: make([][]cUse, n), own: make([]map[int]int, len(allocs)),
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
			u := cUse{from: math.MinInt64, to: r.End, excl: r.Select == nil || r.Place.Exclusive, job: -1}
			switch {
			case r.Select == nil:
			case r.Units != nil && len(r.Select) == 1:
				u.use = vec(r.Select[0].Amounts, int64(r.Units[k]))
			default:
				u.use = make([]int64, len(cs.res))
				for _, c := range r.Select {
					for res, v := range c.Amounts {
						u.use[index[res]] += v * int64(c.Count)
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
				cs.add(k, cUse{from: a.Start, to: end, excl: true, alloc: true, job: i})
			}
			continue
		}
		if job.Select != nil {
			cs.per[i] = vec(job.Select[0].Amounts, 1)
		}
		for _, k := range slices.Sorted(maps.Keys(a.Units)) {
			u := cUse{from: a.Start, to: end, excl: job.Select == nil || job.Place.Exclusive, units: true, alloc: true, job: i}
			if cs.per[i] != nil {
				u.use = scaledVec(cs.per[i], a.Units[k])
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
func (cs *compaction) add(k int, u cUse) {
	cs.uses[k] = append(cs.uses[k], u)
	if u.from <= cs.w.Time && cs.w.Time < u.to {
		for r, a := range u.use {
			cs.usedNow[k][r] += a
		}
	}
}

// inUse is compactNow's test: vnode k is not idle, or an allocation
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
		if u.excl && !u.alloc && u.from <= cs.w.Time && cs.w.Time < u.to {
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
	// m's uses with job i's new use, checked as checkNode does.
	uses := slices.Clone(cs.uses[m])
	mine := cUse{from: from, to: to, excl: job.Select == nil || job.Place.Exclusive, units: true, alloc: true, job: i}
	if cs.per[i] != nil {
		mine.use = scaledVec(cs.per[i], after)
	}
	at, had := cs.own[i][m]
	if had {
		uses[at] = mine
	} else {
		uses = append(uses, mine)
	}
	if !nodeUsesFit(uses, cs.capacity[m]) {
		return false
	}
	// Commit: job i leaves k and has after units on m.
	units := maps.Clone(a.Units)
	delete(units, k)
	units[m] = after
	a.Units, a.Nodes = units, slices.Sorted(maps.Keys(units))
	kat := cs.own[i][k]
	old := cs.uses[k][kat]
	if old.from <= cs.w.Time && cs.w.Time < old.to {
		for r, v := range old.use {
			cs.usedNow[k][r] -= v
		}
	}
	cs.uses[k][kat] = cUse{job: -2}
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

// nodeUsesFit applies checkNode's rules to one vnode's uses: at the start
// of every allocation, the uses active then fit the capacities and no
// exclusive use shares the vnode with a units use, whenever a units
// allocation is active.
func nodeUsesFit(uses []cUse, capacity []int64) bool {
	hasUnits := false
	for _, u := range uses {
		hasUnits = hasUnits || u.units
	}
	if !hasUnits {
		return true
	}
	total := make([]int64, len(capacity))
	for si, s := range uses {
		if !s.alloc {
			continue
		}
		t := s.from
		unitsActive := false
		clear(total)
		for _, o := range uses {
			if o.from <= t && t < o.to {
				unitsActive = unitsActive || o.units
				for r, v := range o.use {
					total[r] += v
				}
			}
		}
		if !unitsActive {
			continue
		}
		for oi, o := range uses {
			if oi != si && o.from <= t && t < o.to && (s.excl || o.excl) && (s.units || o.units) {
				return false
			}
		}
		for r, v := range total {
			if v > capacity[r] {
				return false
			}
		}
	}
	return true
}
