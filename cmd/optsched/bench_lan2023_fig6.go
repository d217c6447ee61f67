package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/lan2023"
	"github.com/optsched/optsched/bench/report"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/instances/traces"
	"github.com/optsched/optsched/solver"
)

// lan2023Fig6DefaultTrace is the paper's trace: its path in a checkout,
// read from the copy in the binary elsewhere (openLanTrace).
const lan2023Fig6DefaultTrace = traces.Lan2023Name

// benchLan2023Fig6Options are the inputs of `optsched bench lan2023 fig6`.
type benchLan2023Fig6Options struct {
	streams *streams
	trace   string
	epochs  int
	slice   int
	taus    []string
	jsonOut string
	csvOut  string
	plotDir string
	// solver names the window solver (csp, or free for the free optimum);
	// timeLimit bounds each window's solve (0: none).
	solver    string
	timeLimit time.Duration
}

// newBenchLan2023Fig6Cmd is `optsched bench lan2023 fig6`.
func newBenchLan2023Fig6Cmd(s *streams) *cobra.Command {
	return newBenchLan2023Fig6CmdRun(s, nil)
}

func newBenchLan2023Fig6CmdRun(s *streams, runF func(*benchLan2023Fig6Options) error) *cobra.Command {
	opts := &benchLan2023Fig6Options{streams: s}
	cmd := &cobra.Command{
		Use:   "fig6 [--trace FILE]",
		Short: "Reproduce Fig. 6 (FCFS, BF and window-based: CH cost and wait per epoch) of Lan et al.",
		Long: `Fig6 reproduces Fig. 6 of Lan et al. (CLUSTER 2023) on the paper's trace:
--epochs consecutive slices of --slice jobs (jobs 0–299, 300–599, …), each
from an idle cluster of 25 pods × 4 leaves × 10 nodes, and per epoch the
integer parts of the mean lan-code CH cost and the mean wait.

FCFS and BF replay the event-driven simulator of the published code
(lazy releases, arrivals before ends at equal times, EASY backfilling
with the shadow time computed once per blocked head) and are compared
with the authors' published figures (epoch 1: 35077 and 93 for both).

The window-based rows run optsched's simulator (bench/sim, policy window)
at every τ of --taus, each window of at most 5 multi-node jobs solved
exactly by csp; the published window runs used NSA, so they compare in
shape only (lower cost, longer wait as τ grows). --taus "" skips them.
--solver free solves each window's free problem instead (any node sets,
the least cost any allocator reaches; give it a --time-limit): what the
SCAS restriction costs the window policy.`,
		Example: `  optsched bench lan2023 fig6
  optsched bench lan2023 fig6 --trace instances/traces/lan2023_trace_1800_40.txt.gz --taus 10s,30s,60s --json fig6.json --csv fig6.csv
  optsched bench lan2023 fig6 --taus ""   # FCFS and BF only
  optsched bench lan2023 fig6 --solver free --time-limit 10s`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchLan2023Fig6(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", lan2023Fig6DefaultTrace, "the paper's trace (lines: id arrival runtime nodes)")
	f.IntVar(&opts.epochs, "epochs", lan2023.DefaultEpochs, "epochs")
	f.IntVar(&opts.slice, "slice", lan2023.DefaultSlice, "jobs per epoch")
	var defTaus []string
	for _, t := range lan2023.DefaultTaus() {
		defTaus = append(defTaus, strconv.FormatInt(t, 10)+"s")
	}
	f.StringSliceVar(&opts.taus, "taus", defTaus, `window periods τ, whole seconds such as 10s or 10 ("" for none)`)
	f.StringVar(&opts.jsonOut, "json", "", "also write the figures as JSON to this file")
	f.StringVar(&opts.csvOut, "csv", "", "also write one row per series and epoch as CSV to this file")
	f.StringVar(&opts.solver, "solver", "csp", "window solver: csp (the SCAS optimum) or another whole-node solver of optsched solve, such as free (the free optimum)")
	f.DurationVar(&opts.timeLimit, "time-limit", 0, "time limit of each window's solve (0: none, which keeps the figures independent of the machine)")
	f.StringVar(&opts.plotDir, "plot", "", "also draw Fig. 6's box plots (cost and wait per series, ours beside the paper's) as PNG and SVG in this folder")
	return cmd
}

// runBenchLan2023Fig6 is `optsched bench lan2023 fig6`: the flags
// checked and the window solver built, the trace read, Fig. 6 computed
// (lan2023.RunFig6) and written.
func runBenchLan2023Fig6(ctx context.Context, opts *benchLan2023Fig6Options) error {
	if opts.epochs < 1 || opts.slice < 1 {
		return usageError{fmt.Errorf("--epochs and --slice must be at least 1")}
	}
	if opts.trace == "" {
		return usageError{fmt.Errorf("--trace is required")}
	}
	if opts.timeLimit < 0 {
		return usageError{fmt.Errorf("--time-limit must be at least 0, got %v", opts.timeLimit)}
	}
	sv, err := fig6Solver(opts.solver)
	if err != nil {
		return err
	}
	taus, err := parseTaus(opts.taus)
	if err != nil {
		return err
	}
	maxJobs := 0 // read all: the product overflows, and Fig6Exact will say there are too few jobs
	if opts.slice <= math.MaxInt/opts.epochs {
		maxJobs = opts.epochs * opts.slice
	}
	tr, err := openLanTrace(opts.trace, trace.Options{MaxJobs: maxJobs})
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("trace %s not found: pass --trace FILE, the paper's trace (data/data_large_1800_40.txt of the authors' code; lines: id arrival runtime nodes)", opts.trace)
	}
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	run := lan2023.Fig6Run{Trace: opts.trace, Epochs: opts.epochs, Slice: opts.slice, Taus: taus, SolverName: opts.solver,
		Window: lan2023.WindowOptions{Solver: sv, TimeLimit: opts.timeLimit}}
	var bar *report.Bar
	if len(taus) > 0 && isTerminal(opts.streams.err) {
		bar = report.NewBar(opts.streams.err, "fig6 windows", len(taus)*opts.epochs)
		run.Window.Tick = func() { bar.Add(1) }
	}
	r, exact, windows, err := lan2023.RunFig6(ctx, tr, run)
	bar.Done()
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.streams.err, "fig6: FCFS and BF in %.2f s, %d window periods in %.2f s\n",
		exact.Seconds(), len(taus), windows.Seconds())
	return writeFig6(opts, r)
}

// fig6Solver checks and builds --solver: a whole-node solver of the
// catalogue, alone.
func fig6Solver(name string) (solver.Solver, error) {
	spec := catalog.Spec{Name: name, Model: catalog.WholeNode, Alone: true, Options: catalog.Options{Seed: 1}}
	var ne *catalog.NameError
	switch err := catalog.Validate(spec); {
	case errors.As(err, &ne) && ne.Known():
		return nil, usageError{fmt.Errorf("--solver %s schedules the time-and-resource model, not Fig. 6's whole-node windows", name)}
	case err != nil:
		return nil, usageError{fmt.Errorf("--solver: %w", err)}
	}
	sv, err := spec.Solver()
	if err != nil {
		return nil, usageError{fmt.Errorf("--solver: %w", err)}
	}
	return sv, nil
}

// parseTaus reads --taus: durations or bare seconds, each a positive
// whole number of seconds.
func parseTaus(texts []string) ([]int64, error) {
	taus := make([]int64, 0, len(texts))
	for _, text := range texts {
		d, err := time.ParseDuration(strings.TrimSpace(text))
		if n, errN := strconv.ParseInt(strings.TrimSpace(text), 10, 64); errN == nil && n <= math.MaxInt64/int64(time.Second) {
			d, err = time.Duration(n)*time.Second, nil // bare seconds
		}
		if err != nil || d <= 0 || d%time.Second != 0 {
			return nil, usageError{fmt.Errorf("--taus: every τ must be a positive whole number of seconds, got %q", text)}
		}
		taus = append(taus, int64(d/time.Second))
	}
	return taus, nil
}

// writeFig6 writes the report: markdown on stdout, and the JSON, CSV and
// figures asked for.
func writeFig6(opts *benchLan2023Fig6Options, r *lan2023.Report) error {
	if err := lan2023.WriteMarkdown(opts.streams.out, r); err != nil {
		return err
	}
	if opts.jsonOut != "" {
		if err := writeJSONFile(opts.jsonOut, r); err != nil {
			return err
		}
	}
	if opts.csvOut != "" {
		if err := writeFileWith(opts.csvOut, func(w io.Writer) error { return lan2023.WriteCSV(w, r) }); err != nil {
			return err
		}
	}
	if opts.plotDir != "" {
		files, err := lan2023.PlotFig6(r, opts.plotDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.streams.out, "\nfigures: %s\n", strings.Join(files, ", "))
	}
	return nil
}
