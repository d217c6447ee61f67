package sim_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// pickFunc is a scripted HeadChooser.
type pickFunc func(now int64, idle, nodes int, q []sim.QueuedJob) int

func (f pickFunc) ChooseHead(now int64, idle, nodes int, q []sim.QueuedJob) int {
	return f(now, idle, nodes, q)
}

// TestLearnedHeadWaits: the chosen head keeps its place until it fits and
// nothing starts before it (no backfilling): on the tiny trace B is
// chosen at 1 and waits for A; C, which fits at 2, waits behind it.
func TestLearnedHeadWaits(t *testing.T) {
	cfg := config(t, sim.Learned)
	cfg.Chooser = pickFunc(func(_ int64, _, _ int, q []sim.QueuedJob) int { return 0 })
	r, err := sim.Run(context.Background(), tiny(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"A": 0, "B": 9, "C": 8}
	got := waits(t, r)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("job %s waited %d s, want %d (all: %v)", id, got[id], w, got)
		}
	}
	// A chooser answering out of range is an error, not a panic.
	cfg.Chooser = pickFunc(func(_ int64, _, _ int, q []sim.QueuedJob) int { return len(q) })
	if _, err := sim.Run(context.Background(), tiny(), cfg); err == nil {
		t.Error("an out-of-range choice was accepted")
	}
	cfg.Chooser = nil
	if _, err := sim.Run(context.Background(), tiny(), cfg); err == nil {
		t.Error("the learned policy ran without a chooser")
	}
}

// TestLearnedRandomChecked: a chooser picking at random runs a loaded
// random trace to the end with every allocation through model.Check
// (Config.Check), every job started once, never before its submit time.
func TestLearnedRandomChecked(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	tr := &trace.Trace{}
	var at int64
	for i := range 300 {
		at += int64(rng.IntN(20))
		run := int64(1 + rng.IntN(200))
		tr.Jobs = append(tr.Jobs, trace.Job{ID: strconv.Itoa(i), Submit: at, Runtime: run, Walltime: run + int64(rng.IntN(100)), Nodes: 1 + rng.IntN(8)})
	}
	topo, err := model.NewLayout(1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Topology: topo, Policy: sim.Learned, Check: true,
		Chooser: pickFunc(func(_ int64, _, _ int, q []sim.QueuedJob) int { return rng.IntN(len(q)) })}
	r, err := sim.Run(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Jobs) != len(tr.Jobs) {
		t.Fatalf("%d of %d jobs ran", len(r.Jobs), len(tr.Jobs))
	}
	for _, j := range r.Jobs {
		if j.Start < j.Submit {
			t.Fatalf("job %s starts at %d before its submit %d", j.ID, j.Start, j.Submit)
		}
	}
}
