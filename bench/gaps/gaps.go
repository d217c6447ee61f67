package gaps

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/optsched/optsched/bench/report"
	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/encode/dcas"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// A Class is a family of generated windows.
type Class struct {
	Name string
	// Make returns window k of the class, deterministically for seed.
	Make func(seed uint64, k int) (*model.Window, error)
	// MaxJobs is the --max-jobs cap the class is solved with.
	MaxJobs int
}

// PaperClass: the NSA paper's windows — the 1000-node 25×4×10 layout,
// 50–1000 idle nodes, at most five multi-node jobs of 2–40 nodes.
func PaperClass() Class {
	return Class{Name: "paper", MaxJobs: 5, Make: func(seed uint64, k int) (*model.Window, error) {
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		cfg := instances.PaperGenConfig()
		cfg.Seed = seed*1_000_003 + uint64(k)
		cfg.Idle = 50 + rng.IntN(951)
		cfg.Jobs = 8
		cfg.MinNodes = 2
		return instances.Generate(cfg)
	}}
}

// LargeClass: 8,192-node k=32 fat-trees with 1,000–5,000 idle nodes and
// 50–200 jobs of 1–40 nodes, no cap.
func LargeClass() Class {
	return Class{Name: "large", Make: func(seed uint64, k int) (*model.Window, error) {
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		cfg := instances.PaperGenConfig()
		cfg.Seed = seed*1_000_003 + uint64(k)
		cfg.Layout = nil
		cfg.FatTree = &model.FatTreeSpec{K: 32}
		cfg.Idle = 1000 + rng.IntN(4001)
		cfg.Jobs = 50 + rng.IntN(151)
		return instances.Generate(cfg)
	}}
}

// LargeLayoutClass: the large class on the 10,000-node 25×40×10 layout
// (pods of 40 leaves of 10 nodes) instead of the fat-tree.
func LargeLayoutClass() Class {
	return Class{Name: "large-layout", Make: func(seed uint64, k int) (*model.Window, error) {
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		cfg := instances.PaperGenConfig()
		cfg.Seed = seed*1_000_003 + uint64(k)
		cfg.Layout = &model.LayoutSpec{Pods: 25, LeavesPerPod: 40, NodesPerLeaf: 10}
		cfg.Idle = 1000 + rng.IntN(4001)
		cfg.Jobs = 50 + rng.IntN(151)
		return instances.Generate(cfg)
	}}
}

// SCASConfig configures RunSCAS.
type SCASConfig struct {
	Classes []Class
	// Windows per class.
	Windows int
	Seed    uint64
	// TimeLimit per solve.
	TimeLimit time.Duration
	// Solvers to compare, by name, in table order.
	Solvers []NamedSolver
	// ExportDir, when set, receives the strong M_SCAS program and the free
	// problem's count program of each class's first window as MPS
	// (CLASS-0.mps, CLASS-0-dcas.mps), for timing outside MILP solvers on
	// exactly the same models.
	ExportDir string
	// Progress, when set, receives a line per window.
	Progress io.Writer
	// Tick, when set, is called after every solve (a progress bar).
	Tick func()
	// Shard and Shards split the windows: with Shards > 1 only windows k
	// with k mod Shards = Shard are solved, so that n runs (a Slurm or
	// PBS array job) cover every window once; Summarise of their merged
	// samples gives the table of a single run.
	Shard, Shards int
}

// A NamedSolver is a solver under its table name.
type NamedSolver struct {
	Name   string
	Solver solver.Solver
	// TimeLimit overrides SCASConfig.TimeLimit for this solver when
	// positive (a portfolio measured at several limits).
	TimeLimit time.Duration
}

// A Row is one solver on one class.
type Row struct {
	Class   string `json:"class"`
	Solver  string `json:"solver"`
	Windows int    `json:"windows"`
	// Median and P99 are solve latencies (the whole window pipeline).
	Median time.Duration `json:"median_ns"`
	P99    time.Duration `json:"p99_ns"`
	// Optimal is the share of windows the solver proved optimal.
	Optimal float64 `json:"optimal_share"`
	// MeanGap is the mean of (objective − best bound) / objective, the best
	// bound being the highest lower bound any solver proved on the window.
	MeanGap float64 `json:"mean_gap"`
	// MaxGap and MinGap are the largest and smallest such gaps. The gap
	// is negative when a heuristic on the wider DCAS space beats the SCAS
	// bound.
	MaxGap float64 `json:"max_gap"`
	MinGap float64 `json:"min_gap"`
	// Gaps counts the windows the gaps are over (solved, with a bound);
	// without any, the gap columns are empty.
	Gaps int `json:"gaps"`
	// MeanFreeGap, P99FreeGap and MaxFreeGap are the gap to the free
	// optimum, (objective − free bound) / objective (GapDefinition, as
	// MeanGap), over the FreeGaps
	// windows where the free solver (--solvers free) proved a bound: how
	// far the solver is from the least cost any allocator can reach. The
	// bound is the free optimum where free proved it, and below it (so
	// the gap is an upper bound) where free ran out of time.
	MeanFreeGap float64 `json:"mean_free_gap"`
	P99FreeGap  float64 `json:"p99_free_gap"`
	MaxFreeGap  float64 `json:"max_free_gap"`
	FreeGaps    int     `json:"free_gaps"`
	// Failed counts windows without an allocation (or with an error).
	Failed int `json:"failed"`
}

// A Sample is one solver's solve of one window: the unit that sharded
// runs write and `optsched bench merge` combines.
type Sample struct {
	Class  string `json:"class"`
	Window int    `json:"window"`
	Solver string `json:"solver"`
	// Seconds is the latency of the whole window pipeline.
	Seconds float64 `json:"seconds"`
	// OK is false when the solve failed or found no allocation.
	OK        bool  `json:"ok"`
	Objective int64 `json:"objective"`
	// Bound is the solver's proven lower bound, absent when it has none.
	Bound   *float64 `json:"bound,omitempty"`
	Optimal bool     `json:"optimal"`
	// FreeBound reports that Bound holds for the free problem (any node
	// sets): the free solver's bound, which bounds every allocator.
	FreeBound bool `json:"free_bound,omitempty"`
}

// RunSCAS solves every window of every class with every solver (only the
// windows k with k mod Shards = Shard when Shards > 1) and returns one
// sample per (class, window, solver), in that order.
func RunSCAS(ctx context.Context, cfg SCASConfig) ([]Sample, error) {
	if cfg.Shards > 1 && (cfg.Shard < 0 || cfg.Shard >= cfg.Shards) {
		return nil, fmt.Errorf("bench: shard %d/%d out of range", cfg.Shard, cfg.Shards)
	}
	var out []Sample
	for _, c := range cfg.Classes {
		for k := 0; k < cfg.Windows; k++ {
			if cfg.Shards > 1 && k%cfg.Shards != cfg.Shard {
				continue
			}
			w, err := c.Make(cfg.Seed, k)
			if err != nil {
				return nil, fmt.Errorf("class %s window %d: %w", c.Name, k, err)
			}
			if k == 0 && cfg.ExportDir != "" {
				if err := exportMPS(w, c, cfg.ExportDir); err != nil {
					return nil, err
				}
			}
			for _, ns := range cfg.Solvers {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				limit := cfg.TimeLimit
				if ns.TimeLimit > 0 {
					limit = ns.TimeLimit
				}
				t0 := time.Now()
				res, err := solver.SolveWindow(ctx, w, ns.Solver, solver.Options{MaxJobs: c.MaxJobs, TimeLimit: limit})
				smp := Sample{Class: c.Name, Window: k, Solver: ns.Name, Seconds: time.Since(t0).Seconds()}
				if err == nil && res.Status != solver.Unknown && res.Status != solver.Infeasible {
					smp.OK, smp.Objective, smp.Optimal = true, res.Objective, res.Status == solver.Optimal
					if res.HasBound() {
						b := res.Bound
						smp.Bound = &b
						smp.FreeBound = res.Encoding == "dcas"
					}
				}
				out = append(out, smp)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "%s %3d %-8s %-10v obj %d (%.1f ms)\n", c.Name, k, ns.Name,
						statusOf(res, err), smp.Objective, smp.Seconds*1000)
				}
				if cfg.Tick != nil {
					cfg.Tick()
				}
			}
		}
	}
	return out, nil
}

// Summarise turns samples into one row per (class, solver), classes and
// solvers in order of first appearance. A window's gap is measured to the
// best bound any solver proved on that window.
func Summarise(samples []Sample) []Row {
	type cw struct {
		class  string
		window int
	}
	best, free := map[cw]float64{}, map[cw]float64{}
	var classes, solvers []string
	by := map[[2]string][]Sample{}
	for _, s := range samples {
		if !slices.Contains(classes, s.Class) {
			classes = append(classes, s.Class)
		}
		if !slices.Contains(solvers, s.Solver) {
			solvers = append(solvers, s.Solver)
		}
		by[[2]string{s.Class, s.Solver}] = append(by[[2]string{s.Class, s.Solver}], s)
		k := cw{s.Class, s.Window}
		if _, ok := best[k]; !ok {
			best[k] = math.Inf(-1)
		}
		if s.OK && s.Bound != nil {
			best[k] = max(best[k], *s.Bound)
			if s.FreeBound {
				free[k] = max(free[k], *s.Bound)
			}
		}
	}
	var rows []Row
	for _, c := range classes {
		for _, sv := range solvers {
			ss := by[[2]string{c, sv}]
			if len(ss) == 0 {
				continue
			}
			bs, fs := make([]float64, len(ss)), make([]float64, len(ss))
			for i, s := range ss {
				bs[i] = best[cw{c, s.Window}]
				fs[i] = free[cw{c, s.Window}] // 0: no free bound
			}
			r := summarise(c, sv, ss, bs)
			r.freeGaps(ss, fs)
			rows = append(rows, r)
		}
	}
	return rows
}

// freeGaps fills the gap-to-the-free-optimum columns: free[k] is the best
// free bound on window k, 0 when there is none.
func (r *Row) freeGaps(ss []Sample, free []float64) {
	var gs []float64
	for k, s := range ss {
		if !s.OK || free[k] <= 0 {
			continue
		}
		g := 0.0
		if s.Objective > 0 {
			g = (float64(s.Objective) - free[k]) / float64(s.Objective) // GapDefinition
		}
		gs = append(gs, g)
	}
	sp := report.SpreadOf(gs)
	r.FreeGaps, r.MeanFreeGap, r.P99FreeGap, r.MaxFreeGap = sp.N, sp.Mean, sp.P99, sp.Max
}

// A Restriction is what the SCAS restriction costs on one class: over the
// windows where both the SCAS solver and the free solver proved their
// optimum, (SCAS optimum − free optimum) / free optimum.
type Restriction struct {
	Class string `json:"class"`
	report.Restriction
}

// Restrictions compares the solver named scas (an exact SCAS solver) with
// the solver named free on every class of samples.
func Restrictions(samples []Sample, scasName, freeName string) []Restriction {
	type cw struct {
		class  string
		window int
	}
	type pair struct {
		opt  [2]int64
		have [2]bool
	}
	by := map[cw]*pair{}
	var classes []string
	var keys []cw
	for _, s := range samples {
		if !slices.Contains(classes, s.Class) {
			classes = append(classes, s.Class)
		}
		i := slices.Index([]string{scasName, freeName}, s.Solver)
		if i < 0 || !s.OK || !s.Optimal {
			continue
		}
		k := cw{s.Class, s.Window}
		if by[k] == nil {
			by[k] = &pair{}
			keys = append(keys, k)
		}
		by[k].opt[i], by[k].have[i] = s.Objective, true
	}
	var out []Restriction
	for _, c := range classes {
		var pairs [][2]int64
		for _, k := range keys {
			if p := by[k]; k.class == c && p.have[0] && p.have[1] {
				pairs = append(pairs, p.opt)
			}
		}
		if r := report.RestrictionOf(pairs); r.Windows > 0 {
			out = append(out, Restriction{Class: c, Restriction: r})
		}
	}
	return out
}

// PrintRestrictions writes what the SCAS restriction costs, one line per
// class.
func PrintRestrictions(out io.Writer, rs []Restriction, scasName, freeName string) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(out, "\nWhat the SCAS restriction costs: (%s optimum − %s optimum) / %s optimum, over the windows both proved\n", scasName, freeName, freeName)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "class\twindows\tfree below\tmean\tp99\tmax\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f%%\t%.4f%%\t%.4f%%\t\n", r.Class, r.Windows, r.Below, 100*r.Mean, 100*r.P99, 100*r.Max)
	}
	tw.Flush()
}

func statusOf(res *solver.WindowResult, err error) string {
	if err != nil {
		return "error"
	}
	return res.Status.String()
}

func summarise(class, name string, ss []Sample, best []float64) Row {
	r := Row{Class: class, Solver: name, Windows: len(ss)}
	durs := make([]time.Duration, 0, len(ss))
	gaps := 0
	for k, s := range ss {
		durs = append(durs, time.Duration(s.Seconds*float64(time.Second)))
		if !s.OK {
			r.Failed++
			continue
		}
		if s.Optimal {
			r.Optimal++
		}
		g := 0.0 // an empty or zero-cost window: no gap
		switch {
		case s.Objective == 0:
		case !math.IsInf(best[k], -1) && s.Objective > 0:
			// Not clamped: a DCAS heuristic can beat the SCAS bound.
			g = (float64(s.Objective) - best[k]) / float64(s.Objective)
		default:
			continue // no bound on this window
		}
		if gaps == 0 {
			r.MinGap, r.MaxGap = g, g
		}
		r.MeanGap += g
		r.MaxGap = max(r.MaxGap, g)
		r.MinGap = min(r.MinGap, g)
		gaps++
	}
	r.Gaps = gaps
	if gaps > 0 {
		r.MeanGap /= float64(gaps)
	}
	r.Optimal /= float64(max(1, len(ss)))
	slices.Sort(durs)
	r.Median = quantile(durs, 0.5)
	r.P99 = quantile(durs, 0.99)
	return r
}

// quantile returns the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func exportMPS(w *model.Window, c Class, dir string) error {
	sel := model.SelectJobs(w, c.MaxJobs)
	if len(sel.Multi) == 0 {
		return nil
	}
	e, err := scas.Build(w, sel.Multi, scas.Strong)
	if err != nil {
		return err
	}
	d, err := dcas.Build(context.Background(), w, sel.Multi)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, prog := range map[string]*encode.Program{c.Name + "-0.mps": &e.Program, c.Name + "-0-dcas.mps": &d.Program} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := prog.WriteMPS(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// GapDefinition is the one definition of a gap in the tables of bench
// scas, the `gap` of a result document: the objective's excess over a
// lower bound, as a share of the objective.
const GapDefinition = "gap = (objective − bound) / objective; \"gap\" to the best SCAS bound any solver proved, \"free gap\" to the free solver's bound"

// PrintRows writes rows as a table (class × solver: median, p99, share
// proven optimal, mean, min and max gap to the best bound), then the gap's
// definition.
func PrintRows(out io.Writer, rows []Row) {
	withFree := slices.ContainsFunc(rows, func(r Row) bool { return r.FreeGaps > 0 })
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "class\tsolver\twindows\tmedian\tp99\toptimal\tmean gap\tmin gap\tmax gap\t"
	if withFree {
		head += "free gap mean\tp99\tmax\t"
	}
	fmt.Fprintln(tw, head+"failed\t")
	for _, r := range rows {
		pct := func(g float64, n int) string {
			if n == 0 {
				return "—"
			}
			return fmt.Sprintf("%.4f%%", 100*g)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.0f%%\t%s\t%s\t%s\t", r.Class, r.Solver, r.Windows,
			ms(r.Median), ms(r.P99), 100*r.Optimal, pct(r.MeanGap, r.Gaps), pct(r.MinGap, r.Gaps), pct(r.MaxGap, r.Gaps))
		if withFree {
			fmt.Fprintf(tw, "%s\t%s\t%s\t", pct(r.MeanFreeGap, r.FreeGaps), pct(r.P99FreeGap, r.FreeGaps), pct(r.MaxFreeGap, r.FreeGaps))
		}
		fmt.Fprintf(tw, "%d\t\n", r.Failed)
	}
	tw.Flush()
	fmt.Fprintln(out, GapDefinition)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }

// A SCASReport is what `optsched bench scas --json` writes and `optsched
// bench merge` reads: the settings, the summary rows and every sample.
type SCASReport struct {
	Benchmark string   `json:"benchmark"` // "scas"
	Seed      uint64   `json:"seed"`
	Windows   int      `json:"windows"`
	TimeLimit string   `json:"time_limit"`
	Classes   []string `json:"classes"`
	// Shard is "i/n" for one shard of a split run, "" for a whole run.
	Shard   string   `json:"shard,omitempty"`
	Rows    []Row    `json:"rows"`
	Samples []Sample `json:"samples"`
	// Restrictions compare csp (the SCAS optimum) with free (the free
	// optimum) where both ran.
	Restrictions []Restriction `json:"restrictions,omitempty"`
}

// SCASSolver and FreeSolver are the names Restrictions compares in
// reports: the SCAS optimum and the free optimum.
const (
	SCASSolver = "csp"
	FreeSolver = "free"
)

// MergeSCAS combines the reports of the shards of one run (same seed,
// windows, time limit and classes) into the report of the whole run. It
// is an error for two reports to hold the same (class, window, solver).
func MergeSCAS(reports []SCASReport) (SCASReport, error) {
	if len(reports) == 0 {
		return SCASReport{}, errors.New("bench merge: no reports")
	}
	m := reports[0]
	m.Shard, m.Rows, m.Samples = "", nil, nil
	type key struct {
		class  string
		window int
		solver string
	}
	seen := map[key]int{}
	for i, r := range reports {
		if r.Benchmark != m.Benchmark || r.Seed != m.Seed || r.Windows != m.Windows ||
			r.TimeLimit != m.TimeLimit || !slices.Equal(r.Classes, m.Classes) {
			return SCASReport{}, fmt.Errorf("bench merge: report %d (%s seed %d, %d windows, limit %s, classes %v) is not from the same run as report 0 (%s seed %d, %d windows, limit %s, classes %v)",
				i, r.Benchmark, r.Seed, r.Windows, r.TimeLimit, r.Classes, m.Benchmark, m.Seed, m.Windows, m.TimeLimit, m.Classes)
		}
		for _, s := range r.Samples {
			k := key{s.Class, s.Window, s.Solver}
			if j, dup := seen[k]; dup {
				return SCASReport{}, fmt.Errorf("bench merge: class %s window %d solver %s is in reports %d and %d (overlapping shards?)", s.Class, s.Window, s.Solver, j, i)
			}
			seen[k] = i
			m.Samples = append(m.Samples, s)
		}
	}
	classRank := map[string]int{}
	for i, c := range m.Classes {
		classRank[c] = i
	}
	solverRank := map[string]int{}
	for _, s := range reports[0].Samples {
		if _, ok := solverRank[s.Solver]; !ok {
			solverRank[s.Solver] = len(solverRank)
		}
	}
	slices.SortStableFunc(m.Samples, func(a, b Sample) int {
		if c := classRank[a.Class] - classRank[b.Class]; c != 0 {
			return c
		}
		if c := a.Window - b.Window; c != 0 {
			return c
		}
		return solverRank[a.Solver] - solverRank[b.Solver]
	})
	m.Rows = Summarise(m.Samples)
	m.Restrictions = Restrictions(m.Samples, SCASSolver, FreeSolver)
	return m, nil
}

// WriteRowsCSV writes rows as CSV with a header line; latencies in
// milliseconds, gaps and shares as fractions.
func WriteRowsCSV(out io.Writer, rows []Row) error {
	w := csv.NewWriter(out)
	w.Write([]string{"class", "solver", "windows", "median_ms", "p99_ms", "optimal_share", "mean_gap", "min_gap", "max_gap", "failed",
		"free_gaps", "mean_free_gap", "p99_free_gap", "max_free_gap"})
	for _, r := range rows {
		w.Write([]string{r.Class, r.Solver, strconv.Itoa(r.Windows),
			strconv.FormatFloat(float64(r.Median.Microseconds())/1000, 'f', 3, 64),
			strconv.FormatFloat(float64(r.P99.Microseconds())/1000, 'f', 3, 64),
			strconv.FormatFloat(r.Optimal, 'g', 6, 64), strconv.FormatFloat(r.MeanGap, 'g', 6, 64),
			strconv.FormatFloat(r.MinGap, 'g', 6, 64), strconv.FormatFloat(r.MaxGap, 'g', 6, 64),
			strconv.Itoa(r.Failed), strconv.Itoa(r.FreeGaps), strconv.FormatFloat(r.MeanFreeGap, 'g', 6, 64),
			strconv.FormatFloat(r.P99FreeGap, 'g', 6, 64), strconv.FormatFloat(r.MaxFreeGap, 'g', 6, 64)})
	}
	w.Flush()
	return w.Error()
}
