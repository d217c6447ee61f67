package sim_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/model"
)

// BenchmarkZZProf: one policy/allocator (ZZPOL, ZZALLOC env) on the KTH prefix. Untracked.
func BenchmarkZZProf(b *testing.B) {
	pol, alloc := os.Getenv("ZZPOL"), os.Getenv("ZZALLOC")
	tr, topo, spec := scaledKTH(b, 32768, 50000)
	cfg := sim.Config{Topology: topo, TopologySpec: model.TopologySpec{Layout: &spec}, Nodes: tr.Nodes,
		Cost: model.DefaultCostModel, Policy: pol, Allocator: alloc, Tau: 60, TimeLimit: 10 * time.Millisecond,
		Check: true, DiscardNodes: true}
	cfg.CP.NoSearch = true
	for b.Loop() {
		if _, err := sim.Run(context.Background(), tr, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

