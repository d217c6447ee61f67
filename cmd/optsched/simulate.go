package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// simulateOptions are the inputs of `optsched simulate`.
type simulateOptions struct {
	streams      *streams
	trace        string
	format       string
	policy       string
	tau          time.Duration
	solver       string
	heuristic    string
	maxJobs      int
	timeLimit    time.Duration
	layout       string
	procsPerNode int
	skipBad      bool
	maxTraceJobs int
	jsonOut      string
	seed         uint64
}

func newSimulateCmd(s *streams, runF func(*simulateOptions) error) *cobra.Command {
	opts := &simulateOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "simulate --trace FILE",
		Short: "Replay a workload trace under a scheduling policy and print the metrics",
		Long: `Simulate replays a job trace on a cluster: the NSA paper's trace ("lan": id
arrival runtime nodes per line, on the paper's 25×4×10 layout) or a Standard
Workload Format log of the Parallel Workloads Archive ("swf", gzip accepted).

Policies: window (window-based scheduling every --tau, each window solved by
--solver or --heuristic, --max-jobs per window); per job, first-fit on the
lowest idle node ids: fcfs, easy (EASY backfilling), sjf, saf (walltime ×
nodes), drf (fewest nodes; one resource), tetris (packing score), pbs-fifo
(backfilling limited to the first 10 queued jobs) and pbs-walltime
(shortest walltime first, backfilling limited to 400), after Bridi et al. Metrics: mean CH cost,
wait, bounded slowdown (10 s), turnaround, utilisation, makespan, and the
per-window solve latency.`,
		Example: `  optsched simulate --trace ../shared/data/lan2023_trace_1800_40.txt --policy window --tau 60s --max-jobs 5
  optsched simulate --trace KTH-SP2-1996-2.1-cln.swf.gz --format swf --policy easy`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runSimulate(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", "", "trace file (required)")
	f.StringVar(&opts.format, "format", "", "lan or swf (default: from the file name)")
	f.StringVar(&opts.policy, "policy", "window", "window, or a per-job policy: "+strings.Join(sim.PolicyNames(), ", "))
	f.DurationVar(&opts.tau, "tau", 60*time.Second, "window period τ (window policy)")
	f.StringVar(&opts.solver, "solver", "csp", "window solver")
	f.StringVar(&opts.heuristic, "heuristic", "", "window heuristic instead of a solver")
	f.IntVar(&opts.maxJobs, "max-jobs", 0, "cap on the multi-node jobs per window (the paper uses 5)")
	f.DurationVar(&opts.timeLimit, "time-limit", 10*time.Second, "time limit per window solve")
	f.StringVar(&opts.layout, "layout", "", "cluster layout PODSxLEAVESxNODES (default: 25x4x10 for lan, derived from the log's size for swf)")
	f.IntVar(&opts.procsPerNode, "procs-per-node", 0, "SWF: processors per node (default: from the header, else 1)")
	f.BoolVar(&opts.skipBad, "skip-bad", false, "skip malformed trace lines (counted) instead of failing")
	f.IntVar(&opts.maxTraceJobs, "max-trace-jobs", 0, "read only the first N jobs of the trace (0: all)")
	f.StringVar(&opts.jsonOut, "json", "", "also write the metrics as JSON to this file")
	f.Uint64Var(&opts.seed, "seed", 1, "random seed of randomised solvers")
	return cmd
}

func runSimulate(ctx context.Context, opts *simulateOptions) error {
	if opts.trace == "" {
		return usageError{fmt.Errorf("--trace is required")}
	}
	if opts.tau <= 0 || opts.tau%time.Second != 0 {
		return usageError{fmt.Errorf("--tau must be a positive whole number of seconds, got %v", opts.tau)}
	}
	if opts.maxJobs < 0 || opts.maxTraceJobs < 0 || opts.procsPerNode < 0 {
		return usageError{fmt.Errorf("--max-jobs, --max-trace-jobs and --procs-per-node must be at least 0")}
	}
	tr, err := trace.Open(opts.trace, opts.format, trace.Options{ProcsPerNode: opts.procsPerNode, SkipBad: opts.skipBad, MaxJobs: opts.maxTraceJobs})
	if err != nil {
		return err
	}
	nodes := tr.Nodes
	spec := model.LayoutSpec{Pods: 25, LeavesPerPod: 4, NodesPerLeaf: 10}
	if opts.layout != "" {
		if n, err := fmt.Sscanf(opts.layout, "%dx%dx%d", &spec.Pods, &spec.LeavesPerPod, &spec.NodesPerLeaf); err != nil || n != 3 {
			return usageError{fmt.Errorf("--layout must be PODSxLEAVESxNODES such as 25x4x10, got %q", opts.layout)}
		}
	} else if nodes > 0 {
		spec.Pods = (nodes + 39) / 40 // whole pods of 4 leaves × 10 nodes
	}
	topo, err := model.NewLayout(spec.Pods, spec.LeavesPerPod, spec.NodesPerLeaf)
	if err != nil {
		return usageError{fmt.Errorf("--layout: %w", err)}
	}
	cfg := sim.Config{Topology: topo, TopologySpec: model.TopologySpec{Layout: &spec}, Nodes: nodes,
		Cost: model.DefaultCostModel, Policy: opts.policy, Tau: int64(opts.tau / time.Second),
		MaxJobs: opts.maxJobs, TimeLimit: opts.timeLimit, Check: true}
	if opts.policy == "window" {
		so := &solveOptions{streams: opts.streams, solver: opts.solver, heuristic: opts.heuristic,
			formulation: "strong", fallback: "sa", seed: opts.seed,
			sa: solver.SAParams{Tmax: 2500, Tmin: 2.5, Steps: 500, Destroy: 2, Q: 100}}
		if cfg.Solver, err = so.newSolver(); err != nil {
			return err
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = topo.NumNodes()
	}
	t0 := time.Now()
	res, err := sim.Run(ctx, tr, cfg)
	if err != nil {
		return err
	}
	sum := res.Summarise()
	out := opts.streams.out
	fmt.Fprintf(out, "trace %s: %d jobs (%d skipped as malformed, %d larger than the cluster dropped), %d nodes used of a %s layout\n",
		opts.trace, len(tr.Jobs), tr.Skipped, sum.Dropped, cfg.Nodes, opts.layoutName(spec))
	fmt.Fprintf(out, "policy %s", opts.policy)
	if opts.policy == "window" {
		fmt.Fprintf(out, ", τ %v, solver %s, max-jobs %d", opts.tau, cfg.Solver.Name(), opts.maxJobs)
	}
	fmt.Fprintf(out, "; simulated in %.1f s\n\n", time.Since(t0).Seconds())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "jobs run\t%d\n", sum.Jobs)
	fmt.Fprintf(tw, "mean CH cost (all jobs)\t%.1f\n", sum.MeanCost)
	fmt.Fprintf(tw, "mean CH cost (multi-node)\t%.1f\n", sum.MeanMultiCost)
	fmt.Fprintf(tw, "mean wait\t%.1f s\n", sum.MeanWait)
	fmt.Fprintf(tw, "mean bounded slowdown\t%.3f\n", sum.MeanBSLD)
	fmt.Fprintf(tw, "mean turnaround\t%.1f s\n", sum.MeanTurnaround)
	fmt.Fprintf(tw, "utilisation\t%.2f %%\n", 100*sum.Utilisation)
	fmt.Fprintf(tw, "makespan\t%d s\n", sum.Makespan)
	if opts.policy == "window" {
		fmt.Fprintf(tw, "windows solved\t%d\n", sum.Windows)
		fmt.Fprintf(tw, "window solve latency\tmedian %.3f ms, p99 %.3f ms\n", sum.SolveMedianMS, sum.SolveP99MS)
	}
	tw.Flush()
	if opts.jsonOut != "" {
		data, err := json.MarshalIndent(sum, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(opts.jsonOut, append(data, '\n'), 0o644)
	}
	return nil
}

func (opts *simulateOptions) layoutName(l model.LayoutSpec) string {
	return fmt.Sprintf("%dx%dx%d", l.Pods, l.LeavesPerPod, l.NodesPerLeaf)
}
