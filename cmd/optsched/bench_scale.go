package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/trace"
)

// benchScaleSWFOptions are the inputs of `optsched bench scale-swf`.
type benchScaleSWFOptions struct {
	streams *streams
	in      string
	nodes   int
	jobs    int
	out     string
}

func newBenchScaleSWFCmd(s *streams, runF func(*benchScaleSWFOptions) error) *cobra.Command {
	opts := &benchScaleSWFOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "scale-swf FILE",
		Short: "Write an SWF log reshaped to archive scale, to test simulate at that scale",
		Long: `Scale-swf writes the SWF log FILE (gzip accepted) reshaped by
trace.ScaleSWF: every processor count multiplied by --nodes / the log's
largest count, rounded up (so its largest job spans --nodes), the
header's MaxNodes and MaxProcs dropped (simulate then takes the cluster
from the largest job, as for a log whose header gives no size), and the
job lines repeated, each copy shifted after the last submit, to --jobs
lines. The other fields are copied as they are.`,
		Example: `  optsched bench scale-swf instances/traces/KTH-SP2-1996-2.1-cln.swf.gz --nodes 32768 --jobs 250000 -o kth-250k.swf
  optsched simulate --trace kth-250k.swf --policy easy`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.in = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runBenchScaleSWF(opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.nodes, "nodes", 0, "size of the largest job after scaling, the cluster simulate infers (0: counts as they are)")
	f.IntVar(&opts.jobs, "jobs", 0, "job lines to write, repeating the log (0: the log's own)")
	f.StringVarP(&opts.out, "out", "o", "", "output file (default stdout)")
	return cmd
}

func runBenchScaleSWF(opts *benchScaleSWFOptions) error {
	if opts.nodes < 0 || opts.jobs < 0 || opts.nodes > trace.MaxClusterNodes {
		return usageError{fmt.Errorf("--nodes must be between 0 and %d and --jobs at least 0", trace.MaxClusterNodes)}
	}
	in, err := trace.OpenFile(opts.in)
	if err != nil {
		return err
	}
	defer in.Close()
	scale := func(w io.Writer) error {
		if err := trace.ScaleSWF(w, in, trace.ScaleOptions{Nodes: opts.nodes, Jobs: opts.jobs}); err != nil {
			return fmt.Errorf("%s: %w", opts.in, err)
		}
		return nil
	}
	if opts.out == "" {
		return scale(opts.streams.out)
	}
	return writeFileWith(opts.out, scale)
}
