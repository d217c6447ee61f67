package sim

import (
	"math"
	"slices"
	"time"
)

// BoundedSlowdownFloor is the τ of the bounded slowdown,
// max(1, (wait + run) / max(run, τ)).
const BoundedSlowdownFloor = 10

// Summary holds a run's aggregate metrics.
type Summary struct {
	Jobs    int `json:"jobs"`
	Dropped int `json:"dropped"`
	// MeanCost is the mean CH cost per job (one-node jobs count 1);
	// MeanMultiCost over jobs of two or more nodes.
	MeanCost      float64 `json:"mean_cost"`
	MeanMultiCost float64 `json:"mean_multi_cost"`
	// MeanWait, MeanTurnaround in seconds; MeanBSLD the bounded slowdown.
	MeanWait       float64 `json:"mean_wait_s"`
	MeanTurnaround float64 `json:"mean_turnaround_s"`
	MeanBSLD       float64 `json:"mean_bounded_slowdown"`
	Utilisation    float64 `json:"utilisation"`
	Makespan       int64   `json:"makespan_s"`
	// Windows solved and their solve latency.
	Windows       int     `json:"windows"`
	SolveMedianMS float64 `json:"solve_median_ms"`
	SolveP99MS    float64 `json:"solve_p99_ms"`
}

// Summarise computes r's aggregate metrics.
func (r *Result) Summarise() Summary {
	s := Summary{Jobs: len(r.Jobs), Dropped: r.Dropped, Utilisation: r.Utilisation, Makespan: r.Makespan, Windows: r.Windows}
	if len(r.Jobs) == 0 {
		return s
	}
	multi := 0
	for i := range r.Jobs {
		j := &r.Jobs[i]
		run := float64(j.End - j.Start)
		wait := float64(j.Wait())
		s.MeanCost += float64(j.Cost)
		if len(j.Nodes) > 1 {
			s.MeanMultiCost += float64(j.Cost)
			multi++
		}
		s.MeanWait += wait
		s.MeanTurnaround += wait + run
		s.MeanBSLD += math.Max(1, (wait+run)/math.Max(run, BoundedSlowdownFloor))
	}
	n := float64(len(r.Jobs))
	s.MeanCost /= n
	s.MeanWait /= n
	s.MeanTurnaround /= n
	s.MeanBSLD /= n
	if multi > 0 {
		s.MeanMultiCost /= float64(multi)
	}
	if len(r.SolveTimes) > 0 {
		d := slices.Clone(r.SolveTimes)
		slices.Sort(d)
		at := func(q float64) float64 {
			i := min(len(d)-1, max(0, int(math.Ceil(q*float64(len(d))))-1))
			return float64(d[i]) / float64(time.Millisecond)
		}
		s.SolveMedianMS, s.SolveP99MS = at(0.5), at(0.99)
	}
	return s
}
