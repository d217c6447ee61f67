package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/report"
	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// simulateOptions are the inputs of `optsched simulate`.
type simulateOptions struct {
	streams      *streams
	trace        string
	format       string
	policy       string
	weights      string
	sample       bool
	kill         bool
	tau          time.Duration
	solver       string
	heuristic    string
	maxJobs      int
	timeLimit    time.Duration
	layout       string
	procsPerNode int
	skipBad      bool
	strict       bool
	allowEmpty   bool
	maxTraceJobs int
	jsonOut      string
	seed         uint64
	allocator    string
	queueEWT     string
	defaultEWT   time.Duration
	gap          bool
	plotDir      string
	// timeLimitSet: --time-limit was given (else the default depends on
	// the policy and the cluster's size: cpolicy.DefaultLimit per cp
	// decision; see windowTimeLimit for the window policy).
	timeLimitSet bool
	cpObjective  string
	cpJobs       int
	cpBackfill   int
	// cpSearch is --cp-search: on, off or auto (see cpNoSearch).
	cpSearch string
}

// scaleNodes and scaleTimeLimit are the simulator's (sim.ScaleNodes): the
// cluster size above which the window policy's default limit per window
// is scaleTimeLimit and the cp policy decides without its search.
const (
	scaleNodes     = sim.ScaleNodes
	scaleTimeLimit = sim.ScaleTimeLimit
)

// cpNoSearch reports whether the cp policy decides with its list schedules
// alone on a cluster of nodes nodes (sim.Setup.CPNoSearch).
func (opts *simulateOptions) cpNoSearch(nodes int) bool {
	return opts.limits().CPNoSearch(nodes)
}

// windowTimeLimit returns the time limit per window on a cluster of nodes
// nodes (sim.Setup.WindowTimeLimit).
func (opts *simulateOptions) windowTimeLimit(nodes int) time.Duration {
	return opts.limits().WindowTimeLimit(nodes)
}

// limits is the part of the setup the limits depend on.
func (opts *simulateOptions) limits() sim.Setup {
	return sim.Setup{TimeLimit: opts.timeLimit, TimeLimitSet: opts.timeLimitSet, CPSearch: opts.cpSearch}
}

func newSimulateCmd(s *streams, runF func(*simulateOptions) error) *cobra.Command {
	opts := &simulateOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "simulate --trace FILE",
		Short: "Replay a workload trace under a scheduling policy and print the metrics",
		Long: `Simulate replays a job trace on a cluster: the NSA paper's trace ("lan": id
arrival runtime nodes per line, on the paper's 25×4×10 layout) or a Standard
Workload Format log of the Parallel Workloads Archive ("swf", gzip accepted),
read by the definition's rules: run time 0 and failed or cancelled jobs are
replayed as they ran, -1 fields take the documented fallbacks, partial-
execution records are left to their job's summary line; the first line of
the output counts the records by what happened to them (docs/reproducing.md).
The cluster is the log's MaxNodes (else MaxProcs, else its largest job).

Policies: window (window-based scheduling every --tau, each window solved by
--solver or --heuristic, --max-jobs per window); per job: fcfs, easy (EASY
backfilling), sjf, saf (walltime × nodes), drf (fewest nodes; one resource),
tetris (packing score), pbs-fifo (backfilling limited to the first 10 queued
jobs) and pbs-walltime (shortest walltime first, backfilling limited to 400),
after Bridi et al.; and cp: at every arrival and end, the CP/SAT scheduler
(bench/cpolicy) plans the first --cp-jobs waiting jobs by arrival around the
running ones (estimated ends from the requested walltimes) on the cluster
seen as one pool of nodes, minimising --cp-objective (bsld: the queue time
weighted by 1/max(request, 10 s); wait: the plain queue time), seeded with
serial list schedules and improved by solver/sat within --time-limit per
decision (default 15 ms for cp; --cp-search auto, the default, searches up
to 10,000 nodes and decides with the list schedules alone above); the jobs
it starts now start, and then the next --cp-backfill waiting jobs each
start when they fit in the room its schedule leaves. A per-job policy places each job it starts with
--allocator: first-fit on the lowest idle node ids (the default), slurm
(Slurm's topology/tree best fit) or mishra-greedy, mishra-balanced,
mishra-adaptive (Mishra et al.); the window policy places its jobs with its
solver.

Metrics: mean CH cost, wait, bounded slowdown (10 s), slowdown (unbounded:
(end - submit) / run time, run time at least 1 s), normalised turnaround
(turnaround / run time per job, averaged, JoSHH's: the same number),
turnaround,
utilisation, makespan, the per-window solve latency, and Bridi et al.'s
queue metrics: WQT (Σ wait / ewt of the job's queue), NL (jobs that waited
longer than their queue's ewt) and TR (tardiness, Σ max(0, wait − ewt)).
The expected waits come from --queue-ewt (SWF queue numbers) and
--default-ewt for every other queue (the Lan trace has none).

--gap (window policy) re-solves every window with the exact csp solver,
within --time-limit, and reports the mean and largest gap of the window
solver's objective to the optimum (or csp's proven bound) and the share of
windows it solved optimally; the schedule itself is unchanged.`,
		Example: `  optsched simulate --trace instances/traces/lan2023_trace_1800_40.txt.gz --policy window --tau 60s --max-jobs 5
  optsched simulate --trace instances/traces/lan2023_trace_1800_40.txt.gz --policy window --heuristic seq --gap
  optsched simulate --trace instances/traces/lan2023_trace_1800_40.txt.gz --policy easy --allocator slurm
  optsched simulate --trace instances/traces/KTH-SP2-1996-2.1-cln.swf.gz --policy easy --queue-ewt 1=1h,2=6h --default-ewt 2h
  optsched simulate --trace instances/traces/KTH-SP2-1996-2.1-cln.swf.gz --policy cp --time-limit 20ms --cp-objective bsld`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.timeLimitSet = cmd.Flags().Changed("time-limit")
			if runF != nil {
				return runF(opts)
			}
			return runSimulate(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", "", "trace file (required)")
	f.StringVar(&opts.format, "format", "", "lan or swf (default: from the file name)")
	f.StringVar(&opts.policy, "policy", "window", "window, "+rlSimPolicy+", "+schertSimPolicy+" or "+joshhSimPolicy+" (learned; --weights), or a per-job policy: "+strings.Join(sim.PolicyNames(), ", "))
	f.StringVar(&opts.weights, "weights", "", "learned policies: weights file (optsched train sched; default: the shipped weights: "+rlSimPolicy+" and "+schertSimPolicy+" of lublin_256 for it, else of HPC2N; "+joshhSimPolicy+" of HPC2N for it, else of lublin_256)")
	f.BoolVar(&opts.sample, "sample", false, "learned policies: sample from the policy (seeded by --seed) instead of taking the most likely action")
	f.BoolVar(&opts.kill, "kill", false, schertSimPolicy+" policy: let its killer stop running jobs predicted to run long and requeue them (restarted from scratch; the work lost is reported)")
	f.DurationVar(&opts.tau, "tau", 60*time.Second, "window period τ (window policy)")
	f.StringVar(&opts.solver, "solver", "csp", "window solver")
	f.StringVar(&opts.heuristic, "heuristic", "", "window heuristic instead of a solver")
	f.IntVar(&opts.maxJobs, "max-jobs", 0, "cap on the multi-node jobs per window (the paper uses 5)")
	f.DurationVar(&opts.timeLimit, "time-limit", 10*time.Second, fmt.Sprintf("time limit per window solve (default 10s; %v on clusters of more than %d nodes); cp policy: per decision (default %v)", scaleTimeLimit, scaleNodes, cpolicy.DefaultLimit))
	f.StringVar(&opts.cpObjective, "cp-objective", cpolicy.BSLD, "cp policy: objective, bsld or wait")
	f.IntVar(&opts.cpJobs, "cp-jobs", cpolicy.DefaultK, "cp policy: the waiting jobs (first by arrival) each decision plans")
	f.IntVar(&opts.cpBackfill, "cp-backfill", cpolicy.DefaultBackfill, "cp policy: the waiting jobs after those (by arrival) that may start when they fit beside its plan (0: none)")
	f.StringVar(&opts.cpSearch, "cp-search", "auto", fmt.Sprintf("cp policy: improve the list schedules with solver/sat at each decision: on, off, or auto (on up to %d nodes, off above)", scaleNodes))
	f.StringVar(&opts.layout, "layout", "", "cluster layout PODSxLEAVESxNODES (default: 25x4x10 for lan, derived from the log's size for swf)")
	f.IntVar(&opts.procsPerNode, "procs-per-node", 0, "SWF: processors per node (default: from the header, else 1)")
	f.BoolVar(&opts.skipBad, "skip-bad", false, "skip malformed trace lines (counted) instead of failing")
	f.BoolVar(&opts.strict, "strict", false, "SWF: every job record must be a job that ran (run time ≥ 1, a processor count); others are malformed")
	f.BoolVar(&opts.allowEmpty, "allow-empty", false, "simulate a trace without a single job instead of failing")
	f.IntVar(&opts.maxTraceJobs, "max-trace-jobs", 0, "read only the first N jobs of the trace (0: all)")
	f.StringVar(&opts.jsonOut, "json", "", "also write the metrics as JSON to this file")
	f.Uint64Var(&opts.seed, "seed", 1, "random seed of randomised solvers")
	f.StringVar(&opts.allocator, "allocator", "", "node allocator of a per-job policy: "+strings.Join(sim.AllocatorNames(), ", ")+" (default first-fit)")
	f.StringVar(&opts.queueEWT, "queue-ewt", "", "expected waiting time per trace queue, Q=DUR,Q=DUR (e.g. 1=1h,2=30m; DUR a Go duration or whole seconds)")
	f.DurationVar(&opts.defaultEWT, "default-ewt", sim.DefaultEWT*time.Second, "expected waiting time of the queues --queue-ewt does not list")
	f.StringVar(&opts.plotDir, "plot", "", "also draw the wait, cost, latency and gap distributions as PNG and SVG in this folder")
	f.BoolVar(&opts.gap, "gap", false, "window policy: re-solve each window with the exact csp solver and report the gap")
	return cmd
}

// parseQueueEWT parses --queue-ewt: comma-separated QUEUE=DURATION pairs,
// each duration a Go duration ("90m") or whole seconds ("5400"), a
// positive whole number of seconds.
func parseQueueEWT(v string) (map[string]int64, error) {
	out := map[string]int64{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	for _, part := range strings.Split(v, ",") {
		q, d, ok := strings.Cut(strings.TrimSpace(part), "=")
		q = strings.TrimSpace(q)
		if !ok || q == "" {
			return nil, fmt.Errorf("--queue-ewt %q: entry %q is not QUEUE=DURATION", v, part)
		}
		if _, dup := out[q]; dup {
			return nil, fmt.Errorf("--queue-ewt %q: queue %q given twice", v, q)
		}
		sec, err := parseSeconds(strings.TrimSpace(d))
		if err != nil {
			return nil, fmt.Errorf("--queue-ewt %q: queue %q: %w", v, q, err)
		}
		out[q] = sec
	}
	return out, nil
}

// parseSeconds parses a positive duration in whole seconds: a Go duration
// or a bare number of seconds.
func parseSeconds(d string) (int64, error) {
	if n, err := strconv.ParseInt(d, 10, 64); err == nil {
		if n <= 0 {
			return 0, fmt.Errorf("duration %q is not positive", d)
		}
		return n, nil
	}
	dur, err := time.ParseDuration(d)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 1h30m or a number of seconds", d)
	}
	if dur <= 0 || dur%time.Second != 0 {
		return 0, fmt.Errorf("duration %q is not a positive whole number of seconds", d)
	}
	return int64(dur / time.Second), nil
}

// runSimulate is `optsched simulate`: it checks the flags (every usage
// error before the trace is read), builds the run (sim.NewConfig, and the
// learned policy's wiring), runs it and prints the metrics.
func runSimulate(ctx context.Context, opts *simulateOptions) error {
	setup, err := opts.setup()
	if err != nil {
		return err
	}
	tr, err := trace.Open(opts.trace, opts.format, trace.Options{ProcsPerNode: opts.procsPerNode, SkipBad: opts.skipBad,
		MaxJobs: opts.maxTraceJobs, Strict: opts.strict, AllowEmpty: opts.allowEmpty})
	if err != nil {
		return err
	}
	cfg, err := sim.NewConfig(tr, setup)
	if err != nil {
		return opts.layoutError(tr, err)
	}
	if err := opts.learnedConfig(&cfg, tr); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	t0 := time.Now()
	var done func()
	cfg.Started, done = opts.progress(t0)
	res, err := sim.Run(ctx, tr, cfg)
	done()
	if err != nil {
		return err
	}
	sum := res.Summarise()
	opts.printSimulate(tr, &cfg, sum, time.Since(t0))
	if opts.plotDir != "" {
		label := opts.policy
		if opts.policy == "window" {
			label = fmt.Sprintf("window τ=%ds %s", opts.tau/time.Second, cfg.Solver.Name())
		} else if opts.allocator != "" {
			label += " " + opts.allocator
		}
		files, err := res.Plot(opts.plotDir, label)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.streams.out, "\nfigures: %s\n", strings.Join(files, ", "))
	}
	if opts.jsonOut != "" {
		return writeJSONFile(opts.jsonOut, sum)
	}
	return nil
}

// setup checks simulate's flags and returns the simulation's setup; every
// error is a usage error, found without reading a file.
func (opts *simulateOptions) setup() (sim.Setup, error) {
	if err := opts.validate(); err != nil {
		return sim.Setup{}, err
	}
	ewt, err := parseQueueEWT(opts.queueEWT)
	if err != nil {
		return sim.Setup{}, usageError{err}
	}
	if opts.defaultEWT <= 0 || opts.defaultEWT%time.Second != 0 {
		return sim.Setup{}, usageError{fmt.Errorf("--default-ewt must be a positive whole number of seconds, got %v", opts.defaultEWT)}
	}
	s := opts.limits()
	s.Policy, s.Tau, s.MaxJobs, s.Gap, s.Allocator = opts.policy, int64(opts.tau/time.Second), opts.maxJobs, opts.gap, opts.allocator
	s.ExpectedWait, s.DefaultExpectedWait = ewt, int64(opts.defaultEWT/time.Second)
	s.CPObjective, s.CPJobs, s.CPBackfill = opts.cpObjective, opts.cpJobs, opts.cpBackfill
	if opts.cpBackfill == 0 {
		s.CPBackfill = -1 // none (cpolicy's 0 is its default)
	}
	if opts.layout != "" {
		var l model.LayoutSpec
		if n, err := fmt.Sscanf(opts.layout, "%dx%dx%d", &l.Pods, &l.LeavesPerPod, &l.NodesPerLeaf); err != nil || n != 3 {
			return sim.Setup{}, usageError{fmt.Errorf("--layout must be PODSxLEAVESxNODES such as 25x4x10, got %q", opts.layout)}
		}
		s.Layout = &l
	}
	if opts.policy == "window" {
		if s.Solver, err = windowSolver(opts.solver, opts.heuristic, catalog.Options{Formulation: scas.Strong, Seed: opts.seed, Fallback: "sa"}); err != nil {
			return sim.Setup{}, err
		}
	}
	return s, nil
}

// validate checks the flags that need no parsing beyond cobra's.
func (opts *simulateOptions) validate() error {
	learnedPolicy := opts.policy == rlSimPolicy || opts.policy == schertSimPolicy || opts.policy == joshhSimPolicy
	switch {
	case opts.trace == "":
		return usageError{fmt.Errorf("--trace is required")}
	case opts.tau <= 0 || opts.tau%time.Second != 0:
		return usageError{fmt.Errorf("--tau must be a positive whole number of seconds, got %v", opts.tau)}
	case opts.maxJobs < 0 || opts.maxTraceJobs < 0 || opts.procsPerNode < 0:
		return usageError{fmt.Errorf("--max-jobs, --max-trace-jobs and --procs-per-node must be at least 0")}
	case opts.policy != "window" && !learnedPolicy && !slices.Contains(sim.PolicyNames(), opts.policy):
		return usageError{fmt.Errorf("--policy must be window or one of %s, %s, %s, %s, got %q", rlSimPolicy, schertSimPolicy, joshhSimPolicy, strings.Join(sim.PolicyNames(), ", "), opts.policy)}
	case opts.policy == joshhSimPolicy && opts.allocator != "" && opts.allocator != sim.FirstFit:
		return usageError{fmt.Errorf("--policy %s places its jobs with its allocation selector, or first-fit with --allocator first-fit; not %s", joshhSimPolicy, opts.allocator)}
	case opts.allocator != "" && !slices.Contains(sim.AllocatorNames(), opts.allocator):
		return usageError{fmt.Errorf("--allocator must be one of %s, got %q", strings.Join(sim.AllocatorNames(), ", "), opts.allocator)}
	case opts.policy == "window" && opts.allocator != "" && opts.allocator != sim.FirstFit:
		return usageError{fmt.Errorf("--allocator %s is for the per-job policies; the window policy places its jobs with --solver or --heuristic", opts.allocator)}
	case opts.cpObjective != cpolicy.BSLD && opts.cpObjective != cpolicy.Wait:
		return usageError{fmt.Errorf("--cp-objective must be %s or %s, got %q", cpolicy.BSLD, cpolicy.Wait, opts.cpObjective)}
	case opts.cpSearch != "auto" && opts.cpSearch != "on" && opts.cpSearch != "off":
		return usageError{fmt.Errorf("--cp-search must be auto, on or off, got %q", opts.cpSearch)}
	case opts.cpJobs < 1:
		return usageError{fmt.Errorf("--cp-jobs must be at least 1, got %d", opts.cpJobs)}
	case opts.cpBackfill < 0:
		return usageError{fmt.Errorf("--cp-backfill must be 0 or more, got %d", opts.cpBackfill)}
	case opts.policy == sim.CP && opts.timeLimitSet && opts.timeLimit <= 0:
		return usageError{fmt.Errorf("--time-limit must be positive for the cp policy, got %v", opts.timeLimit)}
	case opts.gap && opts.policy != "window":
		return usageError{fmt.Errorf("--gap measures the window solver's gap and needs --policy window, not %s", opts.policy)}
	case !learnedPolicy && (opts.weights != "" || opts.sample):
		return usageError{fmt.Errorf("--weights and --sample are for --policy %s, %s or %s", rlSimPolicy, schertSimPolicy, joshhSimPolicy)}
	case opts.kill && opts.policy != schertSimPolicy:
		return usageError{fmt.Errorf("--kill is for --policy %s", schertSimPolicy)}
	}
	return nil
}

// layoutError words sim.NewConfig's error: a usage error when --layout
// was given, else an error about the log's cluster size.
func (opts *simulateOptions) layoutError(tr *trace.Trace, err error) error {
	var le *sim.LayoutError
	switch {
	case !errors.As(err, &le):
		return err
	case le.Given:
		return usageError{fmt.Errorf("--layout: %w", le.Err)}
	}
	return fmt.Errorf("%s: a cluster of %d nodes (%s) would need a layout of %d: %w; give --layout, or check the log's header and its largest jobs",
		opts.trace, tr.Nodes, strings.TrimSuffix(strings.TrimPrefix(nodesFrom(tr, "", tr.Nodes), " ("), ")"), le.Spec.Pods*le.Spec.LeavesPerPod*le.Spec.NodesPerLeaf, le.Err)
}

// learnedConfig wires the learned policy --policy names (if any) into cfg:
// its weights, and its chooser, picker and killer, or selector.
func (opts *simulateOptions) learnedConfig(cfg *sim.Config, tr *trace.Trace) error {
	switch opts.policy {
	case rlSimPolicy:
		pol, err := rlPolicy(opts.weights, shippedFor(rlSimPolicy, opts.trace))
		if err != nil {
			return err
		}
		cfg.Policy = sim.Learned
		cfg.Chooser = &simChooser{c: learned.NewChooser(pol, learnedNorm(tr), opts.sample, opts.seed)}
	case schertSimPolicy:
		net, err := schertPolicy(opts.weights, false, opts.trace)
		if err != nil {
			return err
		}
		sch := learned.NewSchert(net, opts.kill, opts.sample, opts.seed)
		cfg.Policy, cfg.Picker, cfg.Killer = sim.Learned, sch, sch
	case joshhSimPolicy:
		return opts.joshhConfig(cfg, tr)
	}
	return nil
}

// learnedNorm is the learned policies' normalisation of tr: the largest
// request or run time, at least 1.
func learnedNorm(tr *trace.Trace) learned.Norm {
	norm := learned.Norm{MaxRequest: 1}
	for _, j := range tr.Jobs {
		norm.MaxRequest = max(norm.MaxRequest, float64(j.Walltime), float64(j.Runtime))
	}
	return norm
}

// progress returns simulate's sim.Config.Started hook, a bar on a
// terminal, else progressLines, and the function that ends it.
func (opts *simulateOptions) progress(t0 time.Time) (started func(done, total int), end func()) {
	label := "simulate " + opts.policy
	if !isTerminal(opts.streams.err) {
		return progressLines(opts.streams.err, label, t0, progressEvery), func() {}
	}
	var bar *report.Bar
	return func(_, total int) {
		if bar == nil { // total excludes the dropped jobs
			bar = report.NewBar(opts.streams.err, label, total)
		}
		bar.Add(1)
	}, func() { bar.Done() }
}

// printSimulate prints the run's header (trace, cluster, policy) and its
// metrics.
func (opts *simulateOptions) printSimulate(tr *trace.Trace, cfg *sim.Config, sum sim.Summary, took time.Duration) {
	out := opts.streams.out
	if tr.Header != nil { // SWF: the records by what happened to them
		fmt.Fprintf(out, "trace %s: %s; %d larger than the cluster dropped\n", opts.trace, tr.Records.Summary(), sum.Dropped)
	} else {
		fmt.Fprintf(out, "trace %s: %d jobs (%d skipped as malformed, %d larger than the cluster dropped)\n",
			opts.trace, len(tr.Jobs), tr.Skipped, sum.Dropped)
	}
	fmt.Fprintf(out, "cluster: %d nodes%s, on a %s layout\n", cfg.Nodes, nodesFrom(tr, opts.layout, cfg.Nodes), opts.layoutName(*cfg.TopologySpec.Layout))
	fmt.Fprintf(out, "policy %s%s; simulated in %.1f s\n\n", opts.policy, opts.policyNote(cfg), took.Seconds())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "jobs run\t%d\n", sum.Jobs)
	fmt.Fprintf(tw, "mean CH cost (all jobs)\t%.1f\n", sum.MeanCost)
	fmt.Fprintf(tw, "mean CH cost (multi-node)\t%.1f\n", sum.MeanMultiCost)
	fmt.Fprintf(tw, "mean wait\t%.1f s\n", sum.MeanWait)
	fmt.Fprintf(tw, "mean bounded slowdown\t%.3f\n", sum.MeanBSLD)
	fmt.Fprintf(tw, "mean turnaround\t%.1f s\n", sum.MeanTurnaround)
	fmt.Fprintf(tw, "mean slowdown (unbounded)\t%.3f\n", sum.MeanSlowdown)
	fmt.Fprintf(tw, "normalised turnaround\t%.3f\n", sum.MeanNormTurnaround)
	fmt.Fprintf(tw, "utilisation\t%.2f %%\n", 100*sum.Utilisation)
	fmt.Fprintf(tw, "makespan\t%d s\n", sum.Makespan)
	fmt.Fprintf(tw, "weighted queue time (WQT)\t%.1f (mean %.3f per job)\n", sum.WQT, sum.MeanWQT)
	fmt.Fprintf(tw, "late jobs (NL)\t%d (%s)\n", sum.LateJobs, ewtNote(cfg.ExpectedWait, cfg.DefaultExpectedWait))
	fmt.Fprintf(tw, "tardiness (TR)\t%d s\n", sum.Tardiness)
	if opts.policy == "window" {
		fmt.Fprintf(tw, "windows solved\t%d\n", sum.Windows)
		fmt.Fprintf(tw, "windows skipped\t%d (no job could start: the first in selection order needs more nodes than are idle)\n", sum.WindowsSkipped)
		if sum.WindowsTooLarge > 0 {
			fmt.Fprintf(tw, "windows too large for %s\t%d (answered by its fallback)\n", opts.solver, sum.WindowsTooLarge)
		}
		fmt.Fprintf(tw, "window solve latency\tmedian %.3f ms, p99 %.3f ms\n", sum.SolveMedianMS, sum.SolveP99MS)
	}
	if opts.policy == schertSimPolicy {
		fmt.Fprintf(tw, "kills\t%d (work lost: %d node-seconds)\n", sum.Kills, sum.LostNodeSeconds)
	}
	if opts.policy == sim.CP {
		fmt.Fprintf(tw, "decisions\t%d\n", sum.Windows)
		fmt.Fprintf(tw, "decision latency\tmedian %.3f ms, p99 %.3f ms\n", sum.SolveMedianMS, sum.SolveP99MS)
	}
	if g := sum.Gap; g != nil {
		fmt.Fprintf(tw, "gap to %s\tmean %.3f %%, max %.3f %% over %d windows (%d not measured)\n",
			g.Solver, 100*g.MeanGap, 100*g.MaxGap, g.Windows, g.Skipped)
		fmt.Fprintf(tw, "windows solved optimally\t%.2f %% (%s median %.3f ms)\n", 100*g.OptimalShare, g.Solver, g.ExactMedianMS)
	}
	tw.Flush()
}

// policyNote describes the policy's parameters for the header line: the
// window policy's τ, solver, cap and limit, or a per-job policy's
// allocator (and the cp policy's objective, jobs and limit).
func (opts *simulateOptions) policyNote(cfg *sim.Config) string {
	if opts.policy == "window" {
		return fmt.Sprintf(", τ %v, solver %s, max-jobs %d, time limit %v", opts.tau, cfg.Solver.Name(), opts.maxJobs, cfg.TimeLimit)
	}
	alloc := opts.allocator
	if alloc == "" {
		alloc = sim.FirstFit
		if opts.policy == joshhSimPolicy {
			alloc = "its allocation selector (depth-first or breadth-first per job)"
		}
	}
	note := ", allocator " + alloc
	if w := opts.weightsNote(); w != "" {
		note += ", " + w
	}
	if opts.policy != sim.CP {
		return note
	}
	lim := cfg.CP.Limit
	if lim == 0 {
		lim = cpolicy.DefaultLimit
	}
	note += fmt.Sprintf(", objective %s, %d jobs", cfg.CP.Objective, cfg.CP.K)
	if _, b := cfg.CP.Sizes(); b > 0 {
		note += fmt.Sprintf(", backfilling the next %d", b)
	} else {
		note += ", no backfilling"
	}
	switch {
	case !cfg.CP.NoSearch:
		return note + fmt.Sprintf(", %v per decision", lim)
	case opts.cpSearch == "off":
		return note + ", list schedules only (--cp-search off)"
	}
	return note + fmt.Sprintf(", list schedules only (no search above %d nodes; --cp-search on to search)", scaleNodes)
}

// progressEvery is how often a run that is not on a terminal reports its
// progress on stderr.
const progressEvery = 30 * time.Second

// progressLines returns a sim.Config.Started hook that writes a line to w
// each period once the run is that long: the jobs started, the elapsed
// time and the time left at the rate so far, so that a long run is never
// silent (a terminal gets report.Bar instead).
func progressLines(w io.Writer, label string, t0 time.Time, period time.Duration) func(done, total int) {
	next := t0.Add(period)
	return func(done, total int) {
		if done%64 != 0 && done != total {
			return // time.Now at every start would cost more than the start
		}
		now := time.Now()
		if now.Before(next) || done == total {
			return
		}
		next = now.Add(period)
		el := now.Sub(t0)
		eta := time.Duration(float64(el) * float64(total-done) / float64(max(done, 1)))
		fmt.Fprintf(w, "%s: %d/%d jobs started after %v, eta %v\n", label, done, total, el.Round(time.Second), eta.Round(time.Second))
	}
}

// ewtNote describes the expected waits in force: the listed queues, then
// the default.
func ewtNote(ewt map[string]int64, def int64) string {
	var b strings.Builder
	b.WriteString("ewt ")
	for _, q := range slices.Sorted(maps.Keys(ewt)) {
		fmt.Fprintf(&b, "queue %s %v, ", q, time.Duration(ewt[q])*time.Second)
	}
	if len(ewt) > 0 {
		b.WriteString("others ")
	}
	fmt.Fprintf(&b, "%v", time.Duration(def)*time.Second)
	return b.String()
}

// windowSolver builds the window policy's solver: --heuristic alone, or
// --solver (an exact one with SA in the reserve), checked by
// catalog.Validate; errors name the flag.
func windowSolver(name, heuristic string, o catalog.Options) (solver.Solver, error) {
	flag := "--solver"
	if heuristic != "" {
		name, flag = heuristic, "--heuristic"
	}
	spec := catalog.Spec{Name: name, Model: catalog.WholeNode, Alone: heuristic != "", Options: o}
	var ne *catalog.NameError
	switch err := catalog.Validate(spec); {
	case errors.As(err, &ne) && ne.Known():
		return nil, usageError{fmt.Errorf("%s %s schedules the time-and-resource model; the simulator's windows are whole-node (%s)", flag, name, strings.Join(catalog.WholeNodeNames(), ", "))}
	case err != nil:
		return nil, usageError{fmt.Errorf("%s: %w", flag, err)}
	}
	return spec.Solver()
}

// nodesFrom says where the cluster size (nodes) comes from.
func nodesFrom(tr *trace.Trace, layout string, nodes int) string {
	switch {
	case tr.Nodes == 0 && layout != "":
		return " (--layout)"
	case tr.Nodes == 0:
		return " (the paper's layout)"
	case tr.Nodes > nodes:
		return fmt.Sprintf(" (--layout %s, smaller than the log's %s of %d: its larger jobs are dropped)", layout, tr.NodesFrom, tr.Nodes)
	case tr.NodesFrom == "largest job":
		return " (the log's header gives neither MaxNodes nor MaxProcs: its largest job's size stands in)"
	case tr.NodesFrom != "":
		return " (the log's " + tr.NodesFrom + ")"
	}
	return ""
}

func (opts *simulateOptions) layoutName(l model.LayoutSpec) string {
	return fmt.Sprintf("%dx%dx%d", l.Pods, l.LeavesPerPod, l.NodesPerLeaf)
}

// rlSimPolicy is simulate's name of the learned RLScheduler design.
const rlSimPolicy = "rlscheduler"

// schertSimPolicy is simulate's name of the learned RLSchert design.
const schertSimPolicy = "rlschert"

// schertPolicy reads the rlschert weights of path, or the shipped ones
// (of the synthetic workload, of Lublin-1 for lublin_256*, else of
// HPC2N).
func schertPolicy(path string, synthetic bool, trace string) (*learned.RLSchert, error) {
	if path == "" && synthetic {
		return learned.ShippedRLSchert("synthetic")
	}
	if path == "" {
		return learned.ShippedRLSchert(shippedFor(schertSimPolicy, trace))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	net, err := learned.ReadRLSchert(f)
	if err != nil {
		return nil, fmt.Errorf("--weights %s: %w", path, err)
	}
	return net, nil
}

// shippedFor returns whose shipped weights learned policy runs on the
// trace at path by default (simulate, bench joshh): the trace's own where
// it is Lublin-1 or HPC2N (each design ships both), else HPC2N's, or
// Lublin-1's for joshh.
func shippedFor(policy, path string) string {
	switch paper := rlscheduler.PaperOf(path); {
	case paper != "":
		return paper
	case policy == joshhSimPolicy:
		return "lublin-1"
	}
	return "hpc2n"
}

// weightsNote says which weights a learned --policy runs with, or "".
func (opts *simulateOptions) weightsNote() string {
	switch {
	case opts.policy != rlSimPolicy && opts.policy != schertSimPolicy && opts.policy != joshhSimPolicy:
		return ""
	case opts.weights != "":
		return "weights " + opts.weights
	}
	return fmt.Sprintf("the shipped %s weights of %s", opts.policy, shippedFor(opts.policy, opts.trace))
}

// simChooser adapts a learned chooser to bench/sim.
type simChooser struct {
	c   *learned.Chooser
	buf []rlscheduler.Waiting
}

// ChooseHead implements sim.HeadChooser.
func (s *simChooser) ChooseHead(now int64, idle, nodes int, queue []sim.QueuedJob) int {
	s.buf = s.buf[:0]
	for i, q := range queue {
		s.buf = append(s.buf, rlscheduler.Waiting{Job: i, Submit: q.Submit, Request: q.Request, Nodes: q.Nodes})
	}
	return s.c.Choose(now, idle, nodes, s.buf)
}

// Visible implements sim.PrefixChooser.
func (s *simChooser) Visible() int { return s.c.Visible() }
