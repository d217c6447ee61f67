package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/solver"
)

func newBenchCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure solvers against each other and against heuristics",
	}
	cmd.AddCommand(newBenchSCASCmd(s, nil), newBenchLan2023Cmd(s))
	return cmd
}

// benchSCASOptions are the inputs of `optsched bench scas`.
type benchSCASOptions struct {
	streams   *streams
	windows   int
	seed      uint64
	timeLimit time.Duration
	solvers   []string
	classes   []string
	exportDir string
	verbose   bool
}

func newBenchSCASCmd(s *streams, runF func(*benchSCASOptions) error) *cobra.Command {
	opts := &benchSCASOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "scas",
		Short: "Latency and optimality gap of SCAS solvers on generated window classes",
		Long: `Bench scas generates windows of two classes and solves each with every chosen
solver, then prints per class and solver the median and p99 latency (of the
whole window pipeline, checks included), the share proven optimal, and the
mean and max gap to the best lower bound any solver proved on the window.

  paper  the NSA paper's 1000-node 25×4×10 layout, 50–1000 idle nodes,
         at most 5 multi-node jobs of 2–40 nodes
  large  10,240-node k=32 fat-trees, 1,000–5,000 idle nodes, 50–200 jobs`,
		Example: `  optsched bench scas --windows 200 --classes paper
  optsched bench scas --solvers csp,lpsolve,clp,seq --time-limit 1s --export-dir mps/
  optsched bench scas --classes paper --solvers csp,seq,sa-500,sa-1000,portfolio@10ms`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchSCAS(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.windows, "windows", 100, "windows per class")
	f.Uint64Var(&opts.seed, "seed", 1, "random seed of the window generator")
	f.DurationVar(&opts.timeLimit, "time-limit", time.Second, "time limit per solve")
	f.StringSliceVar(&opts.solvers, "solvers", []string{"csp", "lpsolve", "clp", "seq"},
		"solvers to compare, in table order: registered names, sa-STEPS, portfolio@LIMIT (csp + SA fallback at that limit)")
	f.StringSliceVar(&opts.classes, "classes", []string{"paper", "large"}, "window classes: paper, large")
	f.StringVar(&opts.exportDir, "export-dir", "", "write each class's first window as MPS into this folder")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print a line per solve on stderr")
	return cmd
}

// benchSolver resolves a --solvers entry: a registered name; sa-STEPS for
// SA with that many moves; or portfolio@LIMIT for the time-limited csp +
// SA portfolio at that limit.
func benchSolver(name string) (bench.NamedSolver, error) {
	reg := registry()
	cfg := solver.Config{Formulation: scas.Strong, Seed: 1}
	if limit, ok := strings.CutPrefix(name, "portfolio@"); ok {
		d, err := time.ParseDuration(limit)
		if err != nil || d <= 0 {
			return bench.NamedSolver{}, fmt.Errorf("%q: want portfolio@DURATION such as portfolio@100ms", name)
		}
		exact, err := reg.New("csp", cfg)
		if err != nil {
			return bench.NamedSolver{}, err
		}
		return bench.NamedSolver{Name: name, Solver: solver.Portfolio{Exact: exact, Fallback: newAnneal(cfg)}, TimeLimit: d}, nil
	}
	if steps, ok := strings.CutPrefix(name, "sa-"); ok {
		n, err := strconv.Atoi(steps)
		if err != nil || n < 1 {
			return bench.NamedSolver{}, fmt.Errorf("%q: want sa-STEPS such as sa-1000", name)
		}
		cfg.SA.Steps = n
		return bench.NamedSolver{Name: name, Solver: newAnneal(cfg)}, nil
	}
	s, err := reg.New(name, cfg)
	return bench.NamedSolver{Name: name, Solver: s}, err
}

func runBenchSCAS(ctx context.Context, opts *benchSCASOptions) error {
	if opts.windows < 1 {
		return usageError{fmt.Errorf("--windows must be at least 1, got %d", opts.windows)}
	}
	if opts.timeLimit <= 0 {
		return usageError{fmt.Errorf("--time-limit must be positive, got %v", opts.timeLimit)}
	}
	cfg := bench.SCASConfig{Windows: opts.windows, Seed: opts.seed, TimeLimit: opts.timeLimit, ExportDir: opts.exportDir}
	for _, c := range opts.classes {
		switch strings.TrimSpace(c) {
		case "paper":
			cfg.Classes = append(cfg.Classes, bench.PaperClass())
		case "large":
			cfg.Classes = append(cfg.Classes, bench.LargeClass())
		default:
			return usageError{fmt.Errorf("--classes: unknown class %q (want paper or large)", c)}
		}
	}
	for _, name := range opts.solvers {
		ns, err := benchSolver(strings.TrimSpace(name))
		if err != nil {
			return usageError{fmt.Errorf("--solvers: %w", err)}
		}
		cfg.Solvers = append(cfg.Solvers, ns)
	}
	if opts.verbose {
		cfg.Progress = opts.streams.err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	rows, err := bench.RunSCAS(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.streams.out, "%d windows per class, seed %d, time limit %v per solve\n\n", opts.windows, opts.seed, opts.timeLimit)
	bench.PrintRows(opts.streams.out, rows)
	return nil
}
