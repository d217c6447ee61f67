package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/rlscheduler"
)

// benchRLSchedulerOptions are the inputs of `optsched bench rlscheduler`.
type benchRLSchedulerOptions struct {
	streams    *streams
	trace      string
	paper      string
	backfill   bool
	policies   []string
	starts     []int
	length     int
	dropFirst  int
	output     string
	jsonPath   string
	verbose    bool
	bound      bool
	boundLimit time.Duration
	timeLimit  time.Duration
	cpJobs     int
	cpObj      string
	weights    string
	sample     bool
}

// rlLearned is the learned column (rlscheduler.Learned).
const rlLearned = rlscheduler.Learned

func newBenchRLSchedulerCmd(s *streams, runF func(*benchRLSchedulerOptions) error) *cobra.Command {
	opts := &benchRLSchedulerOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "rlscheduler",
		Short: "RLScheduler's benchmark (SC'20): average bounded slowdown of FCFS, WFP3, UNICEP, SJF, F1 and EASY on 10 sequences of a log, beside the published figures",
		Long: `Rlscheduler runs the benchmark of RLScheduler (D. Zhang et al., SC'20) on an SWF
log: 10 sequences of 1,024 consecutive jobs (start positions 1981, 2756, 4299,
8850, 3316, 2714, 5228, 7762, 4022, 7085 of the loaded job list) on a counter
of free nodes, under the published decision loop and keys, with or without
the published code's backfilling (--backfill). It prints each policy's
average bounded slowdown and its value on every sequence beside the
published figure of the trace (Lublin-1 and HPC2N are shipped in
instances/traces), and EASY backfilling (with extra nodes) as an extra
column, simulated event by event.

For every sequence it also proves a lower bound on the mean bounded slowdown
that any schedule could reach (bench/offline: a Lagrangian relaxation of the
cluster's capacity over time buckets; for sequences of 64 jobs or fewer, the
exact offline optimum by branch and bound) and prints each policy's gap to
it, and the best offline schedule found. The bound is offline: it knows every
arrival and real run time in advance.

The published row is chosen by --paper (default: from the file name:
lublin_256 is Lublin-1, HPC2N-2002 is HPC2N). HPC2N version 2.1 has 5
records more than the 2.2 file the paper used; for a file named
HPC2N-2002-2.1* --drop-first defaults to 5.

The protocol is described in docs/rlscheduler.md and go doc
./bench/rlscheduler.`,
		Example: `  optsched bench rlscheduler --trace instances/traces/lublin_256.swf.gz
  optsched bench rlscheduler --trace instances/traces/HPC2N-2002-2.1-cln.swf.gz --backfill
  optsched bench rlscheduler --trace log.swf --policies fcfs,sjf,wfp3-intended -o json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchRLScheduler(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", "instances/traces/lublin_256.swf.gz", "SWF log (gzip or plain)")
	f.StringVar(&opts.paper, "paper", "auto", "published row to print beside ours: lublin-1, hpc2n, none, or auto (from the file name)")
	f.StringVar(&opts.weights, "weights", "", "weights of the "+rlLearned+" column (optsched train sched; default: the shipped weights of the trace)")
	f.BoolVar(&opts.sample, "sample", false, rlLearned+": sample from the policy (seeded per sequence) instead of taking the most likely job")
	f.BoolVar(&opts.backfill, "backfill", false, "the published code's backfilling for the published policies (the \"with backfilling\" rows)")
	f.StringSliceVar(&opts.policies, "policies", nil, "columns: "+strings.Join(rlscheduler.Published, ", ")+", easy, cp, cp-lists, "+rlLearned+" (default "+strings.Join(rlscheduler.DefaultPolicies, ",")+", and cp with --backfill)")
	f.IntSliceVar(&opts.starts, "sequences", nil, "start positions of the sequences in the loaded job list (default the published ten)")
	f.IntVar(&opts.length, "length", rlscheduler.SequenceLength, "jobs per sequence")
	f.IntVar(&opts.dropFirst, "drop-first", -1, "drop the first N job records of the file (default: 5 for HPC2N-2002-2.1*, else 0)")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	f.StringVar(&opts.jsonPath, "json", "", "also write the results as JSON to this file")
	f.DurationVar(&opts.timeLimit, "time-limit", cpolicy.DefaultLimit, "time limit of each cp decision")
	f.IntVar(&opts.cpJobs, "cp-jobs", cpolicy.DefaultK, "cp: the first K waiting jobs by arrival form each decision's window")
	f.StringVar(&opts.cpObj, "cp-objective", cpolicy.BSLD, "cp: bsld (starts weighted by 1/max(requested time, 10 s)) or wait (Bridi's weighted queue time, one queue)")
	f.BoolVar(&opts.bound, "bound", true, "prove an offline lower bound for every sequence (exact optimum for sequences of ≤ 64 jobs) and print each policy's gap to it")
	f.DurationVar(&opts.boundLimit, "bound-limit", 10*time.Second, "time limit of the bound (or the exact search) per sequence")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "progress on stderr")
	return cmd
}

// setup is the benchmark the flags describe (rlscheduler.Setup).
func (opts *benchRLSchedulerOptions) setup() rlscheduler.Setup {
	return rlscheduler.Setup{
		Trace: opts.trace, Paper: opts.paper, DropFirst: opts.dropFirst,
		Backfill: opts.backfill, Starts: opts.starts, Len: opts.length, Policies: opts.policies,
		CP:    cpolicy.Policy{Limit: opts.timeLimit, K: opts.cpJobs, Objective: opts.cpObj},
		Bound: opts.bound, BoundLimit: opts.boundLimit,
	}
}

// runBenchRLScheduler is `optsched bench rlscheduler`: the flags checked
// (rlscheduler.Setup.Check), the log loaded, the learned column wired in
// when asked for, the benchmark run and printed.
func runBenchRLScheduler(ctx context.Context, opts *benchRLSchedulerOptions) error {
	if opts.output != "table" && opts.output != "json" {
		return usageError{fmt.Errorf("-o must be table or json, got %q", opts.output)}
	}
	s, err := opts.setup().Check()
	if err != nil {
		return usageError{err}
	}
	w, err := rlscheduler.Open(opts.trace, rlscheduler.LoadOptions{DropFirst: s.DropFirst})
	if err != nil {
		return err
	}
	cfg := rlscheduler.NewConfig(w, s)
	if slices.Contains(s.Policies, rlLearned) {
		pol, err := rlPolicy(opts.weights, s.Paper)
		if err != nil {
			return err
		}
		norm := learned.NormOf(w)
		cfg.Choosers = map[string]func(rlscheduler.Sequence) rlscheduler.Chooser{
			rlLearned: func(seq rlscheduler.Sequence) rlscheduler.Chooser {
				return learned.NewChooser(pol, norm, opts.sample, uint64(seq.Start))
			},
		}
	}
	if opts.verbose {
		cfg.Progress = func(col string, done, total int) {
			fmt.Fprintf(opts.streams.err, "%s: %d/%d sequences\n", col, done, total)
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := rlscheduler.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if opts.jsonPath != "" {
		if err := writeJSONFile(opts.jsonPath, res); err != nil {
			return err
		}
	}
	if opts.output == "json" {
		return writeJSON(opts.streams.out, res)
	}
	return res.WriteTable(opts.streams.out)
}

// rlPolicy reads the rlscheduler weights of --weights, or the shipped
// weights of the trace's published row.
func rlPolicy(path, paper string) (*learned.RLScheduler, error) {
	if path == "" {
		if paper == "" {
			return nil, usageError{fmt.Errorf("%s needs --weights FILE (shipped weights exist for lublin-1 and hpc2n only)", rlLearned)}
		}
		return learned.Shipped(paper)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := learned.ReadRLScheduler(f)
	if err != nil {
		return nil, fmt.Errorf("--weights %s: %w", path, err)
	}
	return p, nil
}
