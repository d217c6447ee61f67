package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/learned"
)

// benchSchertOptions are the inputs of `optsched bench rlschert`.
type benchSchertOptions struct {
	streams   *streams
	trace     string
	synthetic bool
	seed      uint64
	dropFirst int
	weights   string
	policies  []string
	sample    bool
	output    string
	// starts replace the test sequences (validation sequences elsewhere).
	starts []int
	length int
	// ruleVisible, ruleReserve and ruleRank, when ruleVisible is set,
	// give the rule and rule-kill rows that design instead of the
	// weights' (the candidates of a design, measured as rules).
	ruleVisible, ruleReserve, ruleRank string
	// ruleKillMargin and ruleKillElapsed, when set, give the rule rows'
	// KillRule2 those thresholds.
	ruleKillMargin, ruleKillElapsed float64
}

// schertPublished is RLSchert's Table 7 (average slowdown on its test
// set of private VASP jobs): other data than any run here.
var schertPublished = []struct {
	name string
	v    float64
}{{"SJF", 10.29}, {"SAF", 10.23}, {"DeepRM", 9.63}, {"RLSchert, no kill", 8.93}, {"RLSchert, PPO kill", 8.32}}

func newBenchSchertCmd(s *streams, runF func(*benchSchertOptions) error) *cobra.Command {
	opts := &benchSchertOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "rlschert",
		Short: "Measure the rlschert design against SJF and SAF on average (unbounded) slowdown",
		Long: `Bench rlschert runs the learned RLSchert design (Wang et al., Appl. Sci.
2021), with and without its kill action, and its baselines on held-out
sequences and prints each policy's average slowdown (unbounded:
(end - submit) / run time, run time floored at 1 s) beside the paper's
Table 7 (measured on its private VASP jobs: other data).

On a trace the sequences are the ten of optsched bench rlscheduler
(1,024 jobs from starts 1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762,
4022, 7085 of the jobs by submit time), which rlschert's training never
sees; --sequences (and --length) measure others instead, such as
validation sequences training excluded with train sched --exclude. With --synthetic they are ten chunks of 256 jobs of RLSchert's
synthetic workload (Table 2) from another seed than training's.

Rows: sjf and saf (bench/sim's: the whole queue, EASY backfilling),
sjf-5 and saf-5 (RLSchert's baselines: greedy over the 5 visible jobs),
rule and rule-kill (the rules the design imitates), rlschert and
rlschert-kill. Every start goes through model.Check.`,
		Example: `  optsched bench rlschert --trace instances/traces/HPC2N-2002-2.1-cln.swf.gz
  optsched bench rlschert --synthetic --weights schert-synth.bin.gz`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchSchert(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", "", "SWF trace")
	f.BoolVar(&opts.synthetic, "synthetic", false, "RLSchert's synthetic workload instead of a trace")
	f.Uint64Var(&opts.seed, "seed", 1, "--synthetic: the training seed (the test jobs use 1000 + it)")
	f.IntVar(&opts.dropFirst, "drop-first", -1, "drop the first N jobs by submit (default: 5 for HPC2N-2002-2.1*, else 0)")
	f.StringVar(&opts.weights, "weights", "", "rlschert weights (default: the shipped weights, trained on Lublin-1 for lublin_256*, else on HPC2N, or with --synthetic on the synthetic workload of seed 1)")
	f.StringSliceVar(&opts.policies, "policies", learned.SchertPolicies, "rows: "+strings.Join(learned.SchertPolicies, ", "))
	f.IntSliceVar(&opts.starts, "sequences", nil, "start positions of the sequences in the jobs by submit time (default the ten test sequences; validation sequences elsewhere); not with --synthetic")
	f.IntVar(&opts.length, "length", 0, "jobs per sequence with --sequences (default 1,024)")
	f.StringVar(&opts.ruleVisible, "rule-visible", "", "the rule and rule-kill rows' design instead of the weights': queue or oldest (as train sched's --visible)")
	f.StringVar(&opts.ruleReserve, "rule-reserve", learned.NewSchertDesign.Reserve.String(), "with --rule-visible queue: the reservation's holder: oldest, key or none")
	f.StringVar(&opts.ruleRank, "rule-rank", learned.NewSchertDesign.RankName(), "with --rule-visible queue: the rank key: length or area (predicted), length-req or area-req (requested)")
	f.Float64Var(&opts.ruleKillMargin, "rule-kill-margin", 0, "the rule-kill row's KillRule2 margin instead of the design's")
	f.Float64Var(&opts.ruleKillElapsed, "rule-kill-elapsed", 0, "the rule-kill row's KillRule2 elapsed share instead of the design's")
	f.BoolVar(&opts.sample, "sample", false, "sample the design's actions (seeded per sequence) instead of the most likely")
	f.StringVarP(&opts.output, "output", "o", "table", "table or json")
	return cmd
}

func runBenchSchert(ctx context.Context, opts *benchSchertOptions) error {
	if opts.output != "table" && opts.output != "json" {
		return usageError{fmt.Errorf("-o must be table or json, got %q", opts.output)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	jobs, nodes, starts, n, name, err := schertWorkload(opts.trace, opts.synthetic, true, opts.seed, opts.dropFirst)
	if err != nil {
		return err
	}
	if opts.length != 0 && (len(opts.starts) == 0 || opts.length < 1) {
		return usageError{fmt.Errorf("--length is for --sequences, at least 1")}
	}
	if len(opts.starts) > 0 {
		if opts.length > 0 {
			n = opts.length
		}
		if opts.synthetic {
			return usageError{fmt.Errorf("--sequences is for a trace, not --synthetic")}
		}
		for _, s := range opts.starts {
			if s < 0 || s+n > len(jobs) {
				return usageError{fmt.Errorf("--sequences: a sequence of %d jobs at %d does not fit in the trace's %d jobs", n, s, len(jobs))}
			}
		}
		starts = opts.starts
	}
	net, err := schertPolicy(opts.weights, opts.synthetic, opts.trace)
	if err != nil {
		return err
	}
	t0 := time.Now()
	ruleNet := net
	if opts.ruleVisible != "" || opts.ruleKillMargin != 0 || opts.ruleKillElapsed != 0 {
		c := *net
		if opts.ruleVisible != "" {
			d, err := schertDesignOf(opts.ruleVisible, opts.ruleReserve, opts.ruleRank)
			if err != nil {
				return err
			}
			c.Design = d
		}
		if opts.ruleKillMargin < 0 || opts.ruleKillElapsed < 0 {
			return usageError{fmt.Errorf("--rule-kill-margin and --rule-kill-elapsed must be positive")}
		}
		if opts.ruleKillMargin != 0 {
			c.Design.KillMargin = opts.ruleKillMargin
		}
		if opts.ruleKillElapsed != 0 {
			c.Design.KillElapsed = opts.ruleKillElapsed
		}
		ruleNet = &c
	}
	var rows []learned.SchertRow
	for _, pol := range opts.policies {
		nt := net
		if pol == "rule" || pol == "rule-kill" {
			nt = ruleNet
		}
		r, err := learned.EvalSchert(ctx, jobs, nodes, starts, n, []string{pol}, nt, opts.sample)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	if opts.output == "json" {
		return writeJSON(opts.streams.out, rows)
	}
	out := opts.streams.out
	fmt.Fprintf(out, "%s: %d sequences of %d jobs on %d nodes; average slowdown (unbounded), %.1f s\n\n", name, len(starts), n, nodes, time.Since(t0).Seconds())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY\tMEAN SLOWDOWN\tMEAN TURNAROUND (s)\tKILLS\tLOST NODE-S\tPER SEQUENCE")
	for _, r := range rows {
		per := make([]string, len(r.Slowdown))
		for i, v := range r.Slowdown {
			per[i] = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%d\t%d\t%s\n", r.Policy, r.Mean, r.Turnaround, r.Kills, r.LostNodeSeconds, strings.Join(per, " "))
	}
	tw.Flush()
	fmt.Fprintf(out, "\nRLSchert's Table 7 (its private VASP jobs: other data):")
	for _, p := range schertPublished {
		fmt.Fprintf(out, " %s %.2f;", p.name, p.v)
	}
	fmt.Fprintln(out)
	return nil
}

// schertDesignOf returns the rlschert design of the --visible, --reserve
// and --rank flags: visible oldest is the paper's design whole; queue
// is learned.NewSchertDesign with that reservation and rank key.
func schertDesignOf(visible, reserve, rank string) (learned.SchertDesign, error) {
	switch visible {
	case "oldest":
		return learned.SchertDesign{}, nil
	case "queue", "":
	default:
		return learned.SchertDesign{}, usageError{fmt.Errorf("--visible must be queue or oldest, got %q", visible)}
	}
	d := learned.NewSchertDesign
	r, err := learned.ParseSchertReserve(reserve)
	if err != nil {
		return d, usageError{err}
	}
	d.Reserve = r
	switch rank {
	case "length", "":
	case "area":
		d.Area = true
	case "length-req":
		d.RankRequest = true
	case "area-req":
		d.Area, d.RankRequest = true, true
	default:
		return d, usageError{fmt.Errorf("--rank must be length, area, length-req or area-req, got %q", rank)}
	}
	return d, nil
}
