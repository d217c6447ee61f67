package sim_test

import (
	"context"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver/csp"
)

// BenchmarkWindowFullTrace simulates the whole 100,000-job Lan trace
// with the window policy, τ = 60 s, at most 5 multi-node jobs per window
// solved by the exact csp solver, model.Check on every allocation (the
// issue's target: ≤ 60 s).
func BenchmarkWindowFullTrace(b *testing.B) {
	tr, err := trace.Open(lanTrace, "lan", trace.Options{})
	if err != nil {
		b.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	topo, err := model.NewLayout(25, 4, 10)
	if err != nil {
		b.Fatal(err)
	}
	cfg := sim.Config{Topology: topo, Policy: "window", Tau: 60, Solver: csp.Solver{}, MaxJobs: 5, Check: true}
	windows := 0
	for b.Loop() {
		r, err := sim.Run(context.Background(), tr, cfg)
		if err != nil {
			b.Fatal(err)
		}
		windows = r.Windows
	}
	b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/trace")
	b.ReportMetric(float64(windows), "windows")
}
