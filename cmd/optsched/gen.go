package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// genOptions are the inputs of `optsched gen`.
type genOptions struct {
	streams *streams
	cfg     instances.GenConfig
	layout  string
	fatTree int
	pods    int
	// output is the file to write (--out; "-" for stdout); format0 the
	// -o value, json or (deprecated) a file.
	output, format0 string
}

func newGenCmd(s *streams, runF func(*genOptions) error) *cobra.Command {
	opts := &genOptions{streams: s, cfg: instances.PaperGenConfig()}
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Write a random window shaped like those of Lan et al.",
		Long: `Gen writes a random window: by default the paper's 1000-node cluster (25 pods
× 4 leaf switches × 10 nodes) with jobs of 1–40 nodes and 10–1800 s as in the
paper's trace. Busy nodes are held by running jobs placed as a previous window
would place them, so the idle nodes are fragmented realistically. The same
--seed gives the same window.`,
		Example: `  optsched gen --seed 1 --idle 300 --jobs 5 > window.json
  optsched gen --fat-tree 16 --idle 500 --jobs 40 --out big.json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runGen(opts)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&opts.cfg.Seed, "seed", 1, "random seed")
	f.StringVar(&opts.layout, "layout", "25x4x10", "cluster layout PODSxLEAVESxNODES (ignored with --fat-tree)")
	f.IntVar(&opts.fatTree, "fat-tree", 0, "use a k-ary fat-tree with this even k instead of --layout")
	f.IntVar(&opts.pods, "pods", 0, "with --fat-tree: keep only the first PODS pods (0: all k)")
	f.IntVar(&opts.cfg.Idle, "idle", opts.cfg.Idle, "number of idle nodes")
	f.IntVar(&opts.cfg.Jobs, "jobs", opts.cfg.Jobs, "number of waiting jobs")
	f.IntVar(&opts.cfg.MinNodes, "min-nodes", opts.cfg.MinNodes, "smallest job, in nodes")
	f.IntVar(&opts.cfg.MaxNodes, "max-nodes", opts.cfg.MaxNodes, "largest job, in nodes")
	f.Int64Var(&opts.cfg.MinWalltime, "min-walltime", opts.cfg.MinWalltime, "shortest walltime, s")
	f.Int64Var(&opts.cfg.MaxWalltime, "max-walltime", opts.cfg.MaxWalltime, "longest walltime, s")
	f.IntVar(&opts.cfg.MaxNWP, "max-nwp", 0, "waiting periods drawn from 0..MAX")
	f.Int64Var(&opts.cfg.Time, "time", opts.cfg.Time, "decision time, s")
	f.StringVar(&opts.output, "out", "-", "file to write, - for stdout")
	f.StringVarP(&opts.format0, "output", "o", "", "output format: json (-o FILE, the old spelling, still writes FILE)")
	return cmd
}

// genLimits are the limits of gen: what optsched reads back
// (windowjson.MaxJobs, windowjson.MaxInputBytes); tests lower them.
var genLimits = struct{ jobs, bytes int64 }{windowjson.MaxJobs, windowjson.MaxInputBytes}

func runGen(opts *genOptions) error {
	format := "json"
	if err := outputFlag(opts.streams, "gen", opts.format0, []string{"json"}, &format, &opts.output); err != nil {
		return err
	}
	cfg := opts.cfg
	if opts.fatTree != 0 {
		cfg.Layout = nil
		cfg.FatTree = &model.FatTreeSpec{K: opts.fatTree, Pods: opts.pods}
	} else {
		var l model.LayoutSpec
		if n, err := fmt.Sscanf(opts.layout, "%dx%dx%d", &l.Pods, &l.LeavesPerPod, &l.NodesPerLeaf); err != nil || n != 3 {
			return usageError{fmt.Errorf("--layout must be PODSxLEAVESxNODES such as 25x4x10, got %q", opts.layout)}
		}
		cfg.Layout = &l
	}
	if int64(cfg.Jobs) > genLimits.jobs {
		return fmt.Errorf("--jobs %d: above the limit of %d waiting jobs a window may hold (windowjson.MaxJobs, see docs/limits.md); nothing was written: generate fewer jobs", cfg.Jobs, genLimits.jobs)
	}
	w, err := instances.Generate(cfg)
	if err != nil {
		return usageError{err}
	}
	data, err := windowjson.Marshal(w)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if int64(len(data)) > genLimits.bytes {
		return fmt.Errorf("the window is %d bytes, above the limit of %d bytes of one input that optsched reads (see docs/limits.md); nothing was written: generate fewer jobs or nodes", len(data), genLimits.bytes)
	}
	if opts.output == "-" {
		_, err = opts.streams.out.Write(data)
		return err
	}
	return os.WriteFile(opts.output, data, 0o644)
}
