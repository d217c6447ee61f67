package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

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

// LargeClass: 10,240-node k=32 fat-trees with 1,000–5,000 idle nodes and
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
	// ExportDir, when set, receives the strong M_SCAS program of each
	// class's first window as MPS, for timing outside MILP solvers on
	// exactly the same models.
	ExportDir string
	// Progress, when set, receives a line per window.
	Progress io.Writer
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
	Class, Solver string
	Windows       int
	// Median and P99 are solve latencies (the whole window pipeline).
	Median, P99 time.Duration
	// Optimal is the share of windows the solver proved optimal.
	Optimal float64
	// MeanGap is the mean of (objective − best bound) / objective, the best
	// bound being the highest lower bound any solver proved on the window.
	MeanGap float64
	// MaxGap and MinGap are the largest and smallest such gaps. The gap
	// is negative when a heuristic on the wider DCAS space beats the SCAS
	// bound.
	MaxGap, MinGap float64
	// Failed counts windows without an allocation (or with an error).
	Failed int
}

type sample struct {
	dur     time.Duration
	obj     int64
	bound   float64
	optimal bool
	ok      bool
}

// RunSCAS solves every window of every class with every solver and
// returns one row per (class, solver).
func RunSCAS(ctx context.Context, cfg SCASConfig) ([]Row, error) {
	var rows []Row
	for _, c := range cfg.Classes {
		samples := make([][]sample, len(cfg.Solvers))
		for k := 0; k < cfg.Windows; k++ {
			w, err := c.Make(cfg.Seed, k)
			if err != nil {
				return nil, fmt.Errorf("class %s window %d: %w", c.Name, k, err)
			}
			if k == 0 && cfg.ExportDir != "" {
				if err := exportMPS(w, c, cfg.ExportDir); err != nil {
					return nil, err
				}
			}
			for si, ns := range cfg.Solvers {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				limit := cfg.TimeLimit
				if ns.TimeLimit > 0 {
					limit = ns.TimeLimit
				}
				t0 := time.Now()
				res, err := solver.SolveWindow(ctx, w, ns.Solver, solver.Options{MaxJobs: c.MaxJobs, TimeLimit: limit})
				smp := sample{dur: time.Since(t0)}
				if err == nil && res.Status != solver.Unknown && res.Status != solver.Infeasible {
					smp.ok, smp.obj, smp.optimal = true, res.Objective, res.Status == solver.Optimal
					smp.bound = math.NaN()
					if res.HasBound() {
						smp.bound = res.Bound
					}
				}
				samples[si] = append(samples[si], smp)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "%s %3d %-8s %-10v obj %d (%.1f ms)\n", c.Name, k, ns.Name,
						statusOf(res, err), smp.obj, float64(smp.dur.Microseconds())/1000)
				}
			}
		}
		// The best bound per window over all solvers.
		best := make([]float64, cfg.Windows)
		for k := range best {
			best[k] = math.Inf(-1)
			for si := range cfg.Solvers {
				if s := samples[si][k]; s.ok && !math.IsNaN(s.bound) {
					best[k] = max(best[k], s.bound)
				}
			}
		}
		for si, ns := range cfg.Solvers {
			rows = append(rows, summarise(c.Name, ns.Name, samples[si], best))
		}
	}
	return rows, nil
}

func statusOf(res *solver.WindowResult, err error) string {
	if err != nil {
		return "error"
	}
	return res.Status.String()
}

func summarise(class, name string, ss []sample, best []float64) Row {
	r := Row{Class: class, Solver: name, Windows: len(ss)}
	durs := make([]time.Duration, 0, len(ss))
	gaps := 0
	for k, s := range ss {
		durs = append(durs, s.dur)
		if !s.ok {
			r.Failed++
			continue
		}
		if s.optimal {
			r.Optimal++
		}
		if s.obj == 0 {
			gaps++ // an empty or zero-cost window: no gap
			continue
		}
		if !math.IsInf(best[k], -1) && s.obj > 0 {
			// Not clamped: a DCAS heuristic can beat the SCAS bound.
			g := (float64(s.obj) - best[k]) / float64(s.obj)
			r.MeanGap += g
			r.MaxGap = max(r.MaxGap, g)
			r.MinGap = min(r.MinGap, g)
			gaps++
		}
	}
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, c.Name+"-0.mps"))
	if err != nil {
		return err
	}
	if err := e.Program.WriteMPS(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// PrintRows writes rows as a table (class × solver: median, p99, share
// proven optimal, mean, min and max gap to the best bound).
func PrintRows(out io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "class\tsolver\twindows\tmedian\tp99\toptimal\tmean gap\tmin gap\tmax gap\tfailed\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.0f%%\t%.4f%%\t%.4f%%\t%.4f%%\t%d\t\n", r.Class, r.Solver, r.Windows,
			ms(r.Median), ms(r.P99), 100*r.Optimal, 100*r.MeanGap, 100*r.MinGap, 100*r.MaxGap, r.Failed)
	}
	tw.Flush()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000) }
