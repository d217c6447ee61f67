package sim_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
)

const kthTrace = "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz"

// scaledKTH returns the shipped KTH SP2 log scaled by trace.ScaleSWF to an
// archive-scale cluster of nodes nodes (its 100-processor largest job
// spans them all; a prefix without it, less), repeated to jobs job lines,
// and the layout simulate would give it (whole pods of 4 leaves of 10
// nodes).
func scaledKTH(tb testing.TB, nodes, jobs int) (*trace.Trace, *model.Topology, model.LayoutSpec) {
	tb.Helper()
	raw, err := os.ReadFile(kthTrace)
	if err != nil {
		tb.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := trace.ScaleSWF(&buf, zr, trace.ScaleOptions{Nodes: nodes, Jobs: jobs}); err != nil {
		tb.Fatal(err)
	}
	tr, err := trace.ReadSWF(&buf, trace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if tr.Nodes > nodes || jobs >= 27992 && tr.Nodes != nodes {
		tb.Fatalf("scaled log: %d nodes, want %d", tr.Nodes, nodes)
	}
	spec := model.LayoutSpec{Pods: (tr.Nodes + 39) / 40, LeavesPerPod: 4, NodesPerLeaf: 10}
	topo, err := model.NewLayout(spec.Pods, spec.LeavesPerPod, spec.NodesPerLeaf)
	if err != nil {
		tb.Fatal(err)
	}
	return tr, topo, spec
}

// BenchmarkSimulateScaled simulates, under every policy and allocator at
// simulate's default settings for a cluster of this size (window: τ 60 s,
// the csp solver with SA in reserve, no job cap, 10 ms per window; cp:
// its list schedules alone; Check on; no node lists kept), a prefix of
// KTH SP2 scaled to 32,768 nodes — the shape of an archive log such as
// CEA Curie's, whose header gives no size. The prefixes keep one run to
// seconds: 50,000 jobs under the per-job policies and with an allocator,
// 3,000 under window (the full-size runs are in
// docs/results/2026-11-26-sim-scale.md).
func BenchmarkSimulateScaled(b *testing.B) {
	type run struct {
		policy, alloc string
		jobs          int
	}
	runs := []run{{"window", "", 3000}}
	for _, p := range sim.PolicyNames() {
		runs = append(runs, run{p, "", 50000})
	}
	for _, a := range sim.AllocatorNames() {
		if a != sim.FirstFit {
			runs = append(runs, run{"easy", a, 50000})
		}
	}
	for _, r := range runs {
		name := r.policy
		if r.alloc != "" {
			name += "/" + r.alloc
		}
		b.Run(name, func(b *testing.B) {
			tr, topo, spec := scaledKTH(b, 32768, r.jobs)
			cfg := sim.Config{Topology: topo, TopologySpec: model.TopologySpec{Layout: &spec}, Nodes: tr.Nodes,
				Cost: model.DefaultCostModel, Policy: r.policy, Allocator: r.alloc, Tau: 60, TimeLimit: 10 * time.Millisecond,
				Check: true, DiscardNodes: true}
			cfg.CP.NoSearch = true // simulate's default above 10,000 nodes
			if r.policy == "window" {
				s, err := catalog.Solver("csp", catalog.Options{Formulation: scas.Strong, Seed: 1, Fallback: "sa"})
				if err != nil {
					b.Fatal(err)
				}
				cfg.Solver = s
			}
			for b.Loop() {
				if _, err := sim.Run(context.Background(), tr, cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
			b.ReportMetric(float64(r.jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
