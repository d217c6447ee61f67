package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/rlscheduler"
)

// benchJoSHHOptions are the inputs of `optsched bench joshh`.
type benchJoSHHOptions struct {
	streams   *streams
	trace     string
	weights   string
	dropFirst int
	output    string
	starts    []int
	length    int
}

func newBenchJoSHHCmd(s *streams, runF func(*benchJoSHHOptions) error) *cobra.Command {
	opts := &benchJoSHHOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "joshh --trace FILE [--weights FILE]",
		Short: "JoSHH against SJF, DRF, FCFS, EASY and greedy shortest-first on the ten test sequences of a trace",
		Long: `Runs the learned JoSHH design (its allocation selector placing each job,
and again with first-fit placement), sjf-greedy (the shortest waiting job
that fits starts at once, no reservation) and the per-job heuristics
(first-fit)
in bench/sim on the ten 1,024-job test sequences of optsched bench
rlscheduler, on the trace's cluster laid out as pods of 4 leaves of 10
nodes, and prints each policy's mean normalised turnaround, bounded
slowdown, wait and CH cost of the multi-node jobs, averaged over the
sequences, beside JoSHH's published Table 1 (measured on other data).
Without --weights, the shipped weights of the trace (trained on HPC2N for
HPC2N-2002*, else on Lublin-1).`,
		Example: `  optsched bench joshh --trace instances/traces/lublin_256.swf.gz`,
		Args:    argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchJoSHH(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", "", "SWF trace (required)")
	f.StringVar(&opts.weights, "weights", "", "JoSHH weights (optsched train sched --design joshh; default the shipped)")
	f.IntVar(&opts.dropFirst, "drop-first", -1, "drop the first N job records of the file (default: 5 for HPC2N-2002-2.1*, else 0)")
	f.StringVarP(&opts.output, "output", "o", "table", "table or json")
	f.IntSliceVar(&opts.starts, "sequences", nil, "start positions of the sequences (default the ten test sequences; validation sequences elsewhere)")
	f.IntVar(&opts.length, "length", rlscheduler.SequenceLength, "jobs per sequence")
	return cmd
}

// joshhPolicy reads --weights, or the shipped weights of the trace (of
// HPC2N for HPC2N-2002*, else of Lublin-1).
func joshhPolicy(path, trace string) (*learned.JoSHH, error) {
	if path == "" {
		return learned.ShippedJoSHHOf(shippedFor(joshhSimPolicy, trace))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return learned.ReadJoSHH(f)
}

func runBenchJoSHH(ctx context.Context, opts *benchJoSHHOptions) error {
	if opts.trace == "" {
		return usageError{fmt.Errorf("--trace is required")}
	}
	if opts.output != "table" && opts.output != "json" {
		return usageError{fmt.Errorf("--output must be table or json, got %q", opts.output)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	pol, err := joshhPolicy(opts.weights, opts.trace)
	if err != nil {
		return err
	}
	w, err := rlscheduler.Open(opts.trace, rlscheduler.LoadOptions{DropFirst: rlDropDefault(opts.trace, opts.dropFirst)})
	if err != nil {
		return err
	}
	starts := opts.starts
	if len(starts) == 0 {
		starts = rlscheduler.Starts
	}
	if opts.length < 1 {
		return usageError{fmt.Errorf("--length must be positive, got %d", opts.length)}
	}
	t0 := time.Now()
	rows, err := learned.EvaluateJoSHH(ctx, w, pol, starts, opts.length)
	if err != nil {
		return err
	}
	out := opts.streams.out
	if opts.output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	fmt.Fprintf(out, "%s: %d jobs on %d nodes; sequences of %d jobs at %v; joshh's window %s; %.1f s\n\n", opts.trace, len(w.Jobs), w.MaxNodes, opts.length, starts, pol.Window(), time.Since(t0).Seconds())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY\tNORM. TURNAROUND\tBSLD\tWAIT (s)\tCH COST (multi-node)\tPUBLISHED NT (JoSHH's lab, other data)")
	for _, r := range rows {
		pub := "–"
		if v, ok := learned.JoSHHPublished[r.Policy]; ok {
			pub = fmt.Sprintf("%.1f", v)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.0f\t%.1f\t%s\n", r.Policy, r.NT, r.BSLD, r.Wait, r.MultiCost, pub)
	}
	return tw.Flush()
}
