package sat_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

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
// (solver.ScheduleWindow: list schedules, encoding, search, check), the share of
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
				res, err := solver.ScheduleWindow(context.Background(), m.Window, s, solver.ScheduleOptions{}, time.Second)
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
