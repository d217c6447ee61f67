package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/bridi"
	"github.com/optsched/optsched/solver"
)

// benchCPOptions are the inputs of `optsched bench cp`.
type benchCPOptions struct {
	streams   *streams
	corpus    bridi.CorpusConfig
	paths     []string
	solvers   []string
	timeLimit time.Duration
	grid      time.Duration
	jsonPath  string
	saveDir   string
	verbose   bool
}

func newBenchCPCmd(s *streams, runF func(*benchCPOptions) error) *cobra.Command {
	opts := &benchCPOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "cp [window.json | dir ...]",
		Short: "Proven gaps and latency of CP/SAT and the list schedulers, window by window, on a corpus of decision windows",
		Long: `Bench cp solves a corpus of windows of the time-and-resource model (optsched
solve --encoding cp) with every chosen scheduler, each within the time limit,
and prints per scheduler — over all windows and per band of waiting jobs — how
many it proved optimal, how many it answered within 1 % of its own bound (the
gap it reports) and within 1 % of the best bound any scheduler proved on the
window, the mean, median and largest gap to that best bound, and the median
and largest latency, also as a ratio to the first scheduler's. A heuristic's
gap to the best bound is how far from optimal it is at most.

Without arguments the corpus is drawn from the synthetic Eurora-like workload
of bench bridi: the workload simulated under PBSWalltime — a path that depends
on neither the solver nor the machine, so the same flags give the same
windows everywhere — and every decision with at least --min-jobs waiting jobs
kept, or a seeded --sample of them. With arguments it is the window JSON files
given, a directory standing for its *.json files (e.g. those bench bridi
--dump-unproven wrote).`,
		Example: `  optsched bench cp
  optsched bench cp --solvers sat,bnb,pbs-walltime --time-limit 2s --json cp.json
  optsched bench cp --sample 0 --min-jobs 15 --save-windows hard/
  optsched bench cp hard/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			if runF != nil {
				return runF(opts)
			}
			return runBenchCP(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&opts.corpus.Seed, "seed", 1, "workload and sample seed")
	f.IntVar(&opts.corpus.Jobs, "jobs", 300, "number of jobs of the workload")
	f.Float64Var(&opts.corpus.MeanInterarrival, "interarrival", 60, "mean time between arrivals, seconds")
	f.IntVar(&opts.corpus.MinJobs, "min-jobs", 7, "keep the decisions with at least this many waiting jobs")
	f.IntVar(&opts.corpus.Sample, "sample", 90, "draw this many of them at random (0: all)")
	f.StringSliceVar(&opts.solvers, "solvers", []string{"sat", "pbs-walltime", "pbs-fifo"}, "schedulers to run: sat, bnb, pbs-walltime, pbs-fifo")
	f.DurationVar(&opts.timeLimit, "time-limit", time.Second, "time limit of each scheduler on each window")
	f.DurationVar(&opts.grid, "granularity", 60*time.Second, "time grid of the schedules")
	f.StringVar(&opts.jsonPath, "json", "", "also write every answer as JSON to this file")
	f.StringVar(&opts.saveDir, "save-windows", "", "also write the corpus's windows to this directory (window JSON, for optsched solve --encoding cp)")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "a line per window as it is solved, on stderr")
	return cmd
}

func runBenchCP(ctx context.Context, opts *benchCPOptions) error {
	c := opts.corpus
	switch {
	case opts.timeLimit <= 0:
		return usageError{fmt.Errorf("--time-limit must be positive, got %v", opts.timeLimit)}
	case c.Jobs < 1 || !(c.MeanInterarrival > 0) || math.IsInf(c.MeanInterarrival, 0):
		return usageError{fmt.Errorf("--jobs and --interarrival must be positive and finite")}
	case c.MinJobs < 0 || c.Sample < 0:
		return usageError{fmt.Errorf("--min-jobs and --sample must not be negative")}
	case len(opts.solvers) == 0:
		return usageError{fmt.Errorf("--solvers: name at least one scheduler")}
	}
	g, err := granularity(opts.grid)
	if err != nil {
		return err
	}
	var ss []solver.Scheduler
	for _, name := range opts.solvers {
		s, err := cpScheduler(name, true, nil, 0)
		if err != nil {
			return usageError{fmt.Errorf("--solvers: %w", err)}
		}
		ss = append(ss, s)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var corpus []bridi.CorpusWindow
	source := ""
	if len(opts.paths) > 0 {
		if corpus, err = bridi.ReadCorpus(opts.paths); err != nil {
			return err
		}
		source = fmt.Sprintf("%d window files", len(corpus))
	} else {
		if corpus, err = bridi.Corpus(ctx, c); err != nil {
			return err
		}
		source = fmt.Sprintf("%d decision windows with ≥ %d waiting jobs of the Bridi workload (%d jobs, interarrival %g s, seed %d) under PBSWalltime",
			len(corpus), c.MinJobs, c.Jobs, c.MeanInterarrival, c.Seed)
		if c.Sample > 0 {
			source += fmt.Sprintf(", a sample of at most %d", c.Sample)
		}
	}
	if len(corpus) == 0 {
		return fmt.Errorf("bench cp: the corpus is empty (lower --min-jobs, or raise --jobs or the load)")
	}
	if opts.saveDir != "" {
		if err := bridi.WriteCorpus(opts.saveDir, corpus); err != nil {
			return fmt.Errorf("--save-windows: %w", err)
		}
	}
	var progress = opts.streams.err
	if !opts.verbose {
		progress = nil
	}
	res, err := bridi.SolveCorpus(ctx, corpus, ss, g, opts.timeLimit, progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.streams.out, "%s; %v per scheduler and window, %d s grid; gaps on Eq. (2), to the best bound any scheduler proved on the window\n\n", source, opts.timeLimit, g)
	if err := bridi.WriteCorpusReport(opts.streams.out, bridi.SummariseCorpus(res)); err != nil {
		return err
	}
	if opts.jsonPath != "" {
		return writeJSONFile(opts.jsonPath, res)
	}
	return nil
}
