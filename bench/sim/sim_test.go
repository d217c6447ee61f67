package sim_test

import (
	"context"
	"os"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver/csp"
)

// tiny is three jobs on a 4-node cluster (1 pod × 2 leaves × 2 nodes):
// A (t=0, 10 s, 3 nodes), B (t=1, 5 s, 2 nodes), C (t=2, 2 s, 1 node).
func tiny() *trace.Trace {
	return &trace.Trace{Jobs: []trace.Job{
		{ID: "A", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 3},
		{ID: "B", Submit: 1, Runtime: 5, Walltime: 5, Nodes: 2},
		{ID: "C", Submit: 2, Runtime: 2, Walltime: 2, Nodes: 1},
	}}
}

func config(t *testing.T, policy string) sim.Config {
	t.Helper()
	topo, err := model.NewLayout(1, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	return sim.Config{Topology: topo, Policy: policy, Tau: 5, Solver: csp.Solver{}, Check: true}
}

func waits(t *testing.T, r *sim.Result) map[string]int64 {
	t.Helper()
	w := map[string]int64{}
	for i := range r.Jobs {
		w[r.Jobs[i].ID] = r.Jobs[i].Wait()
	}
	return w
}

// TestTinyTrace pins hand-computed schedules:
//
//	fcfs:   A 0–10; B waits for A (9 s); C waits behind B (8 s).
//	easy:   C backfills at 2 (it ends at 4, before A's end at 10).
//	window: τ = 5; at t = 5 the window takes C, B (fewer nodes first) and
//	        stops at A, which waits a period and starts at 10.
func TestTinyTrace(t *testing.T) {
	cases := []struct {
		policy string
		want   map[string]int64
	}{
		{"fcfs", map[string]int64{"A": 0, "B": 9, "C": 8}},
		{"easy", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"window", map[string]int64{"A": 10, "B": 4, "C": 3}},
		// C is shorter, smaller and fits: every reordering or backfilling
		// policy starts it at once.
		{"sjf", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"saf", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"drf", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"tetris", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"pbs-fifo", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"pbs-walltime", map[string]int64{"A": 0, "B": 9, "C": 0}},
	}
	for _, c := range cases {
		r, err := sim.Run(context.Background(), tiny(), config(t, c.policy))
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		got := waits(t, r)
		for id, w := range c.want {
			if got[id] != w {
				t.Errorf("%s: job %s waited %d s, want %d (all: %v)", c.policy, id, got[id], w, got)
			}
		}
	}
}

func TestTinyMetrics(t *testing.T) {
	r, err := sim.Run(context.Background(), tiny(), config(t, "fcfs"))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summarise()
	// Waits 0, 9, 8 → 17/3; turnarounds 10, 14, 10 → 34/3; bounded
	// slowdowns max(1, 10/10), max(1, 14/10), max(1, 10/10) → 3.4/3.
	if s.Jobs != 3 || abs(s.MeanWait-17.0/3) > 1e-9 || abs(s.MeanTurnaround-34.0/3) > 1e-9 || abs(s.MeanBSLD-3.4/3) > 1e-9 {
		t.Errorf("summary %+v", s)
	}
	// Makespan 0..15; node-seconds 30 + 10 + 2 = 42 of 4 × 15.
	if s.Makespan != 15 || abs(s.Utilisation-42.0/60) > 1e-9 {
		t.Errorf("makespan %d utilisation %g", s.Makespan, s.Utilisation)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestDropsJobsLargerThanCluster(t *testing.T) {
	tr := tiny()
	tr.Jobs = append(tr.Jobs, trace.Job{ID: "huge", Submit: 3, Runtime: 1, Walltime: 1, Nodes: 5})
	r, err := sim.Run(context.Background(), tr, config(t, "window"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Dropped != 1 || len(r.Jobs) != 3 {
		t.Errorf("dropped %d, ran %d", r.Dropped, len(r.Jobs))
	}
}

func TestBadConfig(t *testing.T) {
	c := config(t, "magic")
	if _, err := sim.Run(context.Background(), tiny(), c); err == nil {
		t.Error("no error for an unknown policy")
	}
	c = config(t, "window")
	c.Tau = 0
	if _, err := sim.Run(context.Background(), tiny(), c); err == nil {
		t.Error("no error for τ = 0")
	}
}

const lanTrace = "../../../shared/data/lan2023_trace_1800_40.txt"

// TestLanPrefix runs the first 3,000 jobs of the NSA paper's trace under
// each policy; every allocation goes through model.Check, and the window
// policy is deterministic.
func TestLanPrefix(t *testing.T) {
	if _, err := os.Stat(lanTrace); err != nil {
		t.Skipf("the NSA paper's trace is not at %s (shared/ absent): %v", lanTrace, err)
	}
	tr, err := trace.Open(lanTrace, "lan", trace.Options{MaxJobs: 3000})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := model.NewLayout(25, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	var first sim.Summary
	for _, policy := range append([]string{"window", "window"}, sim.PolicyNames()...) {
		c := sim.Config{Topology: topo, Policy: policy, Tau: 60, Solver: csp.Solver{}, MaxJobs: 5, Check: true}
		r, err := sim.Run(context.Background(), tr, c)
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		s := r.Summarise()
		if policy != "window" && s.Windows != 0 {
			t.Errorf("%s solved windows", policy)
		}
		if s.Jobs != 3000 {
			t.Errorf("%s ran %d of 3000 jobs", policy, s.Jobs)
		}
		if policy == "window" {
			s2 := s
			s2.SolveMedianMS, s2.SolveP99MS = 0, 0 // timings vary
			if first.Jobs != 0 && s2 != first {
				t.Errorf("window policy not deterministic: %+v vs %+v", s2, first)
			}
			first = s2
		}
		t.Logf("%-6s mean cost %.0f (multi %.0f), wait %.0f s, bsld %.2f, util %.1f%%", policy, s.MeanCost, s.MeanMultiCost, s.MeanWait, s.MeanBSLD, 100*s.Utilisation)
	}
}

// TestOrderingPolicies pins the orderings on a trace where they differ: on
// a 4-node cluster A (4 nodes, 10 s) runs; then four jobs arrive, and at
// t = 10 the policies pick different ones first.
func TestOrderingPolicies(t *testing.T) {
	tr := &trace.Trace{Jobs: []trace.Job{
		{ID: "A", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 4},
		{ID: "long", Submit: 1, Runtime: 100, Walltime: 100, Nodes: 1},
		{ID: "wide", Submit: 2, Runtime: 20, Walltime: 20, Nodes: 4},
		{ID: "short", Submit: 3, Runtime: 5, Walltime: 5, Nodes: 2},
	}}
	first := map[string]string{ // the job that starts first at t = 10
		"fcfs": "long", "sjf": "short", "saf": "short", "drf": "long", "tetris": "wide", "pbs-walltime": "short",
	}
	for policy, want := range first {
		r, err := sim.Run(context.Background(), tr, config(t, policy))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for i := range r.Jobs {
			if r.Jobs[i].Start == 10 && got == "" {
				got = r.Jobs[i].ID
			}
		}
		if got != want {
			t.Errorf("%s: first start at t=10 is %q, want %q", policy, got, want)
		}
	}
}
