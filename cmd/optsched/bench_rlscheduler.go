package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/trace"
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
	schertW    string
	joshhW     string
}

// The learned columns (rlscheduler.LearnedColumns): rl-here, the
// rlscheduler design trained here choosing the heads of the published
// loop, and the other designs simulated in bench/sim on placed nodes and
// scored on the protocol's counter: rlschert's picker without and with
// its killer, and joshh.
const (
	rlLearned    = rlscheduler.Learned
	rlSchert     = rlscheduler.RLSchert
	rlSchertKill = rlscheduler.RLSchertKill
	rlJoSHH      = rlscheduler.JoSHH
)

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

The learned designs trained here are columns too (docs/learned.md):
rl-here (RLScheduler's design, choosing the heads of the published loop
without backfilling; --weights), and rlschert, rlschert-kill and joshh
(--rlschert-weights, --joshh-weights), simulated event by event in
bench/sim on placed nodes with every allocation checked and scored on the
same sequences (they may start any job that fits, like easy and cp).
Without a weights flag each uses its shipped weights of the trace, trained
on its jobs outside the ten test sequences; the output says which.

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
  optsched bench rlscheduler --trace log.swf --policies fcfs,sjf,wfp3-intended -o json
  optsched bench rlscheduler --trace instances/traces/HPC2N-2002-2.1-cln.swf.gz --backfill --policies sjf,f1,easy,cp,rl-here,rlschert,rlschert-kill,joshh`,
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
	f.StringVar(&opts.schertW, "rlschert-weights", "", "weights of the "+rlSchert+" and "+rlSchertKill+" columns (default: the shipped rlschert weights of the trace)")
	f.StringVar(&opts.joshhW, "joshh-weights", "", "weights of the "+rlJoSHH+" column (default: the shipped joshh weights of the trace)")
	f.BoolVar(&opts.sample, "sample", false, "learned columns: sample from the policy (seeded per sequence) instead of taking the most likely action")
	f.BoolVar(&opts.backfill, "backfill", false, "the published code's backfilling for the published policies (the \"with backfilling\" rows)")
	f.StringSliceVar(&opts.policies, "policies", nil, "columns: "+strings.Join(rlscheduler.Published, ", ")+", easy, cp, cp-lists, "+strings.Join(rlscheduler.LearnedColumns, ", ")+" (default "+strings.Join(rlscheduler.DefaultPolicies, ",")+", and cp with --backfill)")
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
	cfg.Paper = rlRowPaper(opts, s.Paper)
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
		cfg.Notes = map[string]string{rlLearned: weightsNote("rlscheduler", opts.weights, s.Paper)}
	}
	if err := addLearnedRunners(&cfg, opts, s.Paper, s.Policies); err != nil {
		return err
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

// addLearnedRunners adds the rlschert and joshh columns asked for in
// policies, with their weights (--rlschert-weights, --joshh-weights, or
// the shipped weights of the trace's published row).
func addLearnedRunners(cfg *rlscheduler.Config, opts *benchRLSchedulerOptions, paper string, policies []string) error {
	add := func(name, design, path string, col learned.Column) {
		if cfg.Runners == nil {
			cfg.Runners = map[string]func(context.Context, rlscheduler.Sequence) (*rlscheduler.Schedule, error){}
		}
		if cfg.Notes == nil {
			cfg.Notes = map[string]string{}
		}
		cfg.Runners[name] = col
		cfg.Notes[name] = weightsNote(design, path, paper)
	}
	if slices.Contains(policies, rlSchert) || slices.Contains(policies, rlSchertKill) {
		net, err := shippedOrFile(opts.schertW, paper, "--rlschert-weights", learned.ShippedRLSchert, learned.ReadRLSchert)
		if err != nil {
			return err
		}
		users, err := usersOf(opts.trace)
		if err != nil {
			return err
		}
		for _, name := range []string{rlSchert, rlSchertKill} {
			if slices.Contains(policies, name) {
				add(name, "rlschert", opts.schertW, learned.SchertColumn(net, cfg.Workload, users, name == rlSchertKill, opts.sample))
			}
		}
	}
	if slices.Contains(policies, rlJoSHH) {
		p, err := shippedOrFile(opts.joshhW, paper, "--joshh-weights", learned.ShippedJoSHHOf, learned.ReadJoSHH)
		if err != nil {
			return err
		}
		add(rlJoSHH, "joshh", opts.joshhW, learned.JoSHHColumn(p, cfg.Workload, opts.sample))
	}
	return nil
}

// shippedOrFile reads a design's weights from path, or its shipped
// weights of the trace's published row.
func shippedOrFile[P any](path, paper, flag string, shipped func(string) (P, error), read func(io.Reader) (P, error)) (P, error) {
	var zero P
	if path == "" {
		if paper == "" {
			return zero, usageError{fmt.Errorf("%s FILE is needed (shipped weights exist for lublin-1 and hpc2n only)", flag)}
		}
		return shipped(paper)
	}
	f, err := os.Open(path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	p, err := read(f)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return p, nil
}

// weightsNote says which weights a learned column ran with.
func weightsNote(design, path, paper string) string {
	if path != "" {
		return "weights " + path
	}
	return fmt.Sprintf("the shipped %s weights of %s (trained on its jobs outside the ten test sequences)", design, paper)
}

// usersOf maps a log's job numbers to their users (the protocol's
// loading keeps none; rlschert's predictor reads them).
func usersOf(path string) (map[string]string, error) {
	tr, err := trace.Open(path, "", trace.Options{})
	if err != nil {
		return nil, err
	}
	users := make(map[string]string, len(tr.Jobs))
	for _, j := range tr.Jobs {
		users[j.ID] = j.User
	}
	return users, nil
}

// rlRowPaper is the published row to print: none, unless --paper names
// it, when the sequences are not the published ones (a validation run's
// figures are not the paper's cells). The shipped weights still follow
// the trace.
func rlRowPaper(opts *benchRLSchedulerOptions, paper string) string {
	published := (len(opts.starts) == 0 || slices.Equal(opts.starts, rlscheduler.Starts)) && opts.length == rlscheduler.SequenceLength
	if !published && opts.paper == "auto" {
		return ""
	}
	return paper
}
