package predict

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/optsched/optsched/bench/trace"
)

// A Job is a job of a log as the history holds it: one that ran.
type Job struct {
	ID   string
	User string // "" when the log does not say
	// Submit and Start are seconds since the log's start; Start ≥ Submit.
	Submit, Start int64
	// Run is the actual run time, s (≥ 0).
	Run int64
	// Request is the requested time, s (≥ 1), or 0 when unknown.
	Request int64
}

// End is when the job finished, Start + Run.
func (j Job) End() int64 { return j.Start + j.Run }

// FromTrace returns the jobs of tr, which must have been read with
// trace.Options.KeepSWF, in the trace's order, and the number dropped
// because the log gives no wait or no run time for them.
func FromTrace(tr *trace.Trace) (jobs []Job, dropped int, err error) {
	jobs = make([]Job, 0, len(tr.Jobs))
	for _, j := range tr.Jobs {
		r := j.SWF
		if r == nil {
			return nil, 0, fmt.Errorf("predict: job %s has no SWF record (read the log with trace.Options.KeepSWF)", j.ID)
		}
		if r.Wait < 0 || r.Run < 0 {
			dropped++
			continue
		}
		req := r.Request
		if req < 1 {
			req = 0
		}
		jobs = append(jobs, Job{ID: j.ID, User: j.User, Submit: j.Submit, Start: j.Submit + r.Wait, Run: r.Run, Request: req})
	}
	return jobs, dropped, nil
}

// A History answers which of a user's jobs had finished by a given time.
// It is built once from a whole log and never shows a job that ends
// after the time asked.
type History struct {
	byUser map[string][]Job // sorted by End, then Start, then log order
}

// NewHistory indexes jobs by user. Jobs without a user are left out.
func NewHistory(jobs []Job) *History {
	h := &History{byUser: map[string][]Job{}}
	for _, j := range jobs {
		if j.User != "" {
			h.byUser[j.User] = append(h.byUser[j.User], j)
		}
	}
	for _, js := range h.byUser {
		slices.SortStableFunc(js, func(a, b Job) int {
			return cmp.Or(cmp.Compare(a.End(), b.End()), cmp.Compare(a.Start, b.Start))
		})
	}
	return h
}

// Finished returns the user's jobs that ended at or before now, the most
// recent last. The slice is the history's own: read it, do not change it
// (its capacity ends at its length, so appending copies).
func (h *History) Finished(user string, now int64) []Job {
	js := h.byUser[user]
	n, _ := slices.BinarySearchFunc(js, now, func(j Job, t int64) int {
		if j.End() <= t {
			return -1
		}
		return 1
	})
	return js[:n:n]
}

// Running is what a predictor knows of a running job: not its run time.
type Running struct {
	User    string
	Request int64 // s, 0 when unknown
	Elapsed int64 // s since it started (≥ 0)
}

// A Predictor predicts the remaining run time of a running job at time
// now from the history as of now.
type Predictor interface {
	// Name is the predictor's name in the tables.
	Name() string
	// Remaining is the predicted remaining run time, s (≥ 0).
	Remaining(h *History, now int64, r Running) float64
}

// clip bounds a predicted total run time x to [e, max(request, e)] (from
// below only when the request is unknown) and returns the remaining time.
func clip(x float64, r Running) float64 {
	e := float64(r.Elapsed)
	if r.Request > 0 {
		x = min(x, max(float64(r.Request), e))
	}
	return max(x, e) - e
}

// RequestLeft predicts request − elapsed: what a scheduler assumes without
// a prediction. Without a request it predicts 0.
type RequestLeft struct{}

// Name is "request-left".
func (RequestLeft) Name() string { return "request-left" }

// Remaining is max(request − elapsed, 0).
func (RequestLeft) Remaining(_ *History, _ int64, r Running) float64 {
	return clip(float64(r.Request), r)
}

// UserLast predicts that the job runs as long as the user's most recently
// finished job; the request when the user has none.
type UserLast struct{}

// Name is "user-last".
func (UserLast) Name() string { return "user-last" }

// Remaining is clip(last run) − elapsed.
func (UserLast) Remaining(h *History, now int64, r Running) float64 {
	fin := h.Finished(r.User, now)
	if r.User == "" || len(fin) == 0 {
		return clip(float64(r.Request), r)
	}
	return clip(float64(fin[len(fin)-1].Run), r)
}

// UserRatio predicts the request times the median ratio run/request of
// the user's last K finished jobs with a known request; with Conditional,
// of those that ran longer than the job's elapsed time (looking back at
// most 8K jobs). Without such jobs, or without a request, it predicts the
// request (0 left when that is unknown too).
type UserRatio struct {
	K           int // jobs in the median (≥ 1; 0 means DefaultK)
	Conditional bool
}

// DefaultK is the jobs UserRatio takes the median of when K is 0. It was
// chosen before any measurement, not tuned.
const DefaultK = 5

// Name is "user-ratio" or "user-ratio-cond".
func (u UserRatio) Name() string {
	if u.Conditional {
		return "user-ratio-cond"
	}
	return "user-ratio"
}

// Remaining is clip(request × median ratio) − elapsed.
func (u UserRatio) Remaining(h *History, now int64, r Running) float64 {
	k := u.K
	if k < 1 {
		k = DefaultK
	}
	if r.Request <= 0 || r.User == "" {
		return clip(float64(r.Request), r)
	}
	fin := h.Finished(r.User, now)
	ratios := make([]float64, 0, k)
	for i, looked := len(fin)-1, 0; i >= 0 && len(ratios) < k && looked < 8*k; i, looked = i-1, looked+1 {
		j := fin[i]
		if j.Request <= 0 || u.Conditional && j.Run <= r.Elapsed {
			continue
		}
		ratios = append(ratios, float64(j.Run)/float64(j.Request))
	}
	if len(ratios) == 0 {
		return clip(float64(r.Request), r)
	}
	return clip(Median(ratios)*float64(r.Request), r)
}

// UserMAPE predicts the remaining time that minimises the percentage
// error over the user's recent history: of the user's last K finished
// jobs that ran longer than the job's elapsed time e (looking back at
// most 8K jobs), the remaining times rᵢ − e, their median weighted by
// 1 / (rᵢ − e) — the x minimising Σᵢ |x − (rᵢ − e)| / (rᵢ − e), the
// MAPE the job would have had as any of them. It is lower than the
// plain median: a percentage error punishes an overestimate of a short
// run without bound and an underestimate by at most 100 %. Without such
// jobs it predicts the request, as UserRatio.
type UserMAPE struct {
	K int // jobs in the median (≥ 1; 0 means DefaultK)
}

// Name is "user-mape".
func (UserMAPE) Name() string { return "user-mape" }

// Remaining is clip(e + weighted median) − elapsed.
func (u UserMAPE) Remaining(h *History, now int64, r Running) float64 {
	k := u.K
	if k < 1 {
		k = DefaultK
	}
	if r.User == "" {
		return clip(float64(r.Request), r)
	}
	fin := h.Finished(r.User, now)
	rem := make([]float64, 0, k)
	for i, looked := len(fin)-1, 0; i >= 0 && len(rem) < k && looked < 8*k; i, looked = i-1, looked+1 {
		if fin[i].Run > r.Elapsed {
			rem = append(rem, float64(fin[i].Run-r.Elapsed))
		}
	}
	if len(rem) == 0 {
		return clip(float64(r.Request), r)
	}
	return clip(float64(r.Elapsed)+WeightedMedianInv(rem), r)
}

// WeightedMedianInv returns the median of xs (all > 0) weighted by 1/x:
// the smallest x_j with Σ_{xᵢ ≤ x_j} 1/xᵢ ≥ half of Σ 1/xᵢ, which
// minimises Σᵢ |x − xᵢ| / xᵢ. It sorts xs.
func WeightedMedianInv(xs []float64) float64 {
	slices.Sort(xs)
	var total float64
	for _, x := range xs {
		total += 1 / x
	}
	var acc float64
	for _, x := range xs {
		acc += 1 / x
		if acc >= total/2 {
			return x
		}
	}
	return xs[len(xs)-1]
}

// Median is the median of xs (the mean of the middle two for an even
// count); it sorts xs.
func Median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Predictors are the predictors optsched bench predict compares, the
// baseline first.
func Predictors() []Predictor {
	return []Predictor{RequestLeft{}, UserLast{}, UserRatio{}, UserRatio{Conditional: true}, UserMAPE{}}
}
