package sim_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
)

// TestWindowSharedAsAlone simulates a prefix of KTH SP2 scaled to
// 32,768 nodes under the window policy twice: with the solver's work
// shared between two goroutines (encode.Workers 2: the block prices and
// the one-job path in chunks, cut small here so that every window of
// 600 idle nodes or more shares them, and the long DP columns in
// halves) and alone (encode.Workers 1). Without a time limit the csp
// solver proves every window, so the runs must agree job by job: the
// same starts on the same nodes, the same windows solved and skipped.
// (Taking a later chunk's block of the same price in the one-job path,
// <= for <, fails it.)
func TestWindowSharedAsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("two simulations of a scaled log")
	}
	tr, topo, spec := scaledKTH(t, 32768, 150)
	run := func(workers int) *sim.Result {
		defer func(k, l, m int) { encode.Workers, encode.ChunkLen, encode.MinShared = k, l, m }(encode.Workers, encode.ChunkLen, encode.MinShared)
		encode.Workers, encode.ChunkLen, encode.MinShared = workers, 300, 600
		s, err := catalog.Solver("csp", catalog.Options{Formulation: scas.Strong, Seed: 1, Fallback: "sa"})
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.Config{Topology: topo, TopologySpec: model.TopologySpec{Layout: &spec}, Nodes: tr.Nodes,
			Cost: model.DefaultCostModel, Policy: "window", Tau: 60, Check: true, Solver: s}
		res, err := sim.Run(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res.SolveTimes = nil
		return res
	}
	alone, shared := run(1), run(2)
	if alone.Windows < 30 {
		t.Fatalf("%d windows solved: too few to compare", alone.Windows)
	}
	if !reflect.DeepEqual(alone, shared) {
		for i := range alone.Jobs {
			if a, b := alone.Jobs[i], shared.Jobs[i]; i < len(shared.Jobs) && !reflect.DeepEqual(a, b) {
				t.Fatalf("job %s: alone from %d on %d nodes from %v, cost %d; shared from %d on %d nodes from %v, cost %d",
					a.ID, a.Start, len(a.Nodes), a.Nodes[:min(1, len(a.Nodes))], a.Cost, b.Start, len(b.Nodes), b.Nodes[:min(1, len(b.Nodes))], b.Cost)
			}
		}
		t.Fatalf("alone: %d jobs, %d windows solved, %d skipped; shared: %d, %d, %d", len(alone.Jobs), alone.Windows,
			alone.Skipped, len(shared.Jobs), shared.Windows, shared.Skipped)
	}
	t.Logf("%d jobs, %d windows solved, %d skipped", len(alone.Jobs), alone.Windows, alone.Skipped)
}
