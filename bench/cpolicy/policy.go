package cpolicy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// A Job is a waiting job.
type Job struct {
	// ID names the job (for messages only).
	ID string
	// Submit is the arrival time and Request the requested run time (the
	// user's estimate), in seconds; a Request below 1 counts as 1.
	Submit, Request int64
	// Nodes is the number of nodes the job needs.
	Nodes int
}

// A Running job holds Nodes nodes until End, its start plus its request
// (an estimate: an End at or before the decision time means the job
// overran, and it is taken to end one second after it).
type Running struct {
	End   int64
	Nodes int
}

// Objectives of Policy.Objective.
const (
	// BSLD weights each job's queue time by 1/max(Request, 10 s).
	BSLD = "bsld"
	// Wait weights every job's queue time alike.
	Wait = "wait"
)

// Defaults of Policy's zero fields.
const (
	// DefaultLimit bounds a decision's search. 15 ms: a benchmark
	// sequence of 1,024 jobs has about 2,000 decision points, of which
	// on a loaded trace (Lublin-1) more than half need the search, which
	// then takes the whole limit (solver/sat rarely proves a window of
	// tens of jobs); at 20 ms the RLScheduler benchmark's 20 sequences
	// took about 5 minutes on a 2-core machine, at 15 ms about 4.
	DefaultLimit = 15 * time.Millisecond
	// DefaultK is the window's job count.
	DefaultK = 128
	// DefaultBackfill is how many waiting jobs after the window may be
	// backfilled: a decision costs O(K + Backfill), and a log whose
	// queue holds 10⁵ jobs would otherwise cost O(queue) a decision.
	DefaultBackfill = 256
	// DefaultSlots is the number of grid slots the planning horizon is
	// cut into.
	DefaultSlots = 128
	// minSearch is the least time left for which the search is started.
	minSearch = 2 * time.Millisecond
)

// Policy decides, at each decision point, which waiting jobs start. Its
// zero value is the default policy.
type Policy struct {
	// Limit bounds each decision (0: DefaultLimit); the whole Decide
	// returns within Limit plus a few milliseconds.
	Limit time.Duration
	// K is how many waiting jobs, the first by arrival, form the window
	// (0: DefaultK).
	K int
	// Backfill is how many waiting jobs after the window (the next by
	// arrival that fit the cluster) may start now, each when it fits for
	// its whole request in the room the window's schedule leaves (0:
	// DefaultBackfill; negative: none). Without it, a window whose
	// jobs cannot start leaves nodes idle however many small jobs wait
	// behind it.
	Backfill int
	// Objective is BSLD ("" too) or Wait.
	Objective string
	// Slots is the number of grid slots of the planning horizon (0:
	// DefaultSlots).
	Slots int
	// NoSearch decides with the seeds alone (no solver/sat).
	NoSearch bool
	// CallerChecks makes Decide leave its model.Check of the seed
	// schedule to the caller: it hands the decision's window and the
	// seed's allocations in Stats.Unchecked instead (and changes neither
	// after), and the caller must check them before it relies on what
	// Decide returns — bench/sim's simulator checks them on its checker
	// goroutine, beside the simulation, and stops at the first failure. A search's schedule is always checked in
	// Decide (one that fails is not used). The default (false) checks
	// every schedule Decide acts on.
	CallerChecks bool
}

// Unchecked is a schedule Decide left to its caller to check
// (Policy.CallerChecks): the decision's arguments, copied, and the start
// slots of its jobs.
type Unchecked struct {
	now      int64
	capacity int
	running  []Running
	waiting  []Job // the schedule's jobs, in order
	obj      string
	g        int64
	slots    []int
	what     string // the schedule, for SeedError
}

// newUnchecked returns the check of the schedule what that starts the
// jobs (indices into waiting) at slots on the grid g.
func newUnchecked(now int64, capacity int, running []Running, waiting []Job, jobs []int, obj string, g int64, slots []int, what string) *Unchecked {
	u := &Unchecked{now: now, capacity: capacity, running: slices.Clone(running), waiting: make([]Job, len(jobs)),
		obj: obj, g: g, slots: slots, what: what}
	for i, wi := range jobs {
		u.waiting[i] = waiting[wi]
		u.waiting[i].ID = jobID(&waiting[wi], wi) // as the window names it
	}
	return u
}

// decision builds the schedule's window.
func (u *Unchecked) decision() *decision {
	sel := make([]int, len(u.waiting))
	for i := range sel {
		sel[i] = i
	}
	return newDecision(u.now, u.capacity, u.running, u.waiting, sel, u.obj, u.g)
}

// Window returns the schedule's window (built anew).
func (u *Unchecked) Window() *model.Window { return u.decision().w }

// Allocations returns the schedule as allocations of the window's jobs
// (new lists).
func (u *Unchecked) Allocations() []model.Allocation { return u.decision().allocations(u.slots, true) }

// Size returns the window's jobs and running jobs: the work of Check.
func (u *Unchecked) Size() int { return len(u.waiting) + len(u.running) }

// Check builds the schedule's window and runs model.Check on the
// schedule in it; it words a failure as Decide does (SeedError).
func (u *Unchecked) Check() error {
	d := u.decision()
	if err := model.Check(d.w, d.allocations(u.slots, false)); err != nil {
		return SeedError(u.now, u.what, err)
	}
	return nil
}

// Stats describe one decision.
type Stats struct {
	// Trivial: decided without a model (nothing fits, or everything
	// fits).
	Trivial bool
	// Jobs are the window's jobs and Grid its granularity g in seconds
	// (0 when trivial).
	Jobs int
	Grid int64
	// Seed names the best seed schedule.
	Seed string
	// Searched: solver/sat ran; Status is its status (Unknown when it did
	// not run) and SearchErr its error, if any.
	Searched  bool
	Status    solver.Status
	SearchErr error
	// Fallback: the seed's schedule was used (no search, or the search
	// found nothing better or failed); Optimal: the schedule used is
	// proven optimal on the grid (the seed reached the lower bound, or
	// the search proved it).
	Fallback, Optimal bool
	// Improved: the search's schedule is strictly better than the seed's.
	Improved bool
	// Backfilled counts the jobs after the window started now.
	Backfilled int
	// Objective is the model's Eq. (2) value of the schedule used, and
	// SeedObjective the seed's.
	Objective, SeedObjective float64
	// Elapsed is the decision's wall time.
	Elapsed time.Duration
	// Unchecked, with Policy.CallerChecks, is the seed schedule the
	// caller must check (nil when the decision built none: Trivial).
	Unchecked *Unchecked
}

// ErrInput is wrapped by the errors of inconsistent arguments.
var ErrInput = errors.New("cpolicy: bad input")

// Decide returns the indices into waiting of the jobs to start at now on a
// cluster of nodes identical nodes, free of them idle, the running jobs
// holding the others: the window's jobs (the first K by arrival that fit
// the cluster) its schedule starts now, and the jobs after it backfilled
// beside that schedule (see the package doc). The started jobs' nodes sum
// to at most free.
//
// It errs when the arguments are inconsistent (a job of no nodes, free
// outside [0, nodes], more nodes running than not free) or when ctx has
// ended on entry; otherwise it answers, within Limit.
func (p *Policy) Decide(ctx context.Context, now int64, nodes, free int, running []Running, waiting []Job) (start []int, st Stats, err error) {
	begin := time.Now()
	defer func() { st.Elapsed = time.Since(begin) }()
	if err := ctx.Err(); err != nil {
		return nil, st, err
	}
	obj, capacity, err := p.check(nodes, free, running, waiting)
	if err != nil {
		return nil, st, err
	}

	ws := p.selectJobs(waiting, capacity, free)
	sel := ws.sel
	// Trivial cases, when nothing after the window fits now: nothing of
	// the window fits, or all of it does.
	if !ws.extraFits {
		switch {
		case len(sel) == 0 || ws.minNodes > free:
			st.Trivial, st.Optimal = true, true
			return nil, st, nil
		case ws.sum <= free:
			st.Trivial, st.Optimal = true, true
			slices.Sort(sel)
			return sel, st, nil
		}
	}

	limit := p.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	ctx, cancel := context.WithDeadline(ctx, begin.Add(limit))
	defer cancel()

	pl := newPlan(now, capacity, running, waiting, sel, obj, p.Slots)
	st.Jobs, st.Grid = len(sel), pl.g
	prof := newProfile(pl)
	seed := bestSeed(pl, prof)
	st.Seed = seed.name
	st.SeedObjective = pl.objective(seed.slots)
	st.Objective = st.SeedObjective
	st.Fallback = true
	st.Optimal = seed.w == pl.lowerBound()
	slots, what := seed.slots, "seed "+seed.name // the schedule used
	checked := false                             // by the search's checks
	if !st.Optimal && !p.NoSearch && time.Until(begin.Add(limit)) >= minSearch {
		var err error
		if slots, err = p.search(ctx, &st, pl, seed, running, waiting, sel, obj); err != nil {
			return nil, st, err
		}
		if !st.Fallback {
			what = "the search's schedule"
		}
		checked = true
	}

	// The jobs the schedule starts now, and after the window's the
	// jobs backfilled into the room it leaves.
	for i, s := range slots {
		if s == 0 {
			start = append(start, sel[i])
		}
	}
	bf := backfill(pl, prof, slots, waiting, ws.extra)
	st.Backfilled = len(bf)
	start = append(start, bf...)
	used := 0
	for _, i := range start {
		used += waiting[i].Nodes
	}
	if used > free {
		return nil, st, fmt.Errorf("cpolicy: t=%d: the schedule starts %d nodes now, %d are free (a bug)", now, used, free)
	}

	// The check of the schedule acted on, backfilled jobs (at slot 0)
	// included: here, or by the caller.
	if len(bf) > 0 || !checked {
		if len(bf) > 0 {
			what += fmt.Sprintf(" with %d jobs backfilled", len(bf))
		}
		jobs := append(slices.Clone(sel), bf...)
		at := append(slices.Clone(slots), make([]int, len(bf))...)
		u := newUnchecked(now, capacity, running, waiting, jobs, obj, pl.g, at, what)
		if p.CallerChecks {
			st.Unchecked = u
		} else if err := u.Check(); err != nil {
			return nil, st, err
		}
	}
	slices.Sort(start)
	return start, st, nil
}

// check returns Decide's objective and the cluster's usable nodes (free
// and running), or an ErrInput error naming what is inconsistent.
func (p *Policy) check(nodes, free int, running []Running, waiting []Job) (obj string, capacity int, err error) {
	if nodes < 1 || free < 0 || free > nodes {
		return "", 0, fmt.Errorf("%w: %d free of %d nodes", ErrInput, free, nodes)
	}
	obj = p.Objective
	if obj == "" {
		obj = BSLD
	}
	if obj != BSLD && obj != Wait {
		return "", 0, fmt.Errorf("%w: objective %q (want %s or %s)", ErrInput, obj, BSLD, Wait)
	}
	capacity = free
	for _, r := range running {
		if r.Nodes < 1 {
			return "", 0, fmt.Errorf("%w: a running job of %d nodes", ErrInput, r.Nodes)
		}
		capacity += r.Nodes
	}
	if capacity > nodes {
		return "", 0, fmt.Errorf("%w: %d nodes free and %d running on a cluster of %d", ErrInput, free, capacity-free, nodes)
	}
	for _, j := range waiting {
		if j.Nodes < 1 {
			return "", 0, fmt.Errorf("%w: job %s needs %d nodes", ErrInput, j.ID, j.Nodes)
		}
	}
	return obj, capacity, nil
}

// A selection is a decision's window and its backfill candidates.
type selection struct {
	// sel is the window: the first K waiting jobs by arrival that fit the
	// cluster (indices into waiting); minNodes and sum are of their
	// nodes.
	sel           []int
	minNodes, sum int
	// extra are the next Backfill such jobs; extraFits says that one of
	// them fits the free nodes.
	extra     []int
	extraFits bool
}

// Sizes returns the window's job count K and how many jobs after it may
// be backfilled, the defaults resolved (0 backfilled: none).
func (p *Policy) Sizes() (k, backfill int) {
	k, backfill = p.K, p.Backfill
	if k <= 0 {
		k = DefaultK
	}
	if backfill == 0 {
		backfill = DefaultBackfill
	}
	return k, max(backfill, 0)
}

// selectJobs returns the decision's window and backfill candidates.
func (p *Policy) selectJobs(waiting []Job, capacity, free int) selection {
	k, b := p.Sizes()
	order := make([]int, len(waiting))
	for i := range order {
		order[i] = i
	}
	if !slices.IsSortedFunc(waiting, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }) {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(waiting[a].Submit, waiting[b].Submit) })
	}
	ws := selection{sel: make([]int, 0, min(k, len(waiting))), minNodes: math.MaxInt}
	for _, i := range order {
		n := waiting[i].Nodes
		switch {
		case n > capacity:
		case len(ws.sel) < k:
			ws.sel = append(ws.sel, i)
			ws.minNodes = min(ws.minNodes, n)
			ws.sum += n
		case len(ws.extra) < b:
			ws.extra = append(ws.extra, i)
			ws.extraFits = ws.extraFits || n <= free
		}
		if len(ws.extra) == b && len(ws.sel) == k {
			break
		}
	}
	return ws
}

// search runs solver/sat on the decision's window, seeded with the seed
// (checked first) and the catalog's list schedules, and returns the
// start slots of the schedule to use: the search's when it passes
// model.Check and is better than the seed or proven optimal, else the
// seed's. It records what happened in st.
func (p *Policy) search(ctx context.Context, st *Stats, pl *plan, seed seed, running []Running, waiting []Job, sel []int, obj string) ([]int, error) {
	st.Searched = true
	d := newDecision(pl.now, pl.capacity, running, waiting, sel, obj, pl.g)
	allocs := d.allocations(seed.slots, true)
	if err := model.Check(d.w, allocs); err != nil {
		return nil, SeedError(pl.now, "seed "+seed.name, err)
	}
	m, err := cp.Build(d.w, d.g)
	if err != nil {
		return nil, fmt.Errorf("cpolicy: t=%d: %w", pl.now, err)
	}
	if len(m.Jobs) != len(sel) {
		return nil, fmt.Errorf("cpolicy: t=%d: the model defers %d of the window's %d jobs (a bug)", pl.now, len(sel)-len(m.Jobs), len(sel))
	}
	initial := append([]solver.Scheduler{fixed{name: seed.name, allocs: allocs}}, catalog.ListSchedulers()...)
	sch, err := sat.Solver{Initial: initial, Sequential: true}.Solve(ctx, &solver.ScheduleProblem{Window: d.w, Granularity: d.g})
	switch {
	case err != nil:
		st.SearchErr = err
	case sch.Status == solver.Unknown || len(sch.Allocations) != len(m.Jobs):
		st.Status = sch.Status
	default:
		st.Status = sch.Status
		if cerr := model.Check(d.w, sch.Allocations); cerr != nil {
			st.SearchErr = fmt.Errorf("cpolicy: t=%d: the search's schedule fails the check: %w", pl.now, cerr)
			break
		}
		// The search's schedule when it is better, or proven optimal.
		slots, _, eerr := m.Encode(sch.Allocations)
		if eerr != nil {
			break
		}
		if w := m.Weighted(slots); w < seed.w || w == seed.w && sch.Status == solver.Optimal {
			st.Fallback = false
			st.Objective = m.Objective(slots)
			st.Optimal = sch.Status == solver.Optimal
			st.Improved = w < seed.w
			return slots, nil
		}
	}
	return seed.slots, nil
}

// backfill returns the jobs of extra (indices into waiting, by arrival)
// that start now: each in turn when it fits, for its whole requested time
// on the plan's grid, in the capacity left by the running jobs, the
// window's jobs at their slots and the jobs backfilled before it — so
// that no window job's planned start moves (conservative backfilling).
// It reads the capacity the running jobs leave from p, the plan's
// profile, and writes p.free.
func backfill(pl *plan, p *profile, slots []int, waiting []Job, extra []int) []int {
	if len(extra) == 0 {
		return nil
	}
	free := p.free
	copy(free, p.base)
	for i, s := range slots {
		j := &pl.jobs[i]
		for k := s; k < min(s+j.dur, len(free)); k++ {
			free[k] -= j.nodes
		}
	}
	var out []int
	for _, wi := range extra {
		j := &waiting[wi]
		dur := int(min(ceilDiv(max(j.Request, 1), pl.g), int64(len(free))))
		if free[0] < j.Nodes || slices.Min(free[:dur]) < j.Nodes {
			continue // past the profile's end, all is free
		}
		for k := range dur {
			free[k] -= j.Nodes
		}
		out = append(out, wi)
	}
	return out
}

// SeedError is Decide's error when the schedule what (its seed, "seed
// NAME", or the search's, with the jobs backfilled), at now, fails the
// check with err.
func SeedError(now int64, what string, err error) error {
	return fmt.Errorf("cpolicy: t=%d: %s: %w", now, what, err)
}

// allocations returns the schedule of start slots (one per window job)
// as the window's allocations: one unit on the pseudo-node each. Unless
// fresh, the allocations share one node list and one units map, which
// must not change (model.Check only reads them).
func (d *decision) allocations(slots []int, fresh bool) []model.Allocation {
	out := make([]model.Allocation, len(slots))
	nodes, units := []int{0}, map[int]int{0: 1}
	for i, s := range slots {
		if fresh && i > 0 {
			nodes, units = []int{0}, map[int]int{0: 1}
		}
		out[i] = model.Allocation{Job: i, Nodes: nodes, Start: d.w.Time + int64(s)*d.g, Units: units}
	}
	return out
}

// A decision is the window of one Decide: one pseudo-node (id 0) whose
// resource "nodes" has the usable nodes as capacity.
type decision struct {
	w *model.Window
	g int64
}

// resource is the pseudo-node's one resource.
const resource = "nodes"

// pseudoTopology is the one-node topology of every decision window.
var pseudoTopology = func() *model.Topology {
	t, err := model.NewLayout(1, 1, 1)
	if err != nil {
		panic(err)
	}
	return t
}()

// chunks are the select statements of a decision's jobs and running
// jobs: one chunk of n nodes' worth of the resource for n nodes, made once
// per n and shared (nothing changes a window's statements).
type chunks map[int]model.Select

func (c chunks) of(n int) model.Select {
	sel, ok := c[n]
	if !ok {
		sel = model.Select{{Count: 1, Amounts: model.Resources{resource: int64(n)}}}
		c[n] = sel
	}
	return sel
}

// runningIDs are the IDs of a decision's running jobs: "r0", "r1", …
var runningIDs = func() []string {
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = "r" + strconv.Itoa(i)
	}
	return ids
}()

func runningID(i int) string {
	if i < len(runningIDs) {
		return runningIDs[i]
	}
	return "r" + strconv.Itoa(i)
}

// newDecision builds the window of the jobs sel (indices into waiting) on
// the grid g.
func newDecision(now int64, capacity int, running []Running, waiting []Job, sel []int, obj string, g int64) *decision {
	d := &decision{g: g}
	w := &model.Window{Time: now, Topology: pseudoTopology, Cost: model.DefaultCostModel,
		Resources: []model.Resources{{resource: int64(capacity)}}, Queues: map[string]model.Queue{}}
	if len(running) == 0 {
		w.Idle = []int{0}
	}
	w.Running = make([]model.RunningJob, 0, len(running))
	w.Jobs = make([]model.Job, 0, len(sel))
	chunk := chunks{}
	node0 := []int{0} // every job's one node (read only)
	for i, r := range running {
		w.Running = append(w.Running, model.RunningJob{ID: runningID(i), Nodes: node0, End: max(r.End, now+1), Select: chunk.of(r.Nodes)})
	}
	queues := map[int64]string{} // the queue of each expected wait
	for i, wi := range sel {
		j := &waiting[wi]
		req := max(j.Request, 1)
		q, e := "all", int64(1)
		if obj == BSLD {
			e = roundEWT(max(req, 10))
		}
		if name, ok := queues[e]; ok {
			q = name
		} else {
			if obj == BSLD {
				q = "e" + strconv.FormatInt(e, 10)
			}
			queues[e] = q
			w.Queues[q] = model.Queue{ExpectedWait: e}
		}
		w.Jobs = append(w.Jobs, model.Job{ID: "w" + strconv.Itoa(i) + ":" + jobID(j, wi), Nodes: j.Nodes, Walltime: req,
			Submit: min(j.Submit, now), Queue: q, Select: chunk.of(j.Nodes)})
	}
	d.w = w
	return d
}

// jobID names waiting job j, at index wi, in messages: its ID, or its
// index when it has none.
func jobID(j *Job, wi int) string {
	if j.ID == "" {
		return strconv.Itoa(wi)
	}
	return j.ID
}

// roundEWT rounds e ≥ 1 to the nearest (in ratio) of 2^k and 3·2^(k−1),
// so that the least common multiple of the rounded values is at most
// three times the largest.
func roundEWT(e int64) int64 {
	p := int64(1)
	for p*2 <= e {
		p *= 2
	}
	// p ≤ e < 2p; candidates p, 3p/2 (p ≥ 2), 2p.
	best, ratio := p, float64(e)/float64(p)
	if p >= 2 {
		if r := math.Max(float64(e)/float64(3*p/2), float64(3*p/2)/float64(e)); r < ratio {
			best, ratio = 3*p/2, r
		}
	}
	if r := float64(2*p) / float64(e); r < ratio {
		best = 2 * p
	}
	return best
}

// fixed is a solver.Scheduler that answers a schedule computed before:
// the seed, as solver/sat's first incumbent.
type fixed struct {
	name   string
	allocs []model.Allocation
}

func (f fixed) Name() string { return "seed-" + f.name }

func (f fixed) Solve(_ context.Context, p *solver.ScheduleProblem) (*solver.Schedule, error) {
	return &solver.Schedule{Status: solver.Feasible, Allocations: slices.Clone(f.allocs), Objective: model.WeightedQueueTime(p.Window, f.allocs), Bound: solver.NoBound, Encoding: "cp", Solver: f.Name()}, nil
}
