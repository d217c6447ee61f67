package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/bridi"
)

// benchBridiOptions are the inputs of `optsched bench bridi`.
type benchBridiOptions struct {
	streams   *streams
	cfg       bridi.Config
	verbose   bool
	jsonPath  string
	timeLimit time.Duration
	grid      time.Duration
}

func newBenchBridiCmd(s *streams, runF func(*benchBridiOptions) error) *cobra.Command {
	opts := &benchBridiOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "bridi",
		Short: "CP/SAT against PBSFifo and PBSWalltime on a 65-node Eurora-like cluster (Bridi et al.'s Table 1 metrics)",
		Long: `Bridi simulates a synthetic Eurora-like workload (65 nodes with cores, memory,
GPUs or MICs; queues debug, parallel and longpar) under the CP/SAT scheduler
(optsched solve --encoding cp) and the PBSFifo and PBSWalltime list schedulers,
scheduling the whole queue at every arrival and end, and prints Bridi et al.'s
Table 1 metrics — WQT, NL, TR and the mean overhead per decision — beside their
published Test 1 figures.`,
		Example: `  optsched bench bridi
  optsched bench bridi --jobs 400 --time-limit 1s --json bridi.json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchBridi(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&opts.cfg.Seed, "seed", 1, "workload seed")
	f.IntVar(&opts.cfg.Jobs, "jobs", 200, "number of jobs")
	f.Float64Var(&opts.cfg.MeanInterarrival, "interarrival", 150, "mean time between arrivals, seconds")
	f.DurationVar(&opts.timeLimit, "time-limit", time.Second, "time limit of each CP/SAT decision")
	f.DurationVar(&opts.grid, "granularity", 60*time.Second, "time grid of the CP/SAT scheduler")
	f.StringSliceVar(&opts.cfg.Policies, "policies", []string{"cp", "pbs-fifo", "pbs-walltime"}, "policies to run")
	f.StringVar(&opts.jsonPath, "json", "", "also write the results as JSON to this file")
	f.StringVar(&opts.cfg.DumpDir, "dump-unproven", "", "write every CP/SAT decision window not proven optimal to this directory (window JSON, <policy>-s<seed>-a<interarrival>-t<time>.json)")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "a line per policy as it finishes, on stderr")
	return cmd
}

func runBenchBridi(ctx context.Context, opts *benchBridiOptions) error {
	if opts.cfg.Jobs < 1 || opts.cfg.MeanInterarrival <= 0 || opts.timeLimit <= 0 {
		return usageError{fmt.Errorf("--jobs, --interarrival and --time-limit must be positive")}
	}
	g, err := granularity(opts.grid)
	if err != nil {
		return err
	}
	opts.cfg.Grid, opts.cfg.TimeLimit = g, opts.timeLimit
	if opts.verbose {
		opts.cfg.Progress = opts.streams.err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := bridi.Run(ctx, opts.cfg)
	if err != nil {
		return err
	}
	if err := bridi.WriteReport(opts.streams.out, opts.cfg, res); err != nil {
		return err
	}
	if opts.jsonPath != "" {
		return writeJSONFile(opts.jsonPath, res)
	}
	return nil
}
