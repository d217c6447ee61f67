package cpbnb_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/cpbnb"
	"github.com/optsched/optsched/solver/sat"
)

// The brute-force cross-check is TestBnBEqualsBruteForce in solver/sat,
// beside the brute force it shares with the SAT tests.

func listSchedulers() []solver.Scheduler {
	return []solver.Scheduler{heuristics.PBSWalltime(), heuristics.PBSFifo()}
}

// twoNodes: n0 and n1 have the same capacities but not the same state. A
// running job holds both GPUs of each until 300 s, and r1 also two of
// n1's four cores until 6000 s. Job x (one core, no GPU, long) can start
// at 0 on either node; job y (four cores and a GPU) can start at 300 only
// on a node x left alone. The optimum starts x at 0 on n1 and y at 300 on
// n0: Eq. (2) = 0/3600 + 300/3600.
const twoNodes = `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}},
 "idle": "",
 "running": [{"id": "g0", "nodes": "n0", "end": 300, "select": "1:ncpus=0:ngpus=2", "units": {"n0": 1}},
             {"id": "g1", "nodes": "n1", "end": 300, "select": "1:ncpus=0:ngpus=2", "units": {"n1": 1}},
             {"id": "r1", "nodes": "n1", "end": 6000, "select": "1:ncpus=2", "units": {"n1": 1}}],
 "queues": {"q": {"expected_wait": 3600}},
 "jobs": [{"id": "x", "nodes": 1, "walltime": 60000, "submit": 0, "queue": "q", "select": "1:ncpus=1"},
          {"id": "y", "nodes": 1, "walltime": 600, "submit": 0, "queue": "q", "select": "1:ncpus=4:ngpus=1"}],
 "node_resources": {"default": {"ncpus": 4, "ngpus": 2}}}`

// TestNodesOfOneCapacityNotExchangeable: nodes are exchangeable only when
// their state from the branching slot on is the same, not merely their
// capacities (merging n0 and n1 into one class puts x on n0 and delays y).
func TestNodesOfOneCapacityNotExchangeable(t *testing.T) {
	w, err := windowjson.Parse([]byte(twoNodes), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := solver.SolveWindow(context.Background(), w, cpbnb.Solver{}, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := 300.0 / 3600; res.Status != solver.Optimal || math.Abs(res.Objective-want) > 1e-12 {
		t.Fatalf("%s %.6g, want optimal %.6g: %+v", res.Status, res.Objective, want, res.Allocations)
	}
	for _, a := range res.Allocations {
		if w.Jobs[a.Job].ID == "x" && (len(a.Nodes) != 1 || a.Nodes[0] != 1) {
			t.Errorf("x on %v, want n1", a.Nodes)
		}
	}
}

// TestAgreesWithSAT: on Eurora-like windows of 4–7 waiting jobs, whenever
// both exact schedulers prove an optimum (bnb within 2 s, sat 5 s), the optima agree; at
// least half the windows are compared.
func TestAgreesWithSAT(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	compared, total := 0, 0
	for seed := range uint64(12) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: 100 + seed, Jobs: 4 + int(seed%4)})
		if err != nil {
			t.Fatal(err)
		}
		total++
		b, err := solver.SolveWindow(context.Background(), w, cpbnb.Solver{Initial: listSchedulers()}, solver.Options{TimeLimit: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		s, err := solver.SolveWindow(context.Background(), w, sat.Solver{Initial: listSchedulers()}, solver.Options{TimeLimit: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != solver.Optimal || s.Status != solver.Optimal {
			t.Logf("seed %d: bnb %s, sat %s", seed, b.Status, s.Status)
			continue
		}
		compared++
		if math.Abs(b.Objective-s.Objective) > 1e-9*max(1, s.Objective) {
			t.Errorf("seed %d: bnb optimum %.9g, sat optimum %.9g", seed, b.Objective, s.Objective)
		}
	}
	if compared < total/2 {
		t.Errorf("only %d of %d windows proven by both", compared, total)
	}
	t.Logf("%d of %d windows proven by both, optima equal", compared, total)
}

// TestTinyTimeLimit: a 1 µs limit still returns a valid status and a
// checked answer.
func TestTinyTimeLimit(t *testing.T) {
	w, err := instances.Eurora(instances.EuroraConfig{Seed: 1, Jobs: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []cpbnb.Solver{{Initial: listSchedulers()}, {}} {
		res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{TimeLimit: time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		switch res.Status {
		case solver.Unknown:
			if len(res.Allocations) != 0 || len(res.Deferred) != len(w.Jobs) {
				t.Errorf("unknown with %d allocations, %d deferred", len(res.Allocations), len(res.Deferred))
			}
		case solver.Feasible, solver.Fallback:
			if res.Bound > res.Objective {
				t.Errorf("bound %.6g above objective %.6g", res.Bound, res.Objective)
			}
		default:
			t.Errorf("status %s", res.Status)
		}
	}
}
