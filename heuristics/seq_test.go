package heuristics_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
)

// checkSeq solves w with Seq and holds the answer to model.Check and to an
// independent construction: the k-th selected multi-node job gets the block
// D(Σ_{l<k} n_l, n_k) of the idle sequence. It returns the objective.
func checkSeq(t *testing.T, w *model.Window, maxJobs int) int64 {
	t.Helper()
	res, err := solver.SolveWindow(context.Background(), w, heuristics.Seq{}, solver.Options{MaxJobs: maxJobs})
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Check(w, res.Allocations); err != nil {
		t.Fatal(err)
	}
	sel := model.SelectJobs(w, maxJobs)
	if len(res.Allocations) != len(sel.Multi)+len(sel.Single) {
		t.Fatalf("%d allocations for %d selected jobs", len(res.Allocations), len(sel.Multi)+len(sel.Single))
	}
	pos := 0
	var obj int64
	for k, j := range sel.Multi {
		a := res.Allocations[k]
		want := w.Block(pos, w.Jobs[j].Nodes)
		if a.Job != j || !slices.Equal(a.Nodes, want) {
			t.Fatalf("job %s: seq gave %v, block D(%d,%d) is %v", w.Jobs[j].ID, a.Nodes, pos, w.Jobs[j].Nodes, want)
		}
		pos += w.Jobs[j].Nodes
		obj += w.Cost.PairwiseCost(w.Topology, a.Nodes)
	}
	if res.Objective != obj {
		t.Fatalf("objective %d, all-pairs recomputation %d", res.Objective, obj)
	}
	wantStatus := solver.Feasible
	if len(sel.Multi) == 0 {
		wantStatus = solver.Optimal
	}
	if res.Status != wantStatus || res.HasBound() != (len(sel.Multi) == 0) {
		t.Fatalf("status %v bound %v", res.Status, res.Bound)
	}
	return res.Objective
}

// TestSeqKnown holds Seq to the recorded objectives of the shipped windows.
func TestSeqKnown(t *testing.T) {
	table, err := instances.KnownTable()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range table {
		if k.Method != "seq" {
			continue
		}
		n++
		w, err := instances.Load(k.Window)
		if err != nil {
			t.Fatal(err)
		}
		if got := checkSeq(t, w, k.MaxJobs); got != k.Objective {
			t.Errorf("%s max-jobs %d: seq objective %d, known %d", k.Window, k.MaxJobs, got, k.Objective)
		}
	}
	if n < len(instances.Names()) {
		t.Errorf("known.tsv has %d seq rows for %d windows", n, len(instances.Names()))
	}
}

// randomWindow builds a window on one of three kinds of topology, with a
// random idle set and random jobs.
func randomWindow(t *testing.T, rng *rand.Rand, kind int) *model.Window {
	t.Helper()
	var topo string
	switch kind {
	case 0:
		topo = `{"layout": {"pods": 25, "leaves_per_pod": 4, "nodes_per_leaf": 10}}`
	case 1:
		topo = fmt.Sprintf(`{"fat_tree": {"k": %d}}`, 2*(1+rng.IntN(5)))
	default:
		topo = fmt.Sprintf(`{"slurm": %q}`, instances.RandomSlurm(rng, 11))
	}
	w, err := windowjson.Parse([]byte(`{"time": 0, "topology": `+topo+`, "idle": [], "jobs": []}`), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := w.Topology.NumNodes()
	for _, id := range rng.Perm(n) {
		if rng.IntN(3) > 0 {
			w.Idle = append(w.Idle, id)
		}
	}
	slices.Sort(w.Idle)
	for j := range 1 + rng.IntN(8) {
		w.Jobs = append(w.Jobs, model.Job{ID: fmt.Sprint(j), Nodes: 1 + rng.IntN(max(1, n/3)), Walltime: 10,
			Queue: model.DefaultQueue, NWP: rng.IntN(2)})
	}
	if rng.IntN(2) == 0 {
		w.Cost.Kind = model.CostLanPaper
	}
	return w
}

// TestSeqRandom runs Seq on 600 seeded random windows of three topology
// kinds, with and without a job cap.
func TestSeqRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 600 {
		w := randomWindow(t, rng, i%3)
		checkSeq(t, w, rng.IntN(3)*2)
	}
}

func TestSeqRejectsOversizedProblem(t *testing.T) {
	w := randomWindow(t, rand.New(rand.NewPCG(1, 1)), 0)
	w.Jobs = []model.Job{{ID: "big", Nodes: len(w.Idle) + 1, Walltime: 1}}
	if _, err := (heuristics.Seq{}).Solve(context.Background(), solver.NewProblem(w, []int{0})); err == nil {
		t.Error("no error for jobs that do not fit")
	}
}

func BenchmarkSeq(b *testing.B) {
	for _, name := range []string{"paper-s3-i300.json", "fattree16-s7-i600.json"} {
		w, err := instances.Load(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := solver.SolveWindow(context.Background(), w, heuristics.Seq{}, solver.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
