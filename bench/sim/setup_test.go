package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver/csp"
)

// TestNewConfig calls NewConfig (the configuration `optsched simulate`
// builds) on traces of known cluster sizes: the derived layout is whole
// pods of 40 nodes (25×4×10 when the trace says no size), a given layout
// smaller than the log's cluster caps the nodes, the window limit drops
// to ScaleTimeLimit above ScaleNodes unless given, the cp policy searches
// up to ScaleNodes under auto, and a layout that cannot be built is a
// LayoutError that says whether it was given. The config it builds runs.
func TestNewConfig(t *testing.T) {
	base := sim.Setup{Policy: "window", Tau: 60, TimeLimit: 10 * time.Second, CPObjective: cpolicy.BSLD, CPJobs: 8, CPSearch: "auto"}
	for _, c := range []struct {
		name      string
		nodes     int
		layout    *model.LayoutSpec
		wantNodes int
		wantSpec  model.LayoutSpec
		wantLimit time.Duration
	}{
		{"lan", 0, nil, 1000, model.LayoutSpec{Pods: 25, LeavesPerPod: 4, NodesPerLeaf: 10}, 10 * time.Second},
		{"swf 100", 100, nil, 100, model.LayoutSpec{Pods: 3, LeavesPerPod: 4, NodesPerLeaf: 10}, 10 * time.Second},
		{"smaller layout", 100, &model.LayoutSpec{Pods: 1, LeavesPerPod: 1, NodesPerLeaf: 10}, 10, model.LayoutSpec{Pods: 1, LeavesPerPod: 1, NodesPerLeaf: 10}, 10 * time.Second},
		{"larger layout", 4, &model.LayoutSpec{Pods: 1, LeavesPerPod: 2, NodesPerLeaf: 4}, 4, model.LayoutSpec{Pods: 1, LeavesPerPod: 2, NodesPerLeaf: 4}, 10 * time.Second},
		{"at scale", 32768, nil, 32768, model.LayoutSpec{Pods: 820, LeavesPerPod: 4, NodesPerLeaf: 10}, sim.ScaleTimeLimit},
	} {
		s := base
		s.Layout = c.layout
		cfg, err := sim.NewConfig(&trace.Trace{Nodes: c.nodes}, s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.Nodes != c.wantNodes || *cfg.TopologySpec.Layout != c.wantSpec || cfg.Topology.NumNodes() != c.wantSpec.Pods*c.wantSpec.LeavesPerPod*c.wantSpec.NodesPerLeaf {
			t.Errorf("%s: %d nodes on %+v (%d), want %d on %+v", c.name, cfg.Nodes, *cfg.TopologySpec.Layout, cfg.Topology.NumNodes(), c.wantNodes, c.wantSpec)
		}
		if cfg.TimeLimit != c.wantLimit || !cfg.Check || !cfg.DiscardNodes || cfg.GapSolver != nil || cfg.CP != (cpolicy.Policy{}) {
			t.Errorf("%s: limit %v (want %v), check %v, discard %v, gap %v, cp %+v", c.name, cfg.TimeLimit, c.wantLimit, cfg.Check, cfg.DiscardNodes, cfg.GapSolver, cfg.CP)
		}
	}
	s := base
	s.TimeLimitSet, s.Gap = true, true
	if cfg, _ := sim.NewConfig(&trace.Trace{Nodes: 32768}, s); cfg.TimeLimit != 10*time.Second || cfg.GapSolver != (csp.Solver{}) {
		t.Errorf("given limit at scale: %v, gap solver %v", cfg.TimeLimit, cfg.GapSolver)
	}
	for _, c := range []struct {
		nodes    int
		search   string
		set      bool
		noSearch bool
		limit    time.Duration
	}{{100, "auto", false, false, 0}, {32768, "auto", false, true, 0}, {32768, "on", true, false, 20 * time.Millisecond}, {100, "off", false, true, 0}} {
		s := base
		s.Policy, s.CPSearch, s.TimeLimitSet, s.TimeLimit = sim.CP, c.search, c.set, 20*time.Millisecond
		cfg, err := sim.NewConfig(&trace.Trace{Nodes: c.nodes}, s)
		want := cpolicy.Policy{Objective: cpolicy.BSLD, K: 8, NoSearch: c.noSearch, Limit: c.limit}
		if err != nil || cfg.CP != want {
			t.Errorf("cp on %d nodes, search %s: %+v %v, want %+v", c.nodes, c.search, cfg.CP, err, want)
		}
	}
	for _, given := range []bool{false, true} {
		s := base
		if given {
			s.Layout = &model.LayoutSpec{Pods: 0, LeavesPerPod: 4, NodesPerLeaf: 10}
		}
		_, err := sim.NewConfig(&trace.Trace{Nodes: model.MaxGeneratedNodes + 1}, s)
		var le *sim.LayoutError
		if !errors.As(err, &le) || le.Given != given || !errors.Is(err, model.ErrTopology) {
			t.Errorf("bad layout (given %v): %v", given, err)
		}
	}

	// The config runs: three one-node jobs on a 4-node layout under fcfs
	// all start at once.
	tr := &trace.Trace{Nodes: 4, Jobs: []trace.Job{
		{ID: "1", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 1},
		{ID: "2", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 1},
		{ID: "3", Submit: 5, Runtime: 10, Walltime: 10, Nodes: 1},
	}}
	s = base
	s.Policy, s.Layout = "fcfs", &model.LayoutSpec{Pods: 1, LeavesPerPod: 1, NodesPerLeaf: 4}
	cfg, err := sim.NewConfig(tr, s)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum := res.Summarise(); sum.Jobs != 3 || sum.MeanWait != 0 || sum.Makespan != 15 {
		t.Errorf("fcfs run: %d jobs, mean wait %v, makespan %d; want 3, 0, 15", sum.Jobs, sum.MeanWait, sum.Makespan)
	}
}
