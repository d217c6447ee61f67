package sim

import (
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/model"
)

// BoundedSlowdownFloor is the τ of the bounded slowdown
// (model.BoundedSlowdown).
const BoundedSlowdownFloor = model.BoundedSlowdownFloor

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
	// MeanSlowdown is the mean unbounded slowdown, (end − submit) / run
	// time with the run time floored at 1 s (RLSchert's metric), and
	// MeanNormTurnaround the mean normalised turnaround, turnaround / run
	// time per job, averaged (JoSHH's metric): the same per-job ratio,
	// kept under each paper's name (docs/learned.md).
	MeanSlowdown       float64 `json:"mean_slowdown"`
	MeanNormTurnaround float64 `json:"mean_normalised_turnaround"`
	Utilisation        float64 `json:"utilisation"`
	Makespan           int64   `json:"makespan_s"`
	// Windows solved and their solve latency.
	Windows int `json:"windows"`
	// WindowsTooLarge counts the windows the solver refused as too large
	// (Result.TooLarge), answered by its fallback.
	WindowsTooLarge int `json:"windows_too_large,omitempty"`
	// WindowsSkipped counts the window policy's windows in which no job
	// could start, not solved (Result.Skipped); the latencies are the
	// solved windows'.
	WindowsSkipped int     `json:"windows_skipped"`
	SolveMedianMS  float64 `json:"solve_median_ms"`
	SolveP99MS     float64 `json:"solve_p99_ms"`
	// The queue metrics of Bridi et al. (IEEE TPDS 2016; see the package
	// doc), with wait_j = start − submit and ewt_j the expected waiting
	// time of job j's queue (JobResult.EWT, from Config.ExpectedWait):
	//
	//	WQT        weighted queue time, Σ_j wait_j / ewt_j (dimensionless:
	//	           each job's wait in units of its queue's ewt);
	//	MeanWQT    WQT / jobs, the mean normalised queue time;
	//	LateJobs   NL, the number of late jobs, those with wait_j > ewt_j;
	//	Tardiness  TR, Σ_j max(0, wait_j − ewt_j), in seconds: how far
	//	           the late jobs overran their queue's ewt in total.
	//
	// WQT is the objective of Bridi et al.'s CP scheduler (their code scales
	// the weights by max_q ewt_q, which only rescales it).
	WQT       float64 `json:"wqt"`
	MeanWQT   float64 `json:"mean_wqt"`
	LateJobs  int     `json:"late_jobs"`
	Tardiness int64   `json:"tardiness_s"`
	// Kills and LostNodeSeconds: the runs a killer stopped and their
	// work lost (Result.Kills, Result.LostNodeSeconds).
	Kills           int   `json:"kills,omitempty"`
	LostNodeSeconds int64 `json:"lost_node_seconds,omitempty"`
	// Gap summarises the per-window gap to the gap solver
	// (Config.GapSolver); nil when none was set.
	Gap *GapSummary `json:"gap,omitempty"`
}

// A GapSummary aggregates a run's WindowGaps.
type GapSummary struct {
	// Solver names the gap solver.
	Solver string `json:"solver"`
	// Windows is the number of windows measured, Skipped the number of
	// windows with multi-node jobs that could not be (see WindowGap).
	Windows int `json:"windows"`
	Skipped int `json:"skipped"`
	// MeanGap and MaxGap are the mean and largest WindowGap.Gap, as
	// fractions (0.01 is 1 %).
	MeanGap float64 `json:"mean_gap"`
	MaxGap  float64 `json:"max_gap"`
	// OptimalShare is the share of the measured windows whose allocation
	// is proven optimal (gap 0).
	OptimalShare float64 `json:"optimal_share"`
	// ExactMedianMS is the gap solver's median solve time per window.
	ExactMedianMS float64 `json:"exact_median_ms"`
}

// Summarise computes r's aggregate metrics.
func (r *Result) Summarise() Summary {
	s := Summary{Jobs: len(r.Jobs), Dropped: r.Dropped, Utilisation: r.Utilisation, Makespan: r.Makespan, Windows: r.Windows, WindowsTooLarge: r.TooLarge, WindowsSkipped: r.Skipped,
		Kills: r.Kills, LostNodeSeconds: r.LostNodeSeconds, Gap: r.summariseGaps()}
	if len(r.Jobs) == 0 {
		return s
	}
	multi := 0
	for i := range r.Jobs {
		j := &r.Jobs[i]
		run := float64(j.End - j.Start)
		wait := float64(j.Wait())
		s.MeanCost += float64(j.Cost)
		if j.NodeCount() > 1 {
			s.MeanMultiCost += float64(j.Cost)
			multi++
		}
		s.MeanWait += wait
		if j.EWT > 0 {
			s.WQT += wait / float64(j.EWT)
			if late := j.Wait() - j.EWT; late > 0 {
				s.LateJobs++
				s.Tardiness += late
			}
		}
		s.MeanTurnaround += wait + run
		s.MeanBSLD += model.BoundedSlowdown(wait, run)
		s.MeanSlowdown += (wait + run) / max(run, 1)
	}
	n := float64(len(r.Jobs))
	s.MeanCost /= n
	s.MeanWait /= n
	s.MeanTurnaround /= n
	s.MeanBSLD /= n
	s.MeanSlowdown /= n
	s.MeanNormTurnaround = s.MeanSlowdown
	s.MeanWQT = s.WQT / n
	if multi > 0 {
		s.MeanMultiCost /= float64(multi)
	}
	if len(r.SolveTimes) > 0 {
		s.SolveMedianMS, s.SolveP99MS = quantileMS(r.SolveTimes, 0.5), quantileMS(r.SolveTimes, 0.99)
	}
	return s
}

// summariseGaps aggregates r's gaps; nil without a gap solver.
func (r *Result) summariseGaps() *GapSummary {
	if r.GapSolver == "" {
		return nil
	}
	g := &GapSummary{Solver: r.GapSolver, Windows: len(r.Gaps), Skipped: r.GapSkipped}
	if len(r.Gaps) == 0 {
		return g
	}
	times := make([]time.Duration, len(r.Gaps))
	opt := 0
	for i, w := range r.Gaps {
		g.MeanGap += w.Gap
		g.MaxGap = max(g.MaxGap, w.Gap)
		if w.Gap == 0 {
			opt++
		}
		times[i] = w.ExactElapsed
	}
	g.MeanGap /= float64(len(r.Gaps))
	g.OptimalShare = float64(opt) / float64(len(r.Gaps))
	g.ExactMedianMS = quantileMS(times, 0.5)
	return g
}

// quantileMS returns the q-quantile of d (nearest rank), in milliseconds.
func quantileMS(d []time.Duration, q float64) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	i := min(len(d)-1, max(0, int(math.Ceil(q*float64(len(d))))-1))
	return float64(d[i]) / float64(time.Millisecond)
}
