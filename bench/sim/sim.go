package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Config configures a simulation.
type Config struct {
	// Topology is the cluster; only its first Nodes nodes are used when
	// Nodes > 0 (a layout rounded up to whole leaf switches).
	Topology     *model.Topology
	TopologySpec model.TopologySpec
	Nodes        int
	Cost         model.CostModel
	// Policy is "window" or a per-job policy: "fcfs", "easy", "sjf",
	// "saf", "drf", "tetris", "pbs-fifo", "pbs-walltime" (see Policies).
	Policy string
	// Tau is the window period, in seconds (window policy).
	Tau int64
	// Solver solves each window (window policy).
	Solver solver.Solver
	// MaxJobs caps the multi-node jobs per window (0: no cap).
	MaxJobs int
	// TimeLimit bounds each window's solve (0: none).
	TimeLimit time.Duration
	// Check runs model.Check on every allocation (on by default in
	// Default; tests always keep it).
	Check bool
}

// A JobResult is one job's outcome.
type JobResult struct {
	ID                 string
	Submit, Start, End int64
	Nodes              []int
	Cost               int64
}

// Wait returns Start − Submit.
func (j *JobResult) Wait() int64 { return j.Start - j.Submit }

// Result is a simulation's outcome.
type Result struct {
	Jobs []JobResult
	// Dropped counts trace jobs larger than the cluster (never runnable).
	Dropped int
	// Windows counts solved windows; SolveTimes their latencies.
	Windows    int
	SolveTimes []time.Duration
	// Makespan is the last end minus the first submit.
	Makespan int64
	// Utilisation is node-seconds used over nodes × makespan.
	Utilisation float64
}

// ErrConfig is wrapped by configuration errors.
var ErrConfig = errors.New("sim: bad configuration")

// Run simulates tr under cfg.
func Run(ctx context.Context, tr *trace.Trace, cfg Config) (*Result, error) {
	if cfg.Topology == nil {
		return nil, fmt.Errorf("%w: no topology", ErrConfig)
	}
	n := cfg.Topology.NumNodes()
	if cfg.Nodes <= 0 || cfg.Nodes > n {
		cfg.Nodes = n
	}
	if cfg.Cost.HopCost == 0 {
		cfg.Cost = model.DefaultCostModel
	}
	s := &state{cfg: cfg, busy: make([]bool, cfg.Nodes), res: &Result{}, nIdle: cfg.Nodes}
	for _, j := range tr.Jobs {
		if j.Nodes > cfg.Nodes {
			s.res.Dropped++
			continue
		}
		s.jobs = append(s.jobs, j)
	}
	var err error
	switch cfg.Policy {
	case "window":
		if cfg.Tau <= 0 || cfg.Solver == nil {
			return nil, fmt.Errorf("%w: the window policy needs a period τ > 0 and a solver", ErrConfig)
		}
		err = s.runWindows(ctx)
	default:
		pol, ok := policies[cfg.Policy]
		if !ok {
			return nil, fmt.Errorf("%w: unknown policy %q (want window, %s)", ErrConfig, cfg.Policy, strings.Join(PolicyNames(), ", "))
		}
		err = s.runEvents(ctx, pol)
	}
	if err != nil {
		return nil, err
	}
	s.finish()
	return s.res, nil
}

// state is a simulation in progress.
type state struct {
	cfg     Config
	jobs    []trace.Job // runnable jobs, by submit
	next    int         // next job to arrive
	busy    []bool
	running []run
	queue   []waiting
	res     *Result
	freed   bool // a job ended since the last schedule
	nIdle   int  // number of false entries in busy
}

type run struct {
	job   int // index into jobs
	nodes []int
	end   int64
}

type waiting struct {
	job int
	nwp int
}

func (s *state) idle() []int {
	var out []int
	for k, b := range s.busy {
		if !b {
			out = append(out, k)
		}
	}
	return out
}

// release ends the running jobs with end ≤ t.
func (s *state) release(t int64) {
	kept := s.running[:0]
	for _, r := range s.running {
		if r.end <= t {
			for _, k := range r.nodes {
				s.busy[k] = false
			}
			s.nIdle += len(r.nodes)
			s.freed = true
			continue
		}
		kept = append(kept, r)
	}
	s.running = kept
}

// arrive queues the jobs submitted at or before t; it reports whether any
// did.
func (s *state) arrive(t int64) bool {
	any := false
	for s.next < len(s.jobs) && s.jobs[s.next].Submit <= t {
		s.queue = append(s.queue, waiting{job: s.next})
		s.next++
		any = true
	}
	return any
}

// start runs job (index into jobs) on nodes from t.
func (s *state) start(job int, nodes []int, t int64) {
	j := &s.jobs[job]
	for _, k := range nodes {
		s.busy[k] = true
	}
	s.nIdle -= len(nodes)
	s.running = append(s.running, run{job: job, nodes: nodes, end: t + j.Runtime})
	s.res.Jobs = append(s.res.Jobs, JobResult{ID: j.ID, Submit: j.Submit, Start: t, End: t + j.Runtime,
		Nodes: nodes, Cost: s.cfg.Cost.Cost(s.cfg.Topology, nodes)})
}

// window builds the model.Window of the current queue at time t.
func (s *state) window(t int64) *model.Window {
	w := &model.Window{Time: t, Topology: s.cfg.Topology, TopologySpec: s.cfg.TopologySpec,
		Idle: s.idle(), Cost: s.cfg.Cost}
	for _, r := range s.running {
		w.Running = append(w.Running, model.RunningJob{ID: "run-" + s.jobs[r.job].ID, Nodes: r.nodes, End: r.end})
	}
	for _, q := range s.queue {
		j := &s.jobs[q.job]
		w.Jobs = append(w.Jobs, model.Job{ID: j.ID, Nodes: j.Nodes, Walltime: max(1, j.Runtime), Submit: j.Submit,
			Queue: model.DefaultQueue, NWP: q.nwp, Comm: true, Pattern: model.PatternRD})
	}
	return w
}

// runWindows is the window-based policy.
func (s *state) runWindows(ctx context.Context) error {
	if len(s.jobs) == 0 {
		return nil
	}
	tau := s.cfg.Tau
	t := s.jobs[0].Submit + tau
	for s.next < len(s.jobs) || len(s.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.freed = false
		s.release(t)
		arrived := s.arrive(t)
		// With nothing running, a waiting job can only start now.
		stuck := len(s.running) == 0 && len(s.queue) > 0
		if len(s.queue) > 0 && (arrived || s.freed || stuck) {
			before := len(s.queue)
			if err := s.solveWindow(ctx, t); err != nil {
				return err
			}
			if stuck && len(s.queue) == before && s.next == len(s.jobs) {
				return fmt.Errorf("sim: at t=%d the window solver started none of %d waiting jobs on an empty cluster", t, before)
			}
		}
		// Jump over idle stretches: to the next period in which a job
		// arrives or ends.
		t += tau
		if next := s.nextEvent(); next != math.MaxInt64 && next > t {
			t += (next - t + tau - 1) / tau * tau
		}
	}
	return nil
}

// nextEvent returns the next arrival or end time, or MaxInt64.
func (s *state) nextEvent() int64 {
	next := int64(math.MaxInt64)
	if s.next < len(s.jobs) {
		next = s.jobs[s.next].Submit
	}
	for _, r := range s.running {
		next = min(next, r.end)
	}
	return next
}

func (s *state) solveWindow(ctx context.Context, t int64) error {
	w := s.window(t)
	res, err := solver.SolveWindow(ctx, w, s.cfg.Solver, solver.Options{MaxJobs: s.cfg.MaxJobs, TimeLimit: s.cfg.TimeLimit})
	if err != nil {
		return fmt.Errorf("window at t=%d: %w", t, err)
	}
	if s.cfg.Check {
		if err := model.Check(w, res.Allocations); err != nil {
			return fmt.Errorf("window at t=%d: %w", t, err)
		}
	}
	s.res.Windows++
	s.res.SolveTimes = append(s.res.SolveTimes, res.Elapsed)
	started := map[int]bool{}
	for _, a := range res.Allocations {
		q := s.queue[a.Job] // window jobs are the queue, in order
		s.start(q.job, a.Nodes, t)
		started[a.Job] = true
	}
	kept := s.queue[:0]
	for k, q := range s.queue {
		if !started[k] {
			q.nwp++
			kept = append(kept, q)
		}
	}
	s.queue = kept
	return nil
}

// runEvents runs a per-job policy, scheduling at every arrival and end.
func (s *state) runEvents(ctx context.Context, pol policy) error {
	for s.next < len(s.jobs) || len(s.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := s.nextEvent()
		if t == math.MaxInt64 {
			return fmt.Errorf("sim: %d jobs wait but nothing runs or arrives", len(s.queue))
		}
		s.release(t)
		s.arrive(t)
		if err := s.schedule(t, pol); err != nil {
			return err
		}
	}
	return nil
}

// schedule starts queue jobs at t: the head while it fits (FCFS), then,
// with easy, later jobs that do not delay the head's reservation.
func (s *state) schedule(t int64, pol policy) error {
	if pol.priority != nil {
		slices.SortStableFunc(s.queue, func(a, b waiting) int { return cmpKey(pol.priority(&s.jobs[a.job]), pol.priority(&s.jobs[b.job])) })
	}
	if pol.greedy {
		return s.greedyStart(t, pol)
	}
	for len(s.queue) > 0 {
		j := &s.jobs[s.queue[0].job]
		if j.Nodes > s.nIdle {
			break
		}
		if err := s.startChecked(s.queue[0].job, s.firstFit(j.Nodes), t); err != nil {
			return err
		}
		s.queue = s.queue[1:]
	}
	if pol.backfill == 0 || len(s.queue) < 2 {
		return nil
	}
	// The head's reservation: the earliest time enough nodes are free,
	// by the running jobs' requested walltimes, and the nodes spare then.
	head := &s.jobs[s.queue[0].job]
	type endAt struct {
		t int64
		n int
	}
	var ends []endAt
	for _, r := range s.running {
		rj := &s.jobs[r.job]
		est := r.end - rj.Runtime + max(rj.Walltime, rj.Runtime)
		ends = append(ends, endAt{est, len(r.nodes)})
	}
	slices.SortFunc(ends, func(a, b endAt) int { return int(a.t - b.t) })
	free := s.nIdle
	shadow, extra := int64(math.MaxInt64), 0
	for _, e := range ends {
		free += e.n
		if free >= head.Nodes {
			shadow, extra = e.t, free-head.Nodes
			break
		}
	}
	kept := s.queue[:1]
	for k, q := range s.queue[1:] {
		if s.nIdle == 0 || pol.backfill > 0 && k >= pol.backfill {
			kept = append(kept, s.queue[1+k:]...)
			break
		}
		j := &s.jobs[q.job]
		wall := max(j.Walltime, j.Runtime)
		if j.Nodes <= s.nIdle && (t+wall <= shadow || j.Nodes <= extra) {
			if t+wall > shadow {
				extra -= j.Nodes
			}
			if err := s.startChecked(q.job, s.firstFit(j.Nodes), t); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, q)
	}
	s.queue = kept
	return nil
}

// greedyStart starts, while any fits, the queued job of highest priority
// among those that fit (Tetris-style packing).
func (s *state) greedyStart(t int64, pol policy) error {
	for {
		best := -1
		for k, q := range s.queue {
			if s.jobs[q.job].Nodes <= s.nIdle && (best < 0 || cmpKey(pol.fit(&s.jobs[q.job], s.nIdle), pol.fit(&s.jobs[s.queue[best].job], s.nIdle)) < 0) {
				best = k
			}
		}
		if best < 0 {
			return nil
		}
		job := s.queue[best].job
		if err := s.startChecked(job, s.firstFit(s.jobs[job].Nodes), t); err != nil {
			return err
		}
		s.queue = slices.Delete(s.queue, best, best+1)
	}
}

// firstFit returns the n lowest idle node ids.
func (s *state) firstFit(n int) []int {
	out := make([]int, 0, n)
	for k, b := range s.busy {
		if len(out) == n {
			break
		}
		if !b {
			out = append(out, k)
		}
	}
	return out
}

// startChecked starts a job after checking its allocation with
// model.Check against the cluster's state (a window holding just that job).
func (s *state) startChecked(job int, nodes []int, t int64) error {
	if s.cfg.Check {
		w := &model.Window{Time: t, Topology: s.cfg.Topology, Idle: s.idle(), Cost: s.cfg.Cost}
		for _, r := range s.running {
			w.Running = append(w.Running, model.RunningJob{ID: "run-" + s.jobs[r.job].ID, Nodes: r.nodes, End: r.end})
		}
		j := &s.jobs[job]
		w.Jobs = []model.Job{{ID: j.ID, Nodes: j.Nodes, Walltime: max(1, j.Runtime), Submit: j.Submit, Queue: model.DefaultQueue}}
		if err := model.Check(w, []model.Allocation{{Job: 0, Nodes: nodes, Start: t}}); err != nil {
			return fmt.Errorf("t=%d: %w", t, err)
		}
	}
	s.start(job, nodes, t)
	return nil
}

func (s *state) finish() {
	r := s.res
	if len(r.Jobs) == 0 {
		return
	}
	first, last := int64(math.MaxInt64), int64(0)
	var used float64
	for _, j := range r.Jobs {
		first = min(first, j.Submit)
		last = max(last, j.End)
		used += float64(j.End-j.Start) * float64(len(j.Nodes))
	}
	r.Makespan = last - first
	if r.Makespan > 0 {
		r.Utilisation = used / (float64(s.cfg.Nodes) * float64(r.Makespan))
	}
}
