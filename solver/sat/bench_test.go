package sat_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// BenchmarkEurora schedules Eurora-like windows (instances.Eurora: 65
// nodes, running jobs holding 85 % of the cores, jobs waiting jobs of the
// synthetic workload, 60 s grid) with the CP/SAT scheduler and a 1 s
// limit, the first incumbent from PBSWalltime and PBSFifo. Run one
// window per iteration over 20 seeded windows:
//
//	go test -run '^$' -bench Eurora -benchtime 20x ./solver/sat
//
// Besides ns/op it reports the median and largest wall time per window
// (solver.SolveWindow: list schedules, encoding, search, check), the share of
// windows proven optimal, and the mean and largest gap — on Eq. (2)'s
// weighted queue time ("gap-%", as every solver reports it) and on its
// part the decision controls, Σ (s_i − t)/ewt ("delay-gap-%", stricter:
// the jobs' waiting before the window time is left out).
func BenchmarkEurora(b *testing.B) {
	for _, jobs := range []int{10, 20, 30} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			var windows []*cp.Model
			for seed := range uint64(20) {
				w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: jobs})
				if err != nil {
					b.Fatal(err)
				}
				m, err := cp.Build(w, solver.DefaultGranularity)
				if err != nil {
					b.Fatal(err)
				}
				windows = append(windows, m)
			}
			s := sat.Solver{Initial: listSchedulers()}
			var times []time.Duration
			var proven, n int
			var gap, maxGap, dgap, maxDgap float64
			for i := 0; b.Loop(); i++ {
				m := windows[i%len(windows)]
				res, err := solver.SolveWindow(context.Background(), m.Window, s, solver.Options{TimeLimit: time.Second})
				if err != nil {
					b.Fatal(err)
				}
				times = append(times, res.Elapsed)
				n++
				if res.Status == solver.Optimal {
					proven++
				}
				g, _ := res.Gap()
				gap += g
				maxGap = max(maxGap, g)
				d := 0.0
				if c := m.ObjectiveOfWeighted(0); res.HasBound() && res.Objective-c > 1e-12 {
					d = (res.Objective - res.Bound) / (res.Objective - c)
				}
				dgap += d
				maxDgap = max(maxDgap, d)
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
			b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms")
			b.ReportMetric(float64(proven)/float64(n), "proven")
			b.ReportMetric(100*gap/float64(n), "gap-%")
			b.ReportMetric(100*maxGap, "max-gap-%")
			b.ReportMetric(100*dgap/float64(n), "delay-gap-%")
			b.ReportMetric(100*maxDgap, "max-delay-gap-%")
		})
	}
}

// BenchmarkEuroraCNF writes the complete CNF (sat.EncodeBounded: every
// node block, the objective bound) of Eurora-like windows at the bound of
// the better PBS list schedule (as optsched export does), once on the grid
// and once on the compressed time domain, and reports the median clause
// and variable counts of each over the seeded windows (20 per size) whose
// objective diagram stays within cnf's work limit both ways, and how many
// did not (deterministic: no search); with the default load (running jobs
// holding 85 % of the cores) and a loaded cluster (98 %), where the jobs
// wait longer and the start domains grow. One iteration encodes all
// windows of a size both ways:
//
//	go test -run '^$' -bench EuroraCNF -benchtime 1x ./solver/sat
func BenchmarkEuroraCNF(b *testing.B) {
	for _, c := range []struct {
		jobs int
		load float64
	}{{10, 0.85}, {20, 0.85}, {10, 0.98}, {20, 0.98}} {
		jobs := c.jobs
		b.Run(fmt.Sprintf("jobs=%d/load=%.2f", jobs, c.load), func(b *testing.B) {
			var cl, vars [2][]float64
			tooLarge := 0
			for b.Loop() {
				cl, vars, tooLarge = [2][]float64{}, [2][]float64{}, 0
				for seed := range uint64(20) {
					w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: jobs, Load: c.load})
					if err != nil {
						b.Fatal(err)
					}
					m, err := cp.Build(w, solver.DefaultGranularity)
					if err != nil {
						b.Fatal(err)
					}
					bound := int64(math.MaxInt64)
					for _, h := range listSchedulers() {
						sch, err := h.Solve(context.Background(), &solver.ScheduleProblem{Window: w})
						if err != nil {
							b.Fatal(err)
						}
						var W int64
						for _, a := range sch.Allocations {
							for _, j := range m.Jobs {
								if j.Index == a.Job {
									W += j.Weight * ((a.Start - w.Time) / solver.DefaultGranularity)
								}
							}
						}
						bound = min(bound, W)
					}
					var fs [2]cnf.Formula
					large := false
					for k, grid := range []bool{true, false} {
						enc, err := sat.EncodeBoundedGrid(m, bound, &fs[k], grid)
						if errors.Is(err, cnf.ErrTooLarge) {
							large = true
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						if enc.Compressed() == grid {
							b.Fatalf("seed %d: compressed %v on the grid setting %v", seed, enc.Compressed(), grid)
						}
					}
					if large {
						tooLarge++
						continue
					}
					for k := range fs {
						cl[k] = append(cl[k], float64(fs[k].NumClauses()))
						vars[k] = append(vars[k], float64(fs[k].NumVars))
					}
				}
			}
			med := func(v []float64) float64 {
				s := slices.Clone(v)
				slices.Sort(s)
				return s[len(s)/2]
			}
			b.ReportMetric(med(cl[0]), "clauses-grid")
			b.ReportMetric(med(cl[1]), "clauses-compressed")
			b.ReportMetric(med(vars[0]), "vars-grid")
			b.ReportMetric(med(vars[1]), "vars-compressed")
			b.ReportMetric(float64(tooLarge), "too-large")
		})
	}
}
