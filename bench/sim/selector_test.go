package sim_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// selectFunc is a scripted Selector.
type selectFunc func(v *sim.View) (int, sim.Strategy)

func (f selectFunc) Select(v *sim.View) (int, sim.Strategy) { return f(v) }

// oldestFitting starts the oldest waiting job that fits, placed by st.
func oldestFitting(st sim.Strategy) sim.Selector {
	return selectFunc(func(v *sim.View) (int, sim.Strategy) {
		for k, j := range v.Queue {
			if j.Nodes <= v.Idle {
				return k, st
			}
		}
		return -1, st
	})
}

// TestSelectTiny: the select policy starts what the selector names at
// once, skipping jobs that do not fit (no reservation): on the tiny trace
// C (1 node) starts at 2 beside A, B waits for A.
func TestSelectTiny(t *testing.T) {
	for _, st := range []sim.Strategy{sim.DepthFirst, sim.BreadthFirst, sim.FirstFitStrategy} {
		cfg := config(t, sim.Select)
		cfg.Selector = oldestFitting(st)
		r, err := sim.Run(context.Background(), tiny(), cfg)
		if err != nil {
			t.Fatalf("%v: %v", st, err)
		}
		want := map[string]int64{"A": 0, "B": 9, "C": 0}
		if got := waits(t, r); !equalWaits(got, want) {
			t.Errorf("%v: waits %v, want %v", st, got, want)
		}
	}
	// A selector naming a job that does not fit, or out of range, is an
	// error; so is the policy without a selector or with an allocator.
	bad := []sim.Selector{
		selectFunc(func(v *sim.View) (int, sim.Strategy) { return len(v.Queue), sim.DepthFirst }),
		selectFunc(func(v *sim.View) (int, sim.Strategy) {
			for k, j := range v.Queue {
				if j.Nodes > v.Idle {
					return k, sim.DepthFirst
				}
			}
			return 0, sim.DepthFirst
		}),
		selectFunc(func(v *sim.View) (int, sim.Strategy) { return 0, sim.Strategy(7) }),
	}
	for i, s := range bad {
		cfg := config(t, sim.Select)
		cfg.Selector = s
		if _, err := sim.Run(context.Background(), tiny(), cfg); err == nil {
			t.Errorf("bad selector %d: no error", i)
		}
	}
	cfg := config(t, sim.Select)
	if _, err := sim.Run(context.Background(), tiny(), cfg); err == nil {
		t.Error("no selector: no error")
	}
	cfg.Selector, cfg.Allocator = oldestFitting(sim.DepthFirst), "slurm"
	if _, err := sim.Run(context.Background(), tiny(), cfg); err == nil {
		t.Error("select with an allocator: no error")
	}
}

func equalWaits(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestStrategies pins the placements on a 2-pod × 2-leaf × 4-node layout
// with some nodes busy, through View.Preview: depth-first takes the
// tightest leaf that holds the job, else the tightest pod; breadth-first
// one node per leaf in turn; first-fit the lowest ids.
func TestStrategies(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4) // leaves {0-3} {4-7} | {8-11} {12-15}
	if err != nil {
		t.Fatal(err)
	}
	// Two jobs placed first-fit at 0 take nodes 0–9: leaves 0 and 1
	// are full, leaf 2 has 2 idle (10, 11), leaf 3 has 4 (12–15).
	tr := &trace.Trace{Jobs: []trace.Job{
		{ID: "big", Submit: 0, Runtime: 100, Walltime: 100, Nodes: 2},
		{ID: "big2", Submit: 0, Runtime: 100, Walltime: 100, Nodes: 8},
		{ID: "probe", Submit: 1, Runtime: 1, Walltime: 1, Nodes: 1},
	}}
	got := map[string][]int{}
	sel := selectFunc(func(v *sim.View) (int, sim.Strategy) {
		if v.Now == 0 {
			return 0, sim.FirstFitStrategy
		}
		for _, n := range []int{2, 3, 5} {
			for _, st := range []sim.Strategy{sim.DepthFirst, sim.BreadthFirst, sim.FirstFitStrategy} {
				got[st.String()+string(rune('0'+n))] = v.Preview(n, st)
			}
		}
		if !slices.Equal(v.LeafIdle, []int{0, 0, 2, 4}) || !slices.Equal(v.PodIdle, []int{0, 6}) || v.LeafSize != 4 {
			t.Errorf("leaf idle %v, pod idle %v, leaf size %d", v.LeafIdle, v.PodIdle, v.LeafSize)
		}
		return 0, sim.DepthFirst
	})
	cfg := sim.Config{Topology: topo, Policy: sim.Select, Selector: sel, Check: true}
	if _, err := sim.Run(context.Background(), tr, cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{
		"depth-first2":   {10, 11},             // the tightest leaf holding 2
		"depth-first3":   {12, 13, 14},         // only leaf 3 holds 3
		"depth-first5":   {12, 13, 14, 15, 10}, // pod 1, fullest-idle leaf first
		"breadth-first2": {10, 12},             // one per leaf in turn
		"breadth-first3": {10, 12, 11},
		"breadth-first5": {10, 12, 11, 13, 14},
		"first-fit2":     {10, 11},
		"first-fit3":     {10, 11, 12},
		"first-fit5":     {10, 11, 12, 13, 14},
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	// Depth-first never costs more than breadth-first here.
	for _, n := range []string{"3", "5"} {
		df := model.DefaultCostModel.Cost(topo, got["depth-first"+n])
		bf := model.DefaultCostModel.Cost(topo, got["breadth-first"+n])
		if df > bf {
			t.Errorf("%s nodes: depth-first costs %d > breadth-first's %d", n, df, bf)
		}
	}
}

// TestSlowdownAndNormalisedTurnaround pins the two metrics on fcfs's
// tiny schedule: A runs 10 s at once (1), B waits 9 and runs 5 (14/5), C
// waits 8 and runs 2 (10/2).
func TestSlowdownAndNormalisedTurnaround(t *testing.T) {
	r, err := sim.Run(context.Background(), tiny(), config(t, "fcfs"))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summarise()
	want := (1 + 14.0/5 + 10.0/2) / 3
	if math.Abs(s.MeanSlowdown-want) > 1e-12 || s.MeanNormTurnaround != s.MeanSlowdown {
		t.Errorf("slowdown %v, normalised turnaround %v, want %v", s.MeanSlowdown, s.MeanNormTurnaround, want)
	}
	// A job of run time 0 counts its run time as 1 s.
	tr := &trace.Trace{Jobs: []trace.Job{{ID: "z", Submit: 0, Runtime: 0, Walltime: 1, Nodes: 1}, {ID: "y", Submit: 0, Runtime: 4, Walltime: 4, Nodes: 4}}}
	r, err = sim.Run(context.Background(), tr, config(t, "fcfs"))
	if err != nil {
		t.Fatal(err)
	}
	// z starts at 0 and ends at once (0/1); y waits 0 and runs 4 (1)...
	// but y needs the 4 nodes z holds for 0 s: it starts at 0 too.
	if s := r.Summarise(); math.IsInf(s.MeanSlowdown, 0) || math.IsNaN(s.MeanSlowdown) {
		t.Errorf("slowdown with a 0 s job: %v", s.MeanSlowdown)
	}
}
