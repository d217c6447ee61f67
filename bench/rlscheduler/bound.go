package rlscheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/optsched/optsched/bench/offline"
)

// OfflineOptions tune OfflineBound.
type OfflineOptions struct {
	// Limit bounds the time spent on one sequence (0: no limit).
	Limit time.Duration
	// Bound tunes the Lagrangian bound.
	Bound offline.BoundOptions
}

// OfflineBound proves a lower bound on the sum of bounded slowdowns of
// any schedule of the sequence's jobs on its cluster (bench/offline's
// Lagrangian relaxation of bucketed capacity); for a sequence of at most
// offline.MaxExactJobs jobs it also runs the exact branch and bound and,
// when that proves its optimum within the limit, returns the optimum. The
// best offline schedule found comes back as Upper, checked by
// Schedule.Verify. The bound is offline: it knows every arrival and real
// run time in advance.
func OfflineBound(ctx context.Context, seq Sequence, opt OfflineOptions) (BoundValue, error) {
	if err := seq.Check(); err != nil {
		return BoundValue{}, err
	}
	if opt.Limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Limit)
		defer cancel()
	}
	nodes, _ := seq.nodes()
	jobs := make([]offline.Job, seq.Len)
	for i, j := range seq.Jobs() {
		jobs[i] = offline.Job{Submit: j.Submit, Run: j.Run, Nodes: nodes[i]}
	}
	total := int(seq.W.MaxNodes)
	var v BoundValue
	if seq.Len <= offline.MaxExactJobs {
		ex, err := offline.Exact(ctx, jobs, total, offline.ExactOptions{Bound: opt.Bound})
		if err != nil {
			return BoundValue{}, err
		}
		v = BoundValue{Sum: ex.Bound, Upper: ex.Value, Exact: ex.Proven, starts: ex.Starts}
	} else {
		b, err := offline.Bound(ctx, jobs, total, opt.Bound)
		if err != nil {
			return BoundValue{}, err
		}
		v = BoundValue{Sum: b.Value, Upper: b.Upper, starts: b.Starts}
	}
	if v.starts != nil {
		s := &Schedule{Seq: seq, Starts: v.starts}
		if err := s.Verify(); err != nil {
			return BoundValue{}, fmt.Errorf("the offline schedule: %w", err)
		}
		v.Upper = s.Mean() * float64(seq.Len)
	}
	if v.Sum > v.Upper*(1+1e-9) {
		return BoundValue{}, fmt.Errorf("rlscheduler: offline bound %.6f above its own schedule's %.6f", v.Sum, v.Upper)
	}
	return v, nil
}
