package heuristics_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/solver"
)

// TestMishraCost checks MishraCost against hand computations on the
// 2-pod × 2-leaf × 4-node layout, with a communication-intensive running
// job on n0 and another running job on n4. A communication-intensive job on
// n1 n2 | n5 | n8 (leaves 0, 0, 1, 2) sees comm = 3, 1, 1 on leaves 0, 1, 2,
// so c = 3/4, 1/4, 1/4, and its pairs cost
//
//	(0,1) same leaf:        2·(1 + 3/4)                   = 3.5
//	(2,3) leaves 1, 2:      6·(1 + 1/4 + 1/4 + 2/16)      = 9.75
//	(0,2) (1,2) leaves 0, 1: 4·(1 + 3/4 + 1/4 + 4/16)     = 9
//	(1,3) (0,3) leaves 0, 2: 6·(1 + 3/4 + 1/4 + 4/16)     = 13.5
//
// so rd = max(3.5, 9.75) + max(9, 13.5) = 23.25, rhvd the same, and
// binomial = 3.5 + max(9, 13.5) = 17. The same nodes for a compute job
// (comm = 1, 0, 0): 2.5, 6, 5.25, 7.875, so rd = 6 + 7.875 = 13.875 and
// binomial = 2.5 + 7.875 = 10.375.
func TestMishraCost(t *testing.T) {
	w := testWindow(t, layout(2, 2, 4), "n[1-3,5-15]",
		`[{"id": "r1", "nodes": "n0", "end": 9, "comm": true}, {"id": "r2", "nodes": "n4", "end": 9}]`, `[]`)
	ids := func(list string) []int {
		names, err := hostlist.Expand(list)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, n := range names {
			id, _ := w.Topology.Lookup(n)
			out = append(out, id)
		}
		return out
	}
	cases := []struct {
		comm    bool
		pattern string
		nodes   string
		want    float64
	}{
		{true, "rd", "n[1-2,5,8]", 23.25},
		{true, "", "n[1-2,5,8]", 23.25},
		{true, "rhvd", "n[1-2,5,8]", 23.25},
		{true, "binomial", "n[1-2,5,8]", 17},
		{true, "rd", "n[8,5,2,1]", 23.25}, // ranks follow the ids, not the list
		{false, "rd", "n[1-2,5,8]", 13.875},
		{false, "binomial", "n[1-2,5,8]", 10.375},
		// Three ranks: rd pairs (0,1) then (0,2); comm = 3, 1 on leaves 0, 1.
		{true, "rd", "n[1-2,5]", 3.5 + 9},
		{true, "rd", "n1", 0},
	}
	for _, c := range cases {
		got, err := heuristics.MishraCost(w, model.Job{ID: "j", Comm: c.comm, Pattern: c.pattern}, ids(c.nodes))
		if err != nil || got != c.want {
			t.Errorf("comm %v pattern %q on %s: cost %v, %v; want %v", c.comm, c.pattern, c.nodes, got, err, c.want)
		}
	}
	if _, err := heuristics.MishraCost(w, model.Job{ID: "j", Pattern: "ring"}, ids("n[1-2]")); err == nil {
		t.Error("no error for an unknown pattern")
	}
	if _, err := heuristics.MishraCost(w, model.Job{ID: "j"}, []int{1, 99}); err == nil {
		t.Error("no error for a node id outside the topology")
	}
	// Two trees meet at a virtual switch one level above them: 2·2 hops.
	f := testWindow(t, `{"slurm": "SwitchName=s0 Nodes=h[0-3]\nSwitchName=s1 Nodes=h[4-7]"}`, "h[0-7]", "", `[]`)
	if got, err := heuristics.MishraCost(f, model.Job{ID: "j"}, []int{0, 4}); err != nil || got != 4 {
		t.Errorf("pair across a forest: cost %v, %v; want 4", got, err)
	}
}

// TestMishraRules pins the ranking and the shares of the three allocators
// on hand-built windows.
func TestMishraRules(t *testing.T) {
	// Leaves b (4 nodes, h0 busy: ratio 1/4), x (4 nodes, all idle: 0) and
	// a (8 nodes, h8-9 busy: 2/8) under one switch; a job of 9 needs all
	// three. A communication-intensive job takes x first, then of b and a
	// (equal ratios) the one that holds the 5 nodes left: a. A compute job
	// takes the highest ratios first: b (lower index than a), then a.
	three := `{"slurm": "SwitchName=b Nodes=h[0-3]\nSwitchName=x Nodes=h[4-7]\nSwitchName=a Nodes=h[8-15]\nSwitchName=top Switches=b,x,a"}`
	// Leaves a (h0-4 busy: 5/8), b (h8 busy: 1/8) and c (h16-20 busy with
	// a communication-intensive job: 5/5 + 5/8). Balanced gives b 4, a 2,
	// c 2 and then tops up the last visited leaf, c, with its last node.
	backtrack := `{"slurm": "SwitchName=a Nodes=h[0-7]\nSwitchName=b Nodes=h[8-15]\nSwitchName=c Nodes=h[16-23]\nSwitchName=top Switches=a,b,c"}`
	// 2 pods × 2 leaves × 8: leaf0 has 5 idle (ratio 3/8), leaf1 5 idle
	// (3 busy communication-intensive: 3/3 + 3/8); pod1 1 idle.
	pods := layout(2, 2, 8)
	podsRunning := `[{"id": "r1", "nodes": "n[0-2]", "end": 9}, {"id": "r2", "nodes": "n[8-10]", "end": 9, "comm": true}]`
	cases := []struct {
		name, topo, idle, running, jobs string
		want                            map[string]string // allocator -> hostlist
	}{
		{"ratio, then sufficiency", three, "h[1-7,10-15]", "", `[{"id": "c", "nodes": 9, "walltime": 9}]`, map[string]string{
			"mishra-greedy":   "h[4-7,10-14]",
			"mishra-balanced": "h[1,4-7,10-13]",
		}},
		{"compute job: highest ratio first", three, "h[1-7,10-15]", "", `[{"id": "c", "nodes": 9, "walltime": 9, "comm": false}]`, map[string]string{
			"mishra-greedy": "h[1-3,10-15]",
		}},
		{"balanced tops up the last visited leaf", backtrack, "h[5-7,9-15,21-23]", `[{"id": "r", "nodes": "h[16-20]", "end": 9, "comm": true}]`,
			`[{"id": "c", "nodes": 9, "walltime": 9}]`, map[string]string{
				"mishra-greedy":   "h[5-6,9-15]",
				"mishra-balanced": "h[5-6,9-12,21-23]",
			}},
		// The brief's case: 6 nodes on two idle leaves of 4 are 4 + 2
		// (the patch's halving would give 3 + 3).
		{"powers of two", layout(2, 2, 4), "n[0-8]", "", `[{"id": "c", "nodes": 6, "walltime": 9}]`, map[string]string{
			"mishra-greedy":   "n[0-5]",
			"mishra-balanced": "n[0-5]",
			"mishra-adaptive": "n[0-5]",
		}},
		// Greedy 5 + 1, balanced 4 + 2; under rd the balanced allocation
		// costs 3.25 + 3 + 9.625 = 15.875 and the greedy one 9.625 + 3.25 +
		// 9.625 = 22.5, so adaptive keeps balanced.
		{"greedy against balanced", pods, "n[3-7,11-16]", podsRunning, `[{"id": "c", "nodes": 6, "walltime": 9}]`, map[string]string{
			"mishra-greedy":   "n[3-7,11]",
			"mishra-balanced": "n[3-6,11-12]",
			"mishra-adaptive": "n[3-6,11-12]",
		}},
		{"greedy against balanced, compute job", pods, "n[3-7,11-16]", podsRunning, `[{"id": "c", "nodes": 6, "walltime": 9, "comm": false}]`, map[string]string{
			"mishra-greedy":   "n[3,11-15]",
			"mishra-balanced": "n[3-4,11-14]",
		}},
		// A job that fits on one leaf goes to the best-fit leaf whatever
		// the ratios (the top-switch rule the patch keeps from Slurm).
		{"one leaf", pods, "n[3-7,11-16]", podsRunning, `[{"id": "c", "nodes": 5, "walltime": 9}]`, map[string]string{
			"mishra-greedy":   "n[3-7]",
			"mishra-balanced": "n[3-7]",
			"mishra-adaptive": "n[3-7]",
		}},
		// The first job's nodes count as communication-intensive busy
		// nodes for the second: after c takes n[3-7,11], no leaf or pod
		// holds d's 5 nodes, and of leaf1 (4 idle, ratio 4/4 + 4/8) and
		// leaf2 (1 idle, ratio 0/7 + 7/8) d takes leaf2 first.
		{"one after another", pods, "n[3-7,11-16]", podsRunning,
			`[{"id": "c", "nodes": 6, "walltime": 9}, {"id": "d", "nodes": 5, "walltime": 9}]`, map[string]string{
				"mishra-greedy": "n[3-7,11] n[12-16]",
			}},
	}
	solvers := map[string]solver.Solver{}
	for _, s := range treeAllocators[1:] {
		solvers[s.Name()] = s
	}
	for _, c := range cases {
		w := testWindow(t, c.topo, c.idle, c.running, c.jobs)
		for name, want := range c.want {
			got := placed(t, w, solvers[name])
			if joined := joinSpace(got); joined != want {
				t.Errorf("%s: %s placed %s, want %s", c.name, name, joined, want)
			}
		}
	}
	// The costs quoted for "greedy against balanced".
	w := testWindow(t, pods, "n[3-7,11-16]", podsRunning, `[{"id": "c", "nodes": 6, "walltime": 9}]`)
	for _, c := range []struct {
		nodes []int
		want  float64
	}{{[]int{3, 4, 5, 6, 7, 11}, 22.5}, {[]int{3, 4, 5, 6, 11, 12}, 15.875}} {
		if got, err := heuristics.MishraCost(w, w.Jobs[0], c.nodes); err != nil || got != c.want {
			t.Errorf("cost of %v: %v, %v; want %v", c.nodes, got, err, c.want)
		}
	}
}

func joinSpace(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestMishraAdaptivePicksCheaper checks, job by job on random windows, that
// the adaptive allocation is the greedy or the balanced one, whichever
// MishraCost prices lower (balanced on a tie).
func TestMishraAdaptivePicksCheaper(t *testing.T) {
	ws := treeWindows(t)
	rng := rand.New(rand.NewPCG(7, 8))
	var greedyWins, balancedWins, same int
	for _, w := range ws {
		sel := model.SelectJobs(w, 0)
		for _, j := range sel.Multi {
			if rng.IntN(2) == 0 {
				continue
			}
			p := solver.NewProblem(w, []int{j})
			var nodes [3][]int
			for k, s := range []solver.Solver{heuristics.MishraGreedy{}, heuristics.MishraBalanced{}, heuristics.MishraAdaptive{}} {
				res, err := s.Solve(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				nodes[k] = res.Allocations[0].Nodes
			}
			cg, err1 := heuristics.MishraCost(w, w.Jobs[j], nodes[0])
			cb, err2 := heuristics.MishraCost(w, w.Jobs[j], nodes[1])
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			want := nodes[1]
			switch {
			case slices.Equal(nodes[0], nodes[1]):
				same++
			case cb <= cg:
				balancedWins++
			default:
				want = nodes[0]
				greedyWins++
			}
			if !slices.Equal(nodes[2], want) {
				t.Fatalf("job %s: adaptive chose %v; greedy %v costs %v, balanced %v costs %v",
					w.Jobs[j].ID, nodes[2], nodes[0], cg, nodes[1], cb)
			}
		}
	}
	t.Logf("adaptive: %d jobs where greedy and balanced agree, balanced cheaper %d, greedy cheaper %d", same, balancedWins, greedyWins)
	if balancedWins == 0 || greedyWins == 0 {
		t.Errorf("the random windows never exercise one side of the choice (balanced %d, greedy %d)", balancedWins, greedyWins)
	}
}

func TestMishraRejectsUnknownPattern(t *testing.T) {
	w := testWindow(t, layout(1, 2, 4), "n[0-7]", "", `[{"id": "c", "nodes": 6, "walltime": 9}]`)
	w.Jobs[0].Pattern = "ring"
	if _, err := (heuristics.MishraAdaptive{}).Solve(context.Background(), solver.NewProblem(w, []int{0})); err == nil {
		t.Error("mishra-adaptive: no error for an unknown pattern")
	}
}

func BenchmarkMishraGreedy(b *testing.B)   { benchmarkTree(b, heuristics.MishraGreedy{}) }
func BenchmarkMishraBalanced(b *testing.B) { benchmarkTree(b, heuristics.MishraBalanced{}) }
func BenchmarkMishraAdaptive(b *testing.B) { benchmarkTree(b, heuristics.MishraAdaptive{}) }
