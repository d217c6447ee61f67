package bridi

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
)

// Config describes a run.
type Config struct {
	// Seed seeds the workload.
	Seed uint64
	// Jobs is the number of jobs (default 200).
	Jobs int
	// MeanInterarrival is the mean time between arrivals, in seconds
	// (default 150: about 1.2 times what the cluster can serve, so that
	// a queue builds up as in Bridi et al.'s loaded tests).
	MeanInterarrival float64
	// Grid is the CP/SAT scheduler's time grid, in seconds (default 60).
	Grid int64
	// TimeLimit bounds each CP/SAT decision (default 1 s).
	TimeLimit time.Duration
	// Policies to run, among "cp", "pbs-fifo" and "pbs-walltime", and
	// "cp-grid" (CP/SAT on every grid slot instead of the compressed time
	// domain, for comparison) (default
	// all three).
	Policies []string
	// Progress, when set, receives a line per policy as it finishes.
	Progress io.Writer
	// DumpDir, when set, receives every CP/SAT decision window the search
	// did not prove optimal, as window JSON named
	// <policy>-s<seed>-a<interarrival>-t<time>.json (runs of other seeds
	// or loads into one directory keep each other's windows), for study
	// with optsched solve --encoding cp.
	DumpDir string
}

// A Job of the workload.
type Job struct {
	model.Job
	// Runtime is how long the job actually runs (≤ Walltime).
	Runtime int64
}

// Workload draws the synthetic workload of cfg: jobs of
// instances.EuroraJob (queues debug, parallel, longpar; 1–8 units of 1–16
// cores with memory, GPUs or MICs) arriving as a Poisson process of mean
// gap MeanInterarrival from time 0, each running for a uniform 10–100 %
// of its walltime (users overestimate), in whole seconds.
func Workload(cfg Config) []Job {
	cfg = cfg.withDefaults()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xb1d1))
	var out []Job
	t := 0.0
	for i := range cfg.Jobs {
		t += rng.ExpFloat64() * cfg.MeanInterarrival
		j := instances.EuroraJob(rng, "j"+strconv.Itoa(i), int64(t), 1)
		rt := max(1, int64(float64(j.Walltime)*(0.1+0.9*rng.Float64())))
		out = append(out, Job{Job: j, Runtime: rt})
	}
	return out
}

func (c Config) withDefaults() Config {
	if c.Jobs <= 0 {
		c.Jobs = 200
	}
	if c.MeanInterarrival <= 0 {
		c.MeanInterarrival = 150
	}
	if c.Grid <= 0 {
		c.Grid = 60
	}
	if c.TimeLimit <= 0 {
		c.TimeLimit = time.Second
	}
	if len(c.Policies) == 0 {
		c.Policies = []string{"cp", "pbs-fifo", "pbs-walltime"}
	}
	return c
}

// A PolicyResult is one policy's outcome.
type PolicyResult struct {
	Policy string
	// Summary holds bench/sim's metrics of the run (WQT, LateJobs = NL,
	// Tardiness = TR, waits, ...).
	Summary sim.Summary
	// Decisions counts scheduling calls; Overheads are their wall times.
	Decisions int
	Overheads []time.Duration
	// Statuses counts the decisions' statuses (optimal, feasible,
	// fallback, unknown).
	Statuses map[string]int
	// Gaps are the decisions' gaps on Eq. (2) (CP/SAT only).
	Gaps []float64
	// Queue are the numbers of waiting jobs at the decisions.
	Queue []int
	// Slots and Candidates are, per CP/SAT decision that searched, the
	// grid slots of the jobs' start domains and the candidates the
	// compressed time domain kept of them (equal for cp-grid); Clauses the
	// clauses of its last search.
	Slots, Candidates, Clauses []float64
}

// MeanOverhead returns the mean wall time of a decision.
func (r *PolicyResult) MeanOverhead() time.Duration {
	if len(r.Overheads) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range r.Overheads {
		sum += d
	}
	return sum / time.Duration(len(r.Overheads))
}

// Quantile returns the q-quantile (nearest rank) of the overheads.
func (r *PolicyResult) Quantile(q float64) time.Duration {
	if len(r.Overheads) == 0 {
		return 0
	}
	d := slices.Clone(r.Overheads)
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

func scheduler(name string, g int64) (solver.Scheduler, error) {
	switch name {
	case "cp":
		return catalog.Scheduler("sat", catalog.Options{})
	case "cp-grid":
		return catalog.Scheduler("sat", catalog.Options{Grid: true})
	case "pbs-fifo":
		return heuristics.PBSFifo(), nil
	case "pbs-walltime":
		return heuristics.PBSWalltime(), nil
	}
	return nil, fmt.Errorf("bridi: unknown policy %q (want cp, cp-grid, pbs-fifo or pbs-walltime)", name)
}

// Run simulates the workload under every policy of cfg.
func Run(ctx context.Context, cfg Config) ([]PolicyResult, error) {
	cfg = cfg.withDefaults()
	jobs := Workload(cfg)
	if cfg.DumpDir != "" {
		if err := os.MkdirAll(cfg.DumpDir, 0o755); err != nil {
			return nil, fmt.Errorf("bridi: %w", err)
		}
	}
	var out []PolicyResult
	for _, p := range cfg.Policies {
		s, err := scheduler(p, cfg.Grid)
		if err != nil {
			return nil, err
		}
		g := cfg.Grid
		if p != "cp" {
			g = 1 // the PBS list schedulers work in seconds, as PBS does
		}
		var dump func(*model.Window, int64, *solver.ScheduleResult) error
		if cfg.DumpDir != "" && s.Name() == "sat" {
			dump = func(w *model.Window, t int64, sr *solver.ScheduleResult) error {
				if sr.Status == solver.Optimal {
					return nil
				}
				if err := writeWindow(filepath.Join(cfg.DumpDir, fmt.Sprintf("%s-s%d-a%g-t%d.json", p, cfg.Seed, cfg.MeanInterarrival, t)), w); err != nil {
					return fmt.Errorf("dump: %w", err)
				}
				return nil
			}
		}
		r, err := simulate(ctx, jobs, s, g, cfg.TimeLimit, dump)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		r.Policy = p
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "bridi: %s: %d decisions, WQT %.2f, mean overhead %v\n", p, r.Decisions, r.Summary.WQT, r.MeanOverhead())
		}
		out = append(out, *r)
	}
	return out, nil
}

// writeWindow writes w as window JSON to path.
func writeWindow(path string, w *model.Window) error {
	data, err := windowjson.Marshal(w)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// running is a started job.
type running struct {
	job        int
	start, end int64 // end: actual
	nodes      []int
	units      map[int]int
}

// simulate runs jobs under s; observe, when set, receives every decision:
// its window, time and result.
func simulate(ctx context.Context, jobs []Job, s solver.Scheduler, granularity int64, limit time.Duration, observe func(*model.Window, int64, *solver.ScheduleResult) error) (*PolicyResult, error) {
	res := &PolicyResult{Statuses: map[string]int{}}
	started := make([]*running, len(jobs))
	var run []*running
	var queue []int
	next := 0         // next arrival
	wake := int64(-1) // the earliest planned start of the last schedule
	t := jobs[0].Submit
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Ends, then arrivals, at t.
		run = slices.DeleteFunc(run, func(r *running) bool { return r.end <= t })
		for next < len(jobs) && jobs[next].Submit <= t {
			queue = append(queue, next)
			next++
		}
		if len(queue) > 0 {
			w, err := window(t, jobs, queue, run)
			if err != nil {
				return nil, err
			}
			sr, err := solver.SolveWindow(ctx, w, s, solver.Options{Granularity: granularity, TimeLimit: limit})
			if err != nil {
				return nil, fmt.Errorf("t=%d: %w", t, err)
			}
			res.Decisions++
			if observe != nil {
				if err := observe(w, t, sr); err != nil {
					return nil, fmt.Errorf("t=%d: %w", t, err)
				}
			}
			res.Queue = append(res.Queue, len(queue))
			res.Overheads = append(res.Overheads, sr.Elapsed)
			res.Statuses[sr.Status.String()]++
			if g, ok := sr.Gap(); ok && s.Name() == "sat" {
				res.Gaps = append(res.Gaps, g)
			}
			if st := sr.Stats.SAT; st != nil && st.Search.DomainSlots > 0 {
				n := float64(st.Search.DomainSlots)
				res.Slots = append(res.Slots, n)
				c := float64(st.Search.DomainCandidates)
				if c == 0 {
					c = n // the grid (cp-grid)
				}
				res.Candidates = append(res.Candidates, c)
				res.Clauses = append(res.Clauses, float64(st.Search.Clauses))
			}
			wake = -1
			startNow := map[int]bool{}
			for _, a := range sr.Allocations {
				j := queue[a.Job]
				if a.Start == t {
					r := &running{job: j, start: t, end: t + jobs[j].Runtime, nodes: a.Nodes, units: a.Units}
					run = append(run, r)
					started[j] = r
					startNow[j] = true
				} else if wake < 0 || a.Start < wake {
					wake = a.Start
				}
			}
			for _, d := range sr.Deferred {
				if !d.ForTime {
					return nil, fmt.Errorf("job %s can never start on the cluster: %s", jobs[queue[d.Job]].ID, d.Reason)
				}
				// Not scheduled in time (no schedule, or a list schedule
				// cut short): decide again a second later.
				wake = t + 1
			}
			queue = slices.DeleteFunc(queue, func(j int) bool { return startNow[j] })
		}
		// The next event.
		nt := int64(-1)
		consider := func(x int64) {
			if x > t && (nt < 0 || x < nt) {
				nt = x
			}
		}
		if next < len(jobs) {
			consider(jobs[next].Submit)
		}
		for _, r := range run {
			consider(r.end)
		}
		if len(queue) > 0 {
			consider(wake)
		}
		if nt < 0 {
			if len(queue) > 0 {
				return nil, fmt.Errorf("t=%d: %d jobs wait with nothing left to happen", t, len(queue))
			}
			break
		}
		t = nt
	}
	// The metrics of bench/sim.
	var sr sim.Result
	first, last := jobs[0].Submit, int64(0)
	for j, r := range started {
		if r == nil {
			continue
		}
		ewt := int64(1)
		for _, q := range instances.EuroraQueues {
			if q.Name == jobs[j].Queue {
				ewt = q.Expected
			}
		}
		sr.Jobs = append(sr.Jobs, sim.JobResult{ID: jobs[j].ID, Submit: jobs[j].Submit, Start: r.start, End: r.end,
			Nodes: r.nodes, Cost: 1, Queue: jobs[j].Queue, EWT: ewt})
		last = max(last, r.end)
	}
	sr.Makespan = last - first
	res.Summary = sr.Summarise()
	return res, nil
}

// window builds the decision window at t: the Eurora-like cluster, the
// running jobs with their estimated ends (start + walltime), the queue.
func window(t int64, jobs []Job, queue []int, run []*running) (*model.Window, error) {
	w, err := instances.EuroraWindow(t)
	if err != nil {
		return nil, err
	}
	busy := map[int]bool{}
	for _, r := range run {
		j := &jobs[r.job]
		w.Running = append(w.Running, model.RunningJob{ID: j.ID, Nodes: slices.Clone(r.nodes), End: max(t+1, r.start+j.Walltime),
			Select: j.Select, Units: r.units, Place: j.Place})
		for _, k := range r.nodes {
			busy[k] = true
		}
	}
	w.Idle = slices.DeleteFunc(w.Idle, func(k int) bool { return busy[k] })
	for _, j := range queue {
		w.Jobs = append(w.Jobs, jobs[j].Job)
	}
	return w, nil
}
