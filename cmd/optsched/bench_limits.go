package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/limits"
	"github.com/optsched/optsched/bench/report"
)

// benchLimitsOptions are the inputs of `optsched bench limits`.
type benchLimitsOptions struct {
	streams    *streams
	classes    []string
	solvers    []string
	limits     []time.Duration
	windows    int
	seed       uint64
	jsonPath   string
	output     string
	verbose    bool
	check      bool
	exe        string
	runTimeout time.Duration
	// childEnv, set by the tests, gives each run extra environment
	// variables (limits.Config.Env).
	childEnv func(args []string) []string
}

func newBenchLimitsCmd(s *streams, runF func(*benchLimitsOptions) error) *cobra.Command {
	opts := &benchLimitsOptions{streams: s}
	var classHelp, solverHelp strings.Builder
	for _, c := range limits.Classes() {
		fmt.Fprintf(&classHelp, "  %-14s %s\n", c.Name, c.Describe)
	}
	for _, sv := range limits.Solvers() {
		fmt.Fprintf(&solverHelp, "  %-10s %-16s %s\n", sv.Family, sv.Name, sv.Describe)
	}
	cmd := &cobra.Command{
		Use:   "limits",
		Short: "Check that every solve answers within its time limit and memory bound",
		Long: `Bench limits checks the promises of optsched solve: every solve answers within
--time-limit + 50 ms measured inside the process (the elapsed_ms of solve
-o json), and peaks under 1 GiB of memory on windows of up to 10,000 nodes
and 200 jobs, on every path. It generates --windows windows of each class and
runs every solver of the class's family at every limit on each, as a child
process (optsched solve --time-limit L ... -o json FILE), one at a time, and
prints per class, solver and limit: the statuses of the answers, the median
elapsed_ms, the p99 and worst overshoot (elapsed_ms - limit), the worst
wall time of the process (start-up and output included) and its peak RSS;
then the verdict. A solver this optsched was built without (lpsolve and clp
need cgo) is reported as unavailable, not judged.

Classes:
` + classHelp.String() + `
Solvers (family, name, what runs):
` + solverHelp.String() + `
With --check the exit status is 1 when a cell overshoots 50 ms, a cell of a
class up to 10,000 nodes peaks at 1 GiB or more, or a run fails (crashes,
prints no answer, or runs past --run-timeout after its limit). See
docs/limits.md.`,
		Example: `  optsched bench limits --windows 1
  optsched bench limits --classes paper,eurora --limits 10ms,1s --check
  optsched bench limits --solvers default,seq --json limits.json -o json > summary.json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchLimits(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.classes, "classes", limits.ClassNames(), "window classes: "+strings.Join(limits.ClassNames(), ", "))
	f.StringSliceVar(&opts.solvers, "solvers", nil, "run only these solvers (default: all): "+strings.Join(limits.SolverNames(), ", "))
	f.DurationSliceVar(&opts.limits, "limits", limits.DefaultLimits, "time limits to sweep")
	f.IntVar(&opts.windows, "windows", 2, "windows per class")
	f.Uint64Var(&opts.seed, "seed", 1, "random seed of the window generators")
	f.StringVar(&opts.jsonPath, "json", "", "also write the summary and every run as JSON to this file")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json (the summary, without the runs)")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print a line per run on stderr")
	f.BoolVar(&opts.check, "check", false, "exit 1 when a promise does not hold (a cell over 50 ms or 1 GiB, or a failed run)")
	f.StringVar(&opts.exe, "exe", "", "optsched executable to measure (default: this one)")
	f.DurationVar(&opts.runTimeout, "run-timeout", 2*time.Minute, "kill a run this long past its time limit (counted as a failure)")
	return cmd
}

// errCheckFailed is the error of --check when a promise does not hold;
// the verdict has been printed.
var errCheckFailed = fmt.Errorf("bench limits --check: the promises do not hold (see the verdict)")

func runBenchLimits(ctx context.Context, opts *benchLimitsOptions) error {
	if opts.output != "table" && opts.output != "json" {
		return usageError{fmt.Errorf("-o must be table or json, got %q", opts.output)}
	}
	if opts.windows < 1 {
		return usageError{fmt.Errorf("--windows must be at least 1, got %d", opts.windows)}
	}
	if len(opts.limits) == 0 {
		return usageError{fmt.Errorf("--limits: give at least one time limit")}
	}
	for _, l := range opts.limits {
		if l <= 0 {
			return usageError{fmt.Errorf("--limits must be positive durations, got %v", l)}
		}
	}
	if opts.runTimeout <= 0 {
		return usageError{fmt.Errorf("--run-timeout must be positive, got %v", opts.runTimeout)}
	}
	classes, err := limits.SelectClasses(opts.classes)
	if err != nil {
		return usageError{fmt.Errorf("--classes: %w", err)}
	}
	if len(classes) == 0 {
		return usageError{fmt.Errorf("--classes: name at least one class (%s)", strings.Join(limits.ClassNames(), ", "))}
	}
	solvers, err := limits.SelectSolvers(opts.solvers)
	if err != nil {
		return usageError{fmt.Errorf("--solvers: %w", err)}
	}
	exe, label := opts.exe, opts.exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("bench limits: finding this executable (give --exe): %w", err)
		}
		label = "optsched " + version()
	} else if st, err := os.Stat(exe); err != nil || st.IsDir() {
		return usageError{fmt.Errorf("--exe %s: not an executable file", exe)}
	}
	cfg := limits.Config{Exe: exe, Env: opts.childEnv, Classes: classes, Solvers: solvers, Limits: opts.limits,
		Windows: opts.windows, Seed: opts.seed, RunTimeout: opts.runTimeout}
	if cfg.Runs() == 0 {
		return usageError{fmt.Errorf("--solvers: none of %s runs on the classes %s", strings.Join(opts.solvers, ", "), strings.Join(opts.classes, ", "))}
	}
	var bar *report.Bar
	if opts.verbose {
		cfg.Progress = opts.streams.err
	} else if isTerminal(opts.streams.err) {
		bar = report.NewBar(opts.streams.err, "bench limits", cfg.Runs())
		cfg.Tick = func() { bar.Add(1) }
	}
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	runs, err := limits.Sweep(ctx, cfg)
	bar.Done()
	if err != nil {
		return err
	}
	rep := limits.NewReport(&cfg, runs, time.Since(start))
	if opts.jsonPath != "" {
		if err := writeJSONFile(opts.jsonPath, rep); err != nil {
			return err
		}
	}
	if opts.output == "json" {
		sum := rep
		sum.Runs = nil
		err = writeJSON(opts.streams.out, sum)
	} else {
		fmt.Fprintf(opts.streams.out, "%s; %d window(s) per class, seed %d, limits %s; one run at a time\n\n",
			label, opts.windows, opts.seed, strings.Join(rep.Limits, ", "))
		err = limits.Print(opts.streams.out, &rep)
	}
	if err != nil {
		return err
	}
	if opts.check && !rep.Verdict.OK {
		return errCheckFailed
	}
	return nil
}
