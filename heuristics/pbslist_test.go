package heuristics_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
)

// TestPBSListRandom runs both list schedulers on seeded random small
// windows and Eurora-like windows through solver.SolveWindow, which
// checks every schedule with model.Check, the grid and the objective.
func TestPBSListRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(4), 1+rng.IntN(6), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []heuristics.PBSList{heuristics.PBSFifo(), heuristics.PBSWalltime(), {Depth: 0}} {
			for _, g := range []int64{1, 10, 30} {
				res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{Granularity: g})
				if err != nil {
					t.Fatalf("window %d, %s, grid %d: %v", i, s.Name(), g, err)
				}
				if res.Status != solver.Feasible {
					t.Fatalf("window %d: status %s", i, res.Status)
				}
			}
		}
	}
	for seed := range uint64(10) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 40})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []heuristics.PBSList{heuristics.PBSFifo(), heuristics.PBSWalltime()} {
			res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{})
			if err != nil {
				t.Fatalf("eurora %d, %s: %v", seed, s.Name(), err)
			}
			if len(res.Allocations) != len(w.Jobs) {
				t.Errorf("eurora %d, %s: %d of %d jobs scheduled (%v)", seed, s.Name(), len(res.Allocations), len(w.Jobs), res.Deferred)
			}
		}
	}
}

// TestPBSListOrder: on one free 4-core node, a long 4-core job submitted
// first and two short ones. FIFO runs the long job first; walltime order
// runs the short ones first; with depth 0, FIFO lets no later job start
// before an earlier one.
func TestPBSListOrder(t *testing.T) {
	doc := `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}}, "idle": "n0",
	 "running": [{"id": "r", "nodes": "n1", "end": 1000}],
	 "queues": {"q": {"expected_wait": 100}},
	 "jobs": [{"id": "long", "nodes": 1, "walltime": 300, "submit": 0, "queue": "q", "select": "1:ncpus=4"},
	          {"id": "short1", "nodes": 1, "walltime": 100, "submit": 0, "queue": "q", "select": "1:ncpus=2"},
	          {"id": "short2", "nodes": 1, "walltime": 100, "submit": 0, "queue": "q", "select": "1:ncpus=2"},
	          {"id": "tiny", "nodes": 1, "walltime": 50, "submit": 0, "queue": "q", "select": "1:ncpus=5"}],
	 "node_resources": {"default": {"ncpus": 4}}}`
	w, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	starts := func(s heuristics.PBSList) map[string]int64 {
		res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{Granularity: 1, TimeLimit: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, a := range res.Allocations {
			out[w.Jobs[a.Job].ID] = a.Start
		}
		if len(res.Deferred) != 1 || w.Jobs[res.Deferred[0].Job].ID != "tiny" {
			t.Errorf("%s: deferred %v, want tiny (5 cores on 4-core nodes)", s.Name(), res.Deferred)
		}
		return out
	}
	if got := starts(heuristics.PBSFifo()); got["long"] != 0 || got["short1"] != 300 || got["short2"] != 300 {
		t.Errorf("pbs-fifo starts %v", got)
	}
	if got := starts(heuristics.PBSWalltime()); got["short1"] != 0 || got["short2"] != 0 || got["long"] != 100 {
		t.Errorf("pbs-walltime starts %v", got)
	}
}
