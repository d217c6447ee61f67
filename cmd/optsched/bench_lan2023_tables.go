package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/lan2023"
	"github.com/optsched/optsched/bench/report"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/instances/traces"
)

// lan2023TablesDefaultTrace is the paper's trace: its path in a
// checkout, read from the copy in the binary elsewhere (openLanTrace).
const lan2023TablesDefaultTrace = traces.Lan2023Name

// openLanTrace reads the trace at path in the format of the NSA paper's;
// the default path (traces.Lan2023Name), when it is not there — an
// installed binary run away from a checkout — reads the copy shipped in
// the binary.
func openLanTrace(path string, opt trace.Options) (*trace.Trace, error) {
	tr, err := trace.Open(path, "lan", opt)
	if path != traces.Lan2023Name || !errors.Is(err, fs.ErrNotExist) {
		return tr, err
	}
	r, err := traces.Lan2023()
	if err != nil {
		return nil, fmt.Errorf("the shipped trace: %w", err)
	}
	return trace.ReadLan(r, opt)
}

// benchLan2023TableOptions are the inputs of `optsched bench lan2023
// table3` and `table4`.
type benchLan2023TableOptions struct {
	streams     *streams
	which       string // "table3" or "table4"
	trace       string
	epochs      int
	periods     int
	tau         time.Duration
	maxJobs     int
	seed        uint64
	limit       time.Duration
	freeLimit   time.Duration
	paperCompat bool
	nsaSteps    int
	nsaWeights  string
	nsaSample   bool
	nsaTemp     float64
	jsonOut     string
	csvOut      string
	plotDir     string
	shard       string
	workers     int
	verbose     bool
}

// newBenchLan2023TableCmd is `optsched bench lan2023 table3` (which =
// "table3", the costs) or `table4` (the times).
func newBenchLan2023TableCmd(s *streams, which string) *cobra.Command {
	return newBenchLan2023TableCmdRun(s, which, nil)
}

func newBenchLan2023TableCmdRun(s *streams, which string, runF func(*benchLan2023TableOptions) error) *cobra.Command {
	opts := &benchLan2023TableOptions{streams: s, which: which}
	short, what := "Reproduce Table III (cost per epoch) of Lan et al.", "Table III, the cost"
	if which == "table4" {
		short, what = "Reproduce Table IV (solve time per window) of Lan et al.", "Table IV, the mean solve time"
	}
	cmd := &cobra.Command{
		Use:   which + " [--trace FILE]",
		Short: short,
		Long: `Runs the protocol of Tables III and IV of Lan et al. (CLUSTER 2023) on the
paper's trace and prints ` + what + ` per window, ours beside the paper's.

Each of --epochs epochs starts from a seeded random job of the trace (its
submit time becomes time 0) on an idle cluster (25 pods × 4 leaves × 10
nodes) and runs --periods windows of τ: jobs that ended release their nodes,
arrivals join the queue, at most --max-jobs multi-node jobs are selected by
waiting periods, and every method solves the same window: Seq, SA-500,
SA-1000 (Table I parameters), NSA-500 (SA with the shipped repair policy,
or --nsa-weights), SA-eq (SA given NSA-500's wall time on each window, at
SA-1000's pace), the exact csp solver without limit and with --limit30
(the paper's SCIP and SCIP-30 s); --free-limit D adds free, the free
optimum of the same window (any node sets, not only runs of the idle
sequence) within D, with what the SCAS restriction costs on the windows
where free proved it (minutes rather than seconds: give it 1–2 s).
The cluster follows the exact solution.
A comparison of NSA with each method, window by window, follows the
table. A window's cost is the CH cost of its
multi-node jobs; an epoch's cost is the sum over its periods / periods.

table3 prints the costs and the cancel share, table4 the times with the
ratio paper / ours; both run the whole protocol and --json / --csv hold
both tables.

--workers epochs run at once (default 1; 0: one per CPU); the tables are
the same for any count, times aside. SA-eq's budget on a window is NSA's
wall time on that window, measured just before in the same worker, so
workers that share cores with other work inflate it: one worker is the
steadier default (the whole protocol takes seconds).`,
		Example: `  optsched bench lan2023 ` + which + `
  optsched bench lan2023 ` + which + ` --trace instances/traces/lan2023_trace_1800_40.txt.gz --epochs 10 --periods 100 --seed 1 --json tables.json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchLan2023Table(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", lan2023TablesDefaultTrace, "the paper's trace (lines: id arrival runtime nodes)")
	f.IntVar(&opts.epochs, "epochs", 10, "epochs")
	f.IntVar(&opts.periods, "periods", 100, "periods per epoch")
	f.DurationVar(&opts.tau, "tau", 60*time.Second, "window period τ")
	f.IntVar(&opts.maxJobs, "max-jobs", 5, "cap on the multi-node jobs per window")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the epochs' starts and of SA")
	f.DurationVar(&opts.limit, "limit30", 30*time.Second, "time limit of the limited exact run (the paper's SCIP-30 s)")
	f.DurationVar(&opts.freeLimit, "free-limit", 0, "add a free column (the free optimum, any node sets) with this time limit per window; 0 leaves it out")
	f.BoolVar(&opts.paperCompat, "paper-compat", false, "run SA as the published code does (rejected neighbours kept)")
	f.IntVar(&opts.nsaSteps, "nsa-steps", 500, "moves of the NSA column (NSA-500); 0 leaves NSA (and SA-eq) out")
	f.StringVar(&opts.nsaWeights, "nsa-weights", "", "weights file of NSA's repair policy (default: the shipped weights)")
	f.BoolVar(&opts.nsaSample, "nsa-sample", true, "NSA draws starts from the policy (false: takes the most probable start)")
	f.Float64Var(&opts.nsaTemp, "nsa-temperature", 1, "NSA divides the policy's logits by this before sampling (above 1: flatter)")
	f.StringVar(&opts.jsonOut, "json", "", "also write the full result as JSON to this file")
	f.StringVar(&opts.csvOut, "csv", "", "also write the per-epoch and mean rows as CSV to this file")
	f.StringVar(&opts.shard, "shard", "", "run only shard i/n of the epochs (epoch e when e mod n = i), e.g. 0/10 for an array job; combine the --json files with bench merge")
	f.StringVar(&opts.plotDir, "plot", "", "also draw the per-epoch cost and time of every method as box plots (PNG and SVG) in this folder")
	f.IntVar(&opts.workers, "workers", 1, "epochs run at once (0: GOMAXPROCS); the tables do not depend on it, times aside")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print a line per epoch on stderr")
	return cmd
}

func runBenchLan2023Table(ctx context.Context, opts *benchLan2023TableOptions) error {
	if opts.epochs < 1 || opts.periods < 1 || opts.maxJobs < 1 {
		return usageError{fmt.Errorf("--epochs, --periods and --max-jobs must be at least 1")}
	}
	if opts.tau <= 0 || opts.tau%time.Second != 0 {
		return usageError{fmt.Errorf("--tau must be a positive whole number of seconds, got %v", opts.tau)}
	}
	if opts.limit <= 0 {
		return usageError{fmt.Errorf("--limit30 must be positive, got %v", opts.limit)}
	}
	if opts.trace == "" {
		return usageError{fmt.Errorf("--trace is required")}
	}
	if opts.workers < 0 {
		return usageError{fmt.Errorf("--workers must be at least 0 (0: GOMAXPROCS), got %d", opts.workers)}
	}
	tr, err := openLanTrace(opts.trace, trace.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("trace %s not found: pass --trace FILE, the paper's trace (data/data_large_1800_40.txt of the authors' code; lines: id arrival runtime nodes)", opts.trace)
	}
	if err != nil {
		return err
	}
	cfg := lan2023.DefaultTableConfig()
	if cfg.Shard, cfg.Shards, err = parseShard(opts.shard); err != nil {
		return usageError{err}
	}
	cfg.Epochs, cfg.Periods, cfg.Tau, cfg.MaxJobs = opts.epochs, opts.periods, int64(opts.tau/time.Second), opts.maxJobs
	cfg.Seed, cfg.ExactLimit, cfg.SAPaperCompat = opts.seed, opts.limit, opts.paperCompat
	if opts.freeLimit < 0 {
		return usageError{fmt.Errorf("--free-limit must be at least 0, got %v", opts.freeLimit)}
	}
	cfg.FreeLimit = opts.freeLimit
	cfg.Workers = opts.workers
	switch {
	case opts.nsaSteps < 0:
		return usageError{fmt.Errorf("--nsa-steps must be at least 0, got %d", opts.nsaSteps)}
	case opts.nsaSteps == 0:
		cfg.NSASteps = -1
	default:
		cfg.NSASteps = opts.nsaSteps
		n, err := nsaFromFlag("--nsa-weights", opts.nsaWeights, opts.nsaSample)
		if err != nil {
			return err
		}
		cfg.NSAPolicy, cfg.NSAGreedy = n.Policy, !n.Sample
		if opts.nsaTemp <= 0 {
			return usageError{fmt.Errorf("--nsa-temperature must be positive, got %g", opts.nsaTemp)}
		}
		cfg.NSATemperature = opts.nsaTemp
	}
	var bar *report.Bar
	if opts.verbose {
		cfg.Progress = opts.streams.err
	} else if isTerminal(opts.streams.err) {
		n := cfg.Epochs
		if cfg.Shards > 1 {
			n = (cfg.Epochs - cfg.Shard + cfg.Shards - 1) / cfg.Shards
		}
		bar = report.NewBar(opts.streams.err, "bench lan2023 "+opts.which, n)
		cfg.Tick = func() { bar.Add(1) }
	}
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := lan2023.RunTables(ctx, tr, cfg)
	bar.Done()
	if err != nil {
		return err
	}
	shard := ""
	if opts.shard != "" {
		shard = fmt.Sprintf("; shard %s: %d of %d epochs (merge the shards' --json with bench merge)", opts.shard, len(res.Epochs), cfg.Epochs)
	}
	fmt.Fprintf(opts.streams.out, "trace %s: %d jobs%s\n\n", opts.trace, len(tr.Jobs), shard)
	return writeTablesReport(opts.streams, res, opts.which, opts.jsonOut, opts.csvOut, opts.plotDir)
}

// writeTablesReport prints res as Table III or IV (which: table3, table4,
// or "" for both) with the note,
// and writes its JSON, CSV and figures when asked.
func writeTablesReport(s *streams, res *lan2023.TableResult, which, jsonOut, csvOut, plotDir string) error {
	out := s.out
	switch which {
	case "table3":
		lan2023.PrintTableIII(out, res)
		fmt.Fprintln(out)
		lan2023.PrintTablesNote(out, res)
	case "table4":
		lan2023.PrintTableIV(out, res)
		fmt.Fprintln(out)
		lan2023.PrintTablesNote(out, res)
	default:
		lan2023.PrintTables(out, res)
	}
	if jsonOut != "" {
		if err := writeJSONFile(jsonOut, res); err != nil {
			return err
		}
	}
	if csvOut != "" {
		if err := writeFileWith(csvOut, func(w io.Writer) error { return lan2023.WriteTablesCSV(w, res) }); err != nil {
			return err
		}
	}
	if plotDir != "" {
		files, err := lan2023.PlotTables(res, plotDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\nfigures: %s\n", strings.Join(files, ", "))
	}
	return nil
}
