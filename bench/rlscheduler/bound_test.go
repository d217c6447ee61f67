package rlscheduler

import (
	"context"
	"testing"

	"github.com/optsched/optsched/bench/offline"
)

// TestBoundBelowEveryPolicy: on sequences of both shipped traces, the
// offline bound is never above any policy's value (Run fails if it is),
// the offline schedule verifies and is never below the bound, and on
// short sequences the exact search proves some optima.
func TestBoundBelowEveryPolicy(t *testing.T) {
	policies := append(append([]string(nil), Published...), "easy")
	for _, tr := range shipped {
		w, err := Open(tr.path, LoadOptions{DropFirst: tr.drop})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			length int
			opt    offline.BoundOptions
		}{{200, offline.BoundOptions{Buckets: 128, MaxIterations: 60}}, {40, offline.BoundOptions{MaxIterations: 60}}} {
			for _, bf := range []bool{false, true} {
				if tc.length <= offline.MaxExactJobs && !bf {
					continue // the exact search once per trace is enough
				}
				res, err := Run(context.Background(), Config{
					Workload: w, Starts: Starts, Len: tc.length, Backfill: bf, Policies: policies,
					Bound: func(ctx context.Context, seq Sequence) (BoundValue, error) {
						return OfflineBound(ctx, seq, OfflineOptions{Bound: tc.opt})
					},
				})
				if err != nil {
					t.Fatalf("%s length %d backfill %v: %v", tr.name, tc.length, bf, err)
				}
				b := res.Bound
				for k := range b.PerSequence {
					if b.PerSequence[k] < 1 || b.UpperPerSequence[k] < b.PerSequence[k]*(1-1e-12) {
						t.Errorf("%s sequence %d: bound %.4f, offline schedule %.4f", tr.name, k, b.PerSequence[k], b.UpperPerSequence[k])
					}
				}
				if tc.length <= offline.MaxExactJobs && b.Exact == 0 {
					t.Errorf("%s length %d: no sequence proven exactly", tr.name, tc.length)
				}
				t.Logf("%s length %d backfill %v: bound %.3f offline %.3f exact %d", tr.name, tc.length, bf, b.Mean, b.Upper, b.Exact)
			}
		}
	}
}
