package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics"
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
	// "saf", "drf", "tetris", "pbs-fifo", "pbs-walltime", "cp" (see
	// Policies).
	Policy string
	// CP configures the cp policy (bench/cpolicy); its zero value is the
	// default policy.
	CP cpolicy.Policy
	// Allocator chooses the nodes of each job a per-job policy starts,
	// among the idle nodes: "" or "first-fit" (the lowest idle ids),
	// "slurm", "mishra-greedy", "mishra-balanced" or "mishra-adaptive"
	// (see AllocatorNames). The window policy places its jobs with Solver
	// and rejects any other allocator than first-fit.
	Allocator string
	// Tau is the window period, in seconds (window policy).
	Tau int64
	// Solver solves each window (window policy).
	Solver solver.Solver
	// GapSolver, when set, re-solves every window that has multi-node jobs
	// with this (exact) solver, on the same window and with the same
	// options, to measure the gap of Solver's objective to the optimum or
	// its proven lower bound (Result.Gaps, Summary.Gap). It never changes
	// the trajectory: the jobs start where Solver put them. Window policy
	// only.
	GapSolver solver.Solver
	// MaxJobs caps the multi-node jobs per window (0: no cap).
	MaxJobs int
	// TimeLimit bounds each window's solve (0: none); the GapSolver's
	// solve gets the same limit.
	TimeLimit time.Duration
	// ExpectedWait maps a trace queue (trace.Job.Queue, the SWF queue
	// number) to its expected waiting time ewt_q in seconds, the weight of
	// Bridi et al.'s metrics (see Summary). Every value must be positive.
	ExpectedWait map[string]int64
	// DefaultExpectedWait is the ewt, in seconds, of the jobs whose queue
	// ExpectedWait does not list, including those of unknown queue ("");
	// 0 means DefaultEWT.
	DefaultExpectedWait int64
	// Check runs model.Check on every allocation (on by default in
	// Default; tests always keep it): the per-job policies' starts and the
	// window policy's windows, against the cluster's state restricted to
	// the allocated nodes, beside the simulation (see checker). Without
	// it the window policy's windows are still checked, by SolveWindow
	// on the whole window.
	Check bool
	// DiscardNodes leaves the node lists out of the results
	// (JobResult.Nodes nil, JobResult.Size their length): a 250,000-job
	// log on 32,768 nodes otherwise keeps gigabytes of them. The metrics
	// do not need them.
	DiscardNodes bool
	// Chooser is the learned policy of Policy Learned: it picks each
	// head among the waiting jobs (see HeadChooser).
	Chooser HeadChooser
	// Picker, for Policy Learned instead of Chooser, is a work-conserving
	// learned policy (see JobPicker); Killer, with Picker, may kill
	// running jobs and requeue them (see Killer).
	Picker JobPicker
	Killer Killer
	// Started, when set, is called each time a job starts, with the
	// number of runnable jobs started so far and their total (jobs larger
	// than the cluster are not counted): a progress hook for long runs.
	Started func(done, total int)
	// Selector is the learned job selector of Policy Select (see
	// Selector): it picks the jobs to start and their allocation
	// strategies.
	Selector Selector

	// solveAll makes the window policy solve every window, of the whole
	// queue, as it did before it skipped windows (tests compare the two).
	solveAll bool
	// ownWindowCheck makes the window policy leave the check of each
	// window's allocations to SolveWindow (model.Check on the whole
	// window, as before the checker took it on), also with Check (tests
	// compare the two).
	ownWindowCheck bool
	// cpWholeQueue makes the cp policy hand Decide the whole queue, as
	// it did before it handed only the part Decide can look at (tests
	// compare the two).
	cpWholeQueue bool
	// ownPricing makes the window policy price each started job as it
	// records it, as it did before a pricer did beside the simulation
	// (tests compare the two).
	ownPricing bool
	// windowHook, when set, hears of each window of the window policy:
	// its time, whether it was skipped, and the jobs it started (tests).
	windowHook func(t int64, skipped bool, started int)
}

// DefaultEWT is the expected waiting time, in seconds, of the queues that
// Config.ExpectedWait does not list when Config.DefaultExpectedWait is 0:
// one hour.
const DefaultEWT = 3600

// A JobResult is one job's outcome.
type JobResult struct {
	ID                 string
	Submit, Start, End int64
	Nodes              []int
	// Size is the number of nodes when Nodes is left out
	// (Config.DiscardNodes); 0 means len(Nodes).
	Size int
	Cost int64
	// Queue is the job's trace queue ("" when unknown) and EWT the
	// expected waiting time, in seconds, that Config gave it.
	Queue string
	EWT   int64
}

// NodeCount returns the number of nodes the job ran on: Size, or
// len(Nodes).
func (j *JobResult) NodeCount() int {
	if j.Size > 0 {
		return j.Size
	}
	return len(j.Nodes)
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
	// Skipped counts the windows of the window policy that were not
	// solved because no job could start in them: the first job of the
	// selection order (model.Order) needed more nodes than were idle, so
	// model.SelectJobs would have selected nothing. Their waiting jobs
	// age a period as in a solved window that starts nothing.
	Skipped int
	// Makespan is the last end minus the first submit.
	Makespan int64
	// Utilisation is node-seconds used over nodes × makespan.
	Utilisation float64
	// GapSolver names Config.GapSolver ("" when unset); Gaps holds, in
	// time order, one entry per window it measured, and GapSkipped counts
	// the windows with multi-node jobs it could not measure (see
	// WindowGap).
	GapSolver  string
	Gaps       []WindowGap
	GapSkipped int
	// TooLarge counts the windows the solver refused as beyond what it
	// can handle (solver.ErrTooLarge: brute force past its enumeration
	// limit), which its fallback answered instead.
	TooLarge int
	// Kills counts the runs Config.Killer stopped; LostNodeSeconds is
	// their work lost, Σ nodes × (kill time − start).
	Kills           int
	LostNodeSeconds int64
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
	if cfg.DefaultExpectedWait < 0 {
		return nil, fmt.Errorf("%w: negative default expected wait %d s", ErrConfig, cfg.DefaultExpectedWait)
	}
	if cfg.DefaultExpectedWait == 0 {
		cfg.DefaultExpectedWait = DefaultEWT
	}
	for q, e := range cfg.ExpectedWait {
		if e <= 0 {
			return nil, fmt.Errorf("%w: queue %q: expected wait %d s is not positive", ErrConfig, q, e)
		}
	}
	alloc, err := allocatorOf(cfg.Allocator)
	if err != nil {
		return nil, err
	}
	s := &state{cfg: cfg, res: &Result{}, alloc: alloc}
	var jobs []trace.Job
	for _, j := range tr.Jobs {
		if j.Nodes > cfg.Nodes {
			s.res.Dropped++
			continue
		}
		jobs = append(jobs, j)
	}
	s.Cluster = NewCluster(cfg.Topology, cfg.Nodes, cfg.Cost, jobs, 0)
	s.TopologySpec, s.RunningComm = cfg.TopologySpec, true
	s.ReuseWindows = true // a window is done with when its period is
	if alloc != nil && cfg.Policy != "window" {
		if err := s.newPlacer(cfg.Allocator); err != nil {
			return nil, err
		}
	}
	switch cfg.Policy {
	case "window":
		if cfg.Tau <= 0 || cfg.Solver == nil {
			return nil, fmt.Errorf("%w: the window policy needs a period τ > 0 and a solver", ErrConfig)
		}
		if alloc != nil {
			return nil, fmt.Errorf("%w: the window policy places jobs with its solver, not the %s allocator", ErrConfig, cfg.Allocator)
		}
		if cfg.GapSolver != nil {
			s.res.GapSolver = cfg.GapSolver.Name()
		}
		if cfg.Check && !cfg.ownWindowCheck {
			s.startChecks()
		}
		if !cfg.ownPricing {
			s.startPricing()
		}
		err = s.runWindows(ctx)
		s.stopPricing()
		if cerr := s.stopChecks(); cerr != nil {
			err = cerr
		}
	case Learned:
		if (cfg.Chooser == nil) == (cfg.Picker == nil) {
			return nil, fmt.Errorf("%w: the %s policy needs a chooser or a picker (one of them)", ErrConfig, Learned)
		}
		if cfg.Killer != nil && cfg.Picker == nil {
			return nil, fmt.Errorf("%w: a killer needs a picker", ErrConfig)
		}
		if cfg.GapSolver != nil {
			return nil, fmt.Errorf("%w: a gap solver needs the window policy, not %s", ErrConfig, cfg.Policy)
		}
		if cfg.Check {
			s.startChecks()
		}
		if cfg.Picker != nil {
			err = s.runPicker(ctx)
		} else {
			err = s.runChooser(ctx)
		}
		if cerr := s.stopChecks(); cerr != nil {
			err = cerr
		}
	case Select:
		if cfg.Selector == nil || alloc != nil || cfg.GapSolver != nil {
			return nil, fmt.Errorf("%w: the %s policy needs a selector, which places its own jobs (no allocator, no gap solver)", ErrConfig, Select)
		}
		if cfg.Check {
			s.startChecks()
		}
		err = s.runSelect(ctx)
		if cerr := s.stopChecks(); cerr != nil {
			err = cerr
		}
	case CP:
		if cfg.GapSolver != nil {
			return nil, fmt.Errorf("%w: a gap solver needs the window policy, not %s", ErrConfig, cfg.Policy)
		}
		if cfg.Check {
			s.startChecks()
		}
		err = s.runCP(ctx)
		if cerr := s.stopChecks(); cerr != nil {
			err = cerr
		}
	default:
		if cfg.Picker != nil || cfg.Killer != nil {
			return nil, fmt.Errorf("%w: a picker or killer needs the %s policy", ErrConfig, Learned)
		}
		pol, ok := policies[cfg.Policy]
		if !ok {
			return nil, fmt.Errorf("%w: unknown policy %q (want window, %s)", ErrConfig, cfg.Policy, strings.Join(PolicyNames(), ", "))
		}
		if cfg.GapSolver != nil {
			return nil, fmt.Errorf("%w: a gap solver needs the window policy, not %s", ErrConfig, cfg.Policy)
		}
		if cfg.Check {
			s.startChecks()
		}
		err = s.runEvents(ctx, pol)
		if cerr := s.stopChecks(); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, err
	}
	s.finish()
	return s.res, nil
}

// state is a simulation in progress: the cluster (its jobs are the
// runnable jobs of the trace, by submit; times are the trace's) and the
// results.
type state struct {
	*Cluster
	cfg Config
	res *Result
	// alloc names the allocator of a per-job policy (nil: first-fit) and
	// inc places its jobs.
	alloc solver.Solver
	inc   *heuristics.Incremental
	// keys are the per-job policy's priorities by job, and the queue is
	// in their order up to sorted (see sortQueue).
	keys   [][2]float64
	sorted int
	// checker, when set, checks the allocations of startJob.
	checker *checker
	// pricer, when set, prices the jobs the window policy records (see
	// pricer); record leaves their Cost to it.
	pricer *pricer
	// kills counts each job's kills, resOf indexes its current run in
	// res.Jobs, and dead lists the results of killed runs, which finish
	// drops (runPicker only).
	kills []int
	resOf []int
	dead  []int
	// view is the queue as a JobPicker sees it, kept in step with queue
	// by runPicker (syncView, its starts) and kill (runPicker only).
	view []QueuedJob
}

// start runs job (index into jobs) on nodes from t.
func (s *state) start(job int, nodes []int, t int64) {
	s.occupy(job, nodes, t)
	s.record(job, nodes, t)
}

// record adds job's start on nodes at t to the results; with a pricer,
// it leaves the job's Cost to it.
func (s *state) record(job int, nodes []int, t int64) {
	j := &s.jobs[job]
	var cost int64
	if s.pricer == nil {
		cost = s.cfg.Cost.Cost(s.cfg.Topology, nodes)
	}
	s.res.Jobs = append(s.res.Jobs, JobResult{ID: j.ID, Submit: j.Submit, Start: t, End: t + j.Runtime,
		Nodes: nodes, Cost: cost, Queue: j.Queue, EWT: s.ewt(j.Queue)})
	if s.cfg.DiscardNodes {
		r := &s.res.Jobs[len(s.res.Jobs)-1]
		r.Nodes, r.Size = nil, len(nodes)
	}
	if s.cfg.Started != nil {
		s.cfg.Started(len(s.res.Jobs), len(s.jobs))
	}
}

// ewt returns the expected waiting time of queue q.
func (s *state) ewt(q string) int64 {
	if e, ok := s.cfg.ExpectedWait[q]; ok {
		return e
	}
	return s.cfg.DefaultExpectedWait
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
		s.Release(t)
		arrived := s.Arrive(t) > 0
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

// solveWindow solves the window at t and starts its jobs. A window in
// which no job can start (see Cluster.reach) is not built or solved, only
// counted (Result.Skipped), its jobs aged; a window that is solved holds
// the queued jobs that selection can reach (the same selection, jobs and
// indices as the whole queue's window; the jobs after them are not
// selected either way).
func (s *state) solveWindow(ctx context.Context, t int64) error {
	if s.checkFailed() {
		return errCheckFailed // Run returns the failure instead
	}
	jobs := len(s.queue)
	if !s.cfg.solveAll {
		n, none := s.reach(s.cfg.MaxJobs)
		if none {
			s.res.Skipped++
			s.Start(nil, t)
			if s.cfg.windowHook != nil {
				s.cfg.windowHook(t, true, 0)
			}
			return nil
		}
		jobs = n
	}
	w := s.window(t, jobs)
	opt := solver.Options{MaxJobs: s.cfg.MaxJobs, TimeLimit: s.cfg.TimeLimit}
	// With a checker, SolveWindow leaves model.Check of its answer to it
	// (on a 32,768-node cluster a check of the whole window reads every
	// idle and running node; the checker's reads the allocated nodes,
	// beside the simulation); without, SolveWindow checks it.
	own := opt
	own.CallerChecks = s.checker != nil
	res, err := solver.SolveWindow(ctx, w, s.cfg.Solver, own)
	if err != nil {
		return fmt.Errorf("window at t=%d: %w", t, err)
	}
	pst := res.Stats.Portfolio
	abandoned := pst != nil && pst.ExactAbandoned
	if s.cfg.GapSolver != nil {
		gapAbandoned, err := s.measureGap(ctx, w, res, opt)
		if err != nil {
			return fmt.Errorf("window at t=%d: %w", t, err)
		}
		abandoned = abandoned || gapAbandoned
	}
	if abandoned {
		// A portfolio abandoned its exact solver at the deadline; the
		// solver's goroutine may still read w (it stops at its next
		// check of the deadline): the next window must not write over
		// w's lists.
		s.forgetWindow()
	}
	s.res.Windows++
	if pst != nil && pst.ExactTooLarge {
		s.res.TooLarge++
	}
	s.res.SolveTimes = append(s.res.SolveTimes, res.Elapsed)
	for i, a := range res.Allocations {
		// The next window reuses this one's lists, which a solver's node
		// lists may share: the running jobs, results and checker keep
		// copies.
		res.Allocations[i].Nodes = slices.Clone(a.Nodes)
	}
	if s.checker != nil {
		who := "solver " + s.cfg.Solver.Name()
		if !s.claim(res.Allocations) {
			// Starting them would break the cluster's state: their
			// check fails (or one before it); wait for it.
			s.checkWindow(res.Allocations, t, who, false)
			if err := s.stopChecks(); err != nil {
				return err
			}
			return fmt.Errorf("sim: window at t=%d: %s started a job on a node that is off the cluster, busy or used twice, yet model.Check passed it", t, who)
		}
		s.checkWindow(res.Allocations, t, who, true)
	}
	at := len(s.res.Jobs)
	for _, a := range res.Allocations {
		s.record(s.queue[a.Job].job, a.Nodes, t) // window jobs are the queue, in order
	}
	if s.pricer != nil {
		s.price(at, res.Allocations)
	}
	s.startWindow(res.Allocations, t, s.checker != nil) // claimed with a checker
	if s.cfg.windowHook != nil {
		s.cfg.windowHook(t, false, len(res.Allocations))
	}
	return nil
}

// claim clears the idle bits of the nodes of allocs (for startWindow)
// and reports true when every node is on the cluster, idle and used
// once, so that starting them keeps the cluster's state sound; otherwise
// it clears none and reports false. (The checker, not claim, tells a
// window's allocations feasible: its model.Check checks more, and words
// the failure.) Consecutive nodes in one word are claimed together
// (wordRun).
func (s *state) claim(allocs []model.Allocation) bool {
	for i, a := range allocs {
		for j := 0; j < len(a.Nodes); {
			if k := a.Nodes[j]; k < 0 || k >= s.size {
				s.unclaim(allocs[:i], a.Nodes[:j])
				return false
			}
			w, m, r := wordRun(a.Nodes[j:])
			if s.idleSet[w]&m != m { // busy, or claimed already
				s.unclaim(allocs[:i], a.Nodes[:j])
				return false
			}
			s.idleSet[w] &^= m
			j += r
		}
	}
	return true
}

// unclaim sets the idle bits of the nodes of allocs and of nodes again.
func (s *state) unclaim(allocs []model.Allocation, nodes []int) {
	for _, a := range allocs {
		setBits(s.idleSet, a.Nodes)
	}
	setBits(s.idleSet, nodes)
}

// runEvents runs a per-job policy, scheduling at every arrival and end.
func (s *state) runEvents(ctx context.Context, pol policy) error {
	return s.eachEvent(ctx, func(t int64) error {
		if err := s.schedule(ctx, t, pol); err != nil {
			return err
		}
		s.sorted = len(s.queue) // starts keep the order sortQueue made
		return nil
	})
}

// eachEvent steps the simulation from event to event (an arrival or an
// end) until every job has started: at each event time the ended jobs
// release their nodes, the arrivals join the queue, and decide starts
// what it chooses.
func (s *state) eachEvent(ctx context.Context, decide func(t int64) error) error {
	for s.next < len(s.jobs) || len(s.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		t := s.nextEvent()
		if t == math.MaxInt64 {
			return fmt.Errorf("sim: %d jobs wait but nothing runs or arrives", len(s.queue))
		}
		s.Release(t)
		s.Arrive(t)
		if err := decide(t); err != nil {
			return err
		}
	}
	return nil
}

// schedule starts queue jobs at t: the head while it fits (FCFS), then,
// with easy, later jobs that do not delay the head's reservation.
func (s *state) schedule(ctx context.Context, t int64, pol policy) error {
	if pol.priority != nil {
		s.sortQueue(pol)
	}
	if pol.greedy {
		return s.greedyStart(ctx, t, pol)
	}
	for len(s.queue) > 0 {
		j := &s.jobs[s.queue[0].job]
		if j.Nodes > s.nIdle {
			break
		}
		if err := s.startJob(ctx, s.queue[0].job, t); err != nil {
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
		// By its request; a job already past it is expected to end
		// now (the scheduler knows only that it still runs).
		est := max(r.end-rj.Runtime+requestOf(rj.Walltime, rj.Runtime), t)
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
		wall := requestOf(j.Walltime, j.Runtime)
		if j.Nodes <= s.nIdle && (t+wall <= shadow || j.Nodes <= extra) {
			if t+wall > shadow {
				extra -= j.Nodes
			}
			if err := s.startJob(ctx, q.job, t); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, q)
	}
	s.queue = kept
	return nil
}

// sortQueue puts the queue in pol's priority order, stably, as a stable
// sort of the whole queue would: the queue is in that order up to
// s.sorted (schedule leaves it so; starts keep the order), and each job
// that arrived since is inserted after the jobs of equal or higher
// priority before it. The keys are computed once per job.
func (s *state) sortQueue(pol policy) {
	if s.keys == nil {
		s.keys = make([][2]float64, len(s.jobs))
		for i := range s.jobs {
			s.keys[i] = pol.priority(&s.jobs[i])
		}
	}
	for k := min(s.sorted, len(s.queue)); k < len(s.queue); k++ {
		q := s.queue[k]
		key := s.keys[q.job]
		at, _ := slices.BinarySearchFunc(s.queue[:k], key, func(e waiting, key [2]float64) int {
			if cmpKey(s.keys[e.job], key) <= 0 {
				return -1 // e stays before: ties keep the queue's order
			}
			return 1
		})
		copy(s.queue[at+1:k+1], s.queue[at:k])
		s.queue[at] = q
	}
}

// greedyStart starts, while any fits, the queued job of highest priority
// among those that fit (Tetris-style packing).
func (s *state) greedyStart(ctx context.Context, t int64, pol policy) error {
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
		if err := s.startJob(ctx, job, t); err != nil {
			return err
		}
		s.queue = slices.Delete(s.queue, best, best+1)
	}
}

// firstFit returns the n lowest idle node ids.
func (s *state) firstFit(n int) []int { return s.appendLowestIdle(make([]int, 0, n), n) }

// startJob starts job (an index into jobs) at t on the nodes the
// allocator chooses (first-fit without one); when Config.Check is set,
// its checker checks the allocation with model.Check against the
// cluster's state at t (a window holding just that job, see
// state.check), and startJob fails once a check has failed.
func (s *state) startJob(ctx context.Context, job int, t int64) error {
	if s.alloc == nil && !s.cfg.Check {
		s.start(job, s.firstFit(s.jobs[job].Nodes), t)
		return nil
	}
	var nodes []int
	if s.alloc == nil {
		nodes = s.firstFit(s.jobs[job].Nodes)
	} else {
		var err error
		if nodes, err = s.place(job, t); err != nil {
			return err
		}
	}
	if s.cfg.Check {
		if s.checkFailed() {
			return errCheckFailed // Run returns the failure instead
		}
		s.check(job, nodes, t)
	}
	s.start(job, nodes, t)
	return nil
}

// errCheckFailed stops a simulation whose checker found an allocation
// infeasible.
var errCheckFailed = errors.New("sim: an allocation failed model.Check")

func (s *state) finish() {
	r := s.res
	if len(s.dead) > 0 {
		drop := make([]bool, len(r.Jobs))
		for _, d := range s.dead {
			drop[d] = true
		}
		kept := r.Jobs[:0]
		for i, j := range r.Jobs {
			if !drop[i] {
				kept = append(kept, j)
			}
		}
		r.Jobs = kept
	}
	if len(r.Jobs) == 0 {
		return
	}
	first, last := int64(math.MaxInt64), int64(0)
	var used float64
	for _, j := range r.Jobs {
		first = min(first, j.Submit)
		last = max(last, j.End)
		used += float64(j.End-j.Start) * float64(j.NodeCount())
	}
	r.Makespan = last - first
	if r.Makespan > 0 {
		r.Utilisation = used / (float64(s.cfg.Nodes) * float64(r.Makespan))
	}
}
