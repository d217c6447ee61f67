package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/gaps"
	"github.com/optsched/optsched/bench/lan2023"
	"github.com/optsched/optsched/bench/report"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model/windowjson"
)

func newBenchCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure solvers against each other and against heuristics",
	}
	cmd.AddCommand(newBenchSCASCmd(s, nil), newBenchMergeCmd(s, nil), newBenchLan2023Cmd(s), newBenchBridiCmd(s, nil), newBenchCPCmd(s, nil), newBenchLimitsCmd(s, nil), newBenchRLSchedulerCmd(s, nil), newBenchScaleSWFCmd(s, nil), newBenchPredictCmd(s, nil), newBenchSchertCmd(s, nil), newBenchJoSHHCmd(s, nil))
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
	jsonPath  string
	csvPath   string
	shard     string
	plotDir   string
}

func newBenchSCASCmd(s *streams, runF func(*benchSCASOptions) error) *cobra.Command {
	opts := &benchSCASOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "scas",
		Short: "Latency and optimality gap of SCAS solvers on generated window classes",
		Long: `Bench scas generates windows of the chosen classes and solves each with every chosen
solver, then prints per class and solver the median and p99 latency (of the
whole window pipeline, checks included), the share proven optimal, and the
mean and max gap to the best lower bound any solver proved on the window.

With free among the solvers (the default), it adds the gap of every solver
to the free optimum — the least cost any allocator can reach, node sets of
any shape — and, where csp and free both proved their optimum, what the
SCAS restriction costs: (SCAS optimum − free optimum) / free optimum.

  paper  the NSA paper's 1000-node 25×4×10 layout, 50–1000 idle nodes,
         at most 5 multi-node jobs of 2–40 nodes
  large  8,192-node k=32 fat-trees, 1,000–5,000 idle nodes, 50–200 jobs
  large-layout
         the same on the 10,000-node 25×40×10 layout (not run by default)`,
		Example: `  optsched bench scas --windows 200 --classes paper
  optsched bench scas --solvers csp,lpsolve,clp,seq --time-limit 1s --export-dir mps/
  optsched bench scas --classes paper --windows 200 --solvers csp,free,seq,sa,slurm,mishra-adaptive
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
	f.StringSliceVar(&opts.solvers, "solvers", []string{"csp", "lpsolve", "clp", "seq", "free"},
		"solvers to compare, in table order: registered names, sa-STEPS, portfolio@LIMIT (csp + SA fallback at that limit)")
	f.StringSliceVar(&opts.classes, "classes", []string{"paper", "large"}, "window classes: paper, large (k=32 fat-tree), large-layout (10,000-node 25×40×10 layout)")
	f.StringVar(&opts.exportDir, "export-dir", "", "write each class's first window as MPS into this folder")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print a line per solve on stderr")
	f.StringVar(&opts.jsonPath, "json", "", "also write the rows and every sample as JSON to this file (input of bench merge)")
	f.StringVar(&opts.csvPath, "csv", "", "also write the rows as CSV to this file")
	f.StringVar(&opts.plotDir, "plot", "", "write latency and gap box plots per class as PNG and SVG into this folder")
	f.StringVar(&opts.shard, "shard", "", "run only shard i/n of the windows (window k when k mod n = i), e.g. 0/16 for an array job; combine with bench merge")
	return cmd
}

// parseShard reads "i/n" with 0 ≤ i < n.
func parseShard(v string) (i, n int, err error) {
	if v == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard: want i/n with 0 ≤ i < n, such as 3/16; got %q", v)
	}
	return i, n, nil
}

// benchSolver resolves a --solvers entry: a registered name; sa-STEPS for
// SA with that many moves; or portfolio@LIMIT for the time-limited csp +
// SA portfolio at that limit.
func benchSolver(name string) (gaps.NamedSolver, error) {
	cfg := catalog.Options{Formulation: scas.Strong, Seed: 1}
	if limit, ok := strings.CutPrefix(name, "portfolio@"); ok {
		d, err := time.ParseDuration(limit)
		if err != nil || d <= 0 {
			return gaps.NamedSolver{}, fmt.Errorf("%q: want portfolio@DURATION such as portfolio@100ms", name)
		}
		pf, err := catalog.Solver("csp", cfg)
		if err != nil {
			return gaps.NamedSolver{}, err
		}
		return gaps.NamedSolver{Name: name, Solver: pf, TimeLimit: d}, nil
	}
	if steps, ok := strings.CutPrefix(name, "sa-"); ok {
		n, err := strconv.Atoi(steps)
		if err != nil || n < 1 {
			return gaps.NamedSolver{}, fmt.Errorf("%q: want sa-STEPS such as sa-1000", name)
		}
		cfg.SA.Steps = n
		return gaps.NamedSolver{Name: name, Solver: catalog.Anneal(cfg)}, nil
	}
	s, err := catalog.Raw(name, cfg)
	return gaps.NamedSolver{Name: name, Solver: s}, err
}

func runBenchSCAS(ctx context.Context, opts *benchSCASOptions) error {
	if opts.windows < 1 {
		return usageError{fmt.Errorf("--windows must be at least 1, got %d", opts.windows)}
	}
	if opts.timeLimit <= 0 {
		return usageError{fmt.Errorf("--time-limit must be positive, got %v", opts.timeLimit)}
	}
	cfg := gaps.SCASConfig{Windows: opts.windows, Seed: opts.seed, TimeLimit: opts.timeLimit, ExportDir: opts.exportDir}
	var err error
	if cfg.Shard, cfg.Shards, err = parseShard(opts.shard); err != nil {
		return usageError{err}
	}
	for _, c := range opts.classes {
		switch strings.TrimSpace(c) {
		case "paper":
			cfg.Classes = append(cfg.Classes, gaps.PaperClass())
		case "large":
			cfg.Classes = append(cfg.Classes, gaps.LargeClass())
		case "large-layout":
			cfg.Classes = append(cfg.Classes, gaps.LargeLayoutClass())
		default:
			return usageError{fmt.Errorf("--classes: unknown class %q (want paper, large or large-layout)", c)}
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
	var bar *report.Bar
	if !opts.verbose && isTerminal(opts.streams.err) {
		perWindow := len(cfg.Solvers)
		windows := opts.windows
		if cfg.Shards > 1 {
			windows = (opts.windows - cfg.Shard + cfg.Shards - 1) / cfg.Shards
		}
		bar = report.NewBar(opts.streams.err, "bench scas", windows*perWindow*len(cfg.Classes))
		cfg.Tick = func() { bar.Add(1) }
	}
	samples, err := gaps.RunSCAS(ctx, cfg)
	bar.Done()
	if err != nil {
		return err
	}
	rep := gaps.SCASReport{Benchmark: "scas", Seed: opts.seed, Windows: opts.windows, TimeLimit: opts.timeLimit.String(),
		Shard: opts.shard, Samples: samples, Rows: gaps.Summarise(samples),
		Restrictions: gaps.Restrictions(samples, gaps.SCASSolver, gaps.FreeSolver)}
	for _, c := range cfg.Classes {
		rep.Classes = append(rep.Classes, c.Name)
	}
	shard := ""
	if opts.shard != "" {
		shard = ", shard " + opts.shard
	}
	fmt.Fprintf(opts.streams.out, "%d windows per class, seed %d, time limit %v per solve%s\n\n", opts.windows, opts.seed, opts.timeLimit, shard)
	if err := writeSCASReport(opts.streams, rep, opts.jsonPath, opts.csvPath); err != nil {
		return err
	}
	if opts.plotDir != "" {
		files, err := gaps.PlotSCAS(samples, opts.plotDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.streams.out, "\nfigures: %s\n", strings.Join(files, ", "))
	}
	return nil
}

// writeSCASReport prints rep's table and writes its JSON and CSV files
// when asked.
func writeSCASReport(s *streams, rep gaps.SCASReport, jsonPath, csvPath string) error {
	gaps.PrintRows(s.out, rep.Rows)
	gaps.PrintRestrictions(s.out, rep.Restrictions, gaps.SCASSolver, gaps.FreeSolver)
	if jsonPath != "" {
		if err := writeJSONFile(jsonPath, rep); err != nil {
			return err
		}
	}
	if csvPath != "" {
		return writeFileWith(csvPath, func(w io.Writer) error { return gaps.WriteRowsCSV(w, rep.Rows) })
	}
	return nil
}

// benchMergeOptions are the inputs of `optsched bench merge`.
type benchMergeOptions struct {
	streams  *streams
	files    []string
	jsonPath string
	csvPath  string
}

func newBenchMergeCmd(s *streams, runF func(*benchMergeOptions) error) *cobra.Command {
	opts := &benchMergeOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "merge FILE...",
		Short: "Combine the JSON outputs of sharded bench runs into one table",
		Long: `Merge reads the --json files of the shards of one sharded run (see --shard)
and prints the tables of the whole run.

bench scas: same seed, windows, time limit and classes; no window solved
twice; the gap of every window is measured again against the best bound
over all solvers.

bench lan2023 table3/table4: same protocol (epochs, periods, τ, seed,
limits, methods, trace); no epoch twice; prints Tables III and IV over the
merged epochs, equal to those of the unsharded run apart from the times.`,
		Example: `  # 16 shards as an array job, then:
  optsched bench merge --json all.json scas-*.json
  optsched bench merge tables-*.json`,
		Args: argsBetween(1, math.MaxInt32),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.files = args
			if runF != nil {
				return runF(opts)
			}
			return runBenchMerge(opts)
		},
	}
	cmd.Flags().StringVar(&opts.jsonPath, "json", "", "write the merged report as JSON to this file")
	cmd.Flags().StringVar(&opts.csvPath, "csv", "", "write the merged rows as CSV to this file")
	return cmd
}

func runBenchMerge(opts *benchMergeOptions) error {
	var kind string
	var datas [][]byte
	for _, f := range opts.files {
		b, err := windowjson.ReadFileLimited(f)
		if err != nil {
			return err
		}
		var head struct {
			Benchmark string `json:"benchmark"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return fmt.Errorf("%s: not a JSON report of bench scas or bench lan2023 table3/table4: %w", f, err)
		}
		switch {
		case head.Benchmark != "scas" && head.Benchmark != lan2023.TablesBenchmark:
			return fmt.Errorf("%s: benchmark %q: bench merge combines \"scas\" (bench scas --json) and %q (bench lan2023 table3/table4 --json) reports", f, head.Benchmark, lan2023.TablesBenchmark)
		case kind != "" && head.Benchmark != kind:
			return fmt.Errorf("%s: benchmark %q, but %s holds %q: merge one benchmark's shards at a time", f, head.Benchmark, opts.files[0], kind)
		}
		kind = head.Benchmark
		datas = append(datas, b)
	}
	decode := func(i int, v any) error {
		dec := json.NewDecoder(bytes.NewReader(datas[i]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			return fmt.Errorf("%s: not a bench %s --json report: %w", opts.files[i], kind, err)
		}
		return nil
	}
	if kind == lan2023.TablesBenchmark {
		rs := make([]lan2023.TableResult, len(datas))
		for i := range datas {
			if err := decode(i, &rs[i]); err != nil {
				return err
			}
		}
		m, err := lan2023.MergeTables(rs)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.streams.out, "%d reports merged: %d of %d epochs\n\n", len(rs), len(m.Epochs), m.Config.Epochs)
		return writeTablesReport(opts.streams, m, "", opts.jsonPath, opts.csvPath, "")
	}
	var reps []gaps.SCASReport
	for i := range datas {
		var r gaps.SCASReport
		if err := decode(i, &r); err != nil {
			return err
		}
		reps = append(reps, r)
	}
	m, err := gaps.MergeSCAS(reps)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.streams.out, "%d reports merged: %d windows per class, seed %d, time limit %s per solve\n\n", len(reps), m.Windows, m.Seed, m.TimeLimit)
	return writeSCASReport(opts.streams, m, opts.jsonPath, opts.csvPath)
}
