package heuristics_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
)

// treeAllocators are the allocators of slurm.go and mishra.go.
var treeAllocators = []solver.Solver{
	heuristics.Slurm{}, heuristics.MishraGreedy{}, heuristics.MishraBalanced{}, heuristics.MishraAdaptive{},
}

// checkTree solves w with s through solver.SolveWindow (which runs
// model.Check itself) and holds the answer to model.Check again, to the
// result contract of a heuristic and to the rule every tree allocator
// shares: a job's nodes lie below the lowest-level switch that held the
// job's node count of idle nodes when the job was placed.
func checkTree(t *testing.T, w *model.Window, s solver.Solver, maxJobs int) *solver.WindowResult {
	t.Helper()
	res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{MaxJobs: maxJobs})
	if err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
	if err := model.Check(w, res.Allocations); err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
	sel := model.SelectJobs(w, maxJobs)
	if len(res.Allocations) != len(sel.Multi)+len(sel.Single) {
		t.Fatalf("%s: %d allocations for %d selected jobs", s.Name(), len(res.Allocations), len(sel.Multi)+len(sel.Single))
	}
	if len(sel.Multi) > 0 {
		if res.Status != solver.Feasible || res.HasBound() || res.Encoding != "tree" || res.Solver != s.Name() {
			t.Fatalf("%s: status %v bound %v encoding %q solver %q", s.Name(), res.Status, res.Bound, res.Encoding, res.Solver)
		}
	}
	idle := slices.Clone(w.Idle)
	var obj int64
	for k, j := range sel.Multi {
		a := res.Allocations[k]
		if a.Job != j || a.Start != w.Time {
			t.Fatalf("%s: allocation %d is job %d at %d, want job %d at %d", s.Name(), k, a.Job, a.Start, j, w.Time)
		}
		if !slices.IsSorted(a.Nodes) {
			t.Fatalf("%s: job %s nodes %v not in increasing order", s.Name(), w.Jobs[j].ID, a.Nodes)
		}
		if got, want := commonLevel(w.Topology, a.Nodes), lowestHolding(w.Topology, idle, len(a.Nodes)); got != want {
			t.Fatalf("%s: job %s of %d nodes spans a level-%d switch; the lowest switch holding it is at level %d (nodes %v, idle %v)",
				s.Name(), w.Jobs[j].ID, len(a.Nodes), got, want, a.Nodes, idle)
		}
		idle = slices.DeleteFunc(idle, func(id int) bool { return slices.Contains(a.Nodes, id) })
		obj += w.Cost.PairwiseCost(w.Topology, a.Nodes)
	}
	if res.Objective != obj {
		t.Fatalf("%s: objective %d, all-pairs recomputation %d", s.Name(), res.Objective, obj)
	}
	return res
}

// commonLevel returns the level of the lowest switch above all of nodes,
// one above the tallest tree when they are in different trees.
func commonLevel(topo *model.Topology, nodes []int) int {
	for _, s := range topo.Ancestors(nodes[0]) {
		all := true
		for _, id := range nodes[1:] {
			if !slices.Contains(topo.Ancestors(id), s) {
				all = false
				break
			}
		}
		if all {
			return topo.Switch(int(s)).Level
		}
	}
	return topo.Height() + 1
}

// lowestHolding returns the lowest level of a switch with at least n of
// the idle nodes below it, one above the tallest tree when there is none.
func lowestHolding(topo *model.Topology, idle []int, n int) int {
	cnt := make([]int, topo.NumSwitches())
	for _, id := range idle {
		for _, s := range topo.Ancestors(id) {
			cnt[s]++
		}
	}
	best := topo.Height() + 1
	for s, c := range cnt {
		if c >= n {
			best = min(best, topo.Switch(s).Level)
		}
	}
	return best
}

// decorate gives w's jobs random comm flags and patterns, and turns some of
// its busy nodes into running jobs, some communication-intensive, so that
// Mishra's allocators see contended leaves.
func decorate(rng *rand.Rand, w *model.Window) {
	patterns := []string{"", model.PatternRD, model.PatternRHVD, model.PatternBinomial}
	for i := range w.Jobs {
		w.Jobs[i].Comm = rng.IntN(3) > 0
		w.Jobs[i].Pattern = patterns[rng.IntN(len(patterns))]
	}
	if len(w.Running) > 0 {
		for i := range w.Running {
			w.Running[i].Comm = rng.IntN(2) == 0
		}
		return
	}
	var r *model.RunningJob
	for id := range w.Topology.NumNodes() {
		if w.IsIdle(id) || rng.IntN(4) == 0 {
			continue
		}
		if r == nil || rng.IntN(5) == 0 {
			w.Running = append(w.Running, model.RunningJob{ID: fmt.Sprint("r", len(w.Running)), End: w.Time + 100, Comm: rng.IntN(2) == 0})
			r = &w.Running[len(w.Running)-1]
		}
		r.Nodes = append(r.Nodes, id)
	}
}

// treeWindows returns the seeded random windows of the property tests:
// instances.RandomSmall over the three topology kinds, larger windows of
// randomWindow (seq_test.go), and paper-layout windows of instances.Generate,
// all decorated with comm flags and patterns.
func treeWindows(t *testing.T) []*model.Window {
	t.Helper()
	rng := rand.New(rand.NewPCG(41, 42))
	var ws []*model.Window
	for i := range 480 {
		ws = append(ws, instances.RandomSmall(rng, i%instances.NumKinds, 40, 6))
	}
	for i := range 60 {
		ws = append(ws, randomWindow(t, rng, i%3))
	}
	for i := range 40 {
		cfg := instances.PaperGenConfig()
		cfg.Seed = uint64(1000 + i)
		cfg.Idle = 50 + rng.IntN(951)
		cfg.Jobs = 3 + rng.IntN(10)
		cfg.MaxNWP = rng.IntN(3)
		w, err := instances.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		decorate(rng, w)
	}
	return ws
}

// TestTreeAllocatorsRandom runs every tree allocator on 580 seeded random
// windows, with and without a job cap.
func TestTreeAllocatorsRandom(t *testing.T) {
	ws := treeWindows(t)
	if len(ws) < 500 {
		t.Fatalf("only %d windows", len(ws))
	}
	for i, w := range ws {
		for _, s := range treeAllocators {
			checkTree(t, w, s, []int{0, 5, 2}[i%3])
		}
	}
}

// TestTreeAllocatorsDeterministic solves windows twice, and once more after
// a JSON round trip, and wants the same allocations each time.
func TestTreeAllocatorsDeterministic(t *testing.T) {
	ws := treeWindows(t)
	for i, w := range ws {
		if i%7 != 0 {
			continue
		}
		data, err := windowjson.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		w2, err := windowjson.Parse(data, windowjson.Options{})
		if err != nil {
			t.Fatalf("window %d does not round-trip: %v", i, err)
		}
		for _, s := range treeAllocators {
			var got [3][]model.Allocation
			for k, win := range []*model.Window{w, w, w2} {
				res, err := solver.SolveWindow(context.Background(), win, s, solver.Options{})
				if err != nil {
					t.Fatal(err)
				}
				got[k] = res.Allocations
			}
			if !reflect.DeepEqual(got[0], got[1]) || !reflect.DeepEqual(got[0], got[2]) {
				t.Fatalf("%s on window %d: allocations differ between runs:\n%v\n%v\n%v", s.Name(), i, got[0], got[1], got[2])
			}
		}
	}
}

func TestTreeAllocatorsRejectOversizedProblem(t *testing.T) {
	w := randomWindow(t, rand.New(rand.NewPCG(1, 1)), 0)
	w.Jobs = []model.Job{{ID: "big", Nodes: len(w.Idle) + 1, Walltime: 1}}
	for _, s := range treeAllocators {
		if _, err := s.Solve(context.Background(), solver.NewProblem(w, []int{0})); err == nil {
			t.Errorf("%s: no error for jobs that do not fit", s.Name())
		}
	}
}

// testWindow parses a window on topo (the JSON of a topology) with the
// given idle hostlist, running jobs and waiting jobs (JSON lists).
func testWindow(t *testing.T, topo, idle, running, jobs string) *model.Window {
	t.Helper()
	if running == "" {
		running = "[]"
	}
	doc := fmt.Sprintf(`{"time": 0, "topology": %s, "idle": %q, "running": %s, "jobs": %s}`, topo, idle, running, jobs)
	w, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	return w
}

func layout(pods, leaves, nodes int) string {
	return fmt.Sprintf(`{"layout": {"pods": %d, "leaves_per_pod": %d, "nodes_per_leaf": %d}}`, pods, leaves, nodes)
}

// placed solves all of w's jobs, in window order, with s and returns each
// job's node list as a hostlist.
func placed(t *testing.T, w *model.Window, s solver.Solver) []string {
	t.Helper()
	jobs := make([]int, len(w.Jobs))
	for i := range jobs {
		jobs[i] = i
	}
	res, err := s.Solve(context.Background(), solver.NewProblem(w, jobs))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Check(w, res.Allocations); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range res.Allocations {
		out = append(out, hostlist.Compress(w.NodeNames(a.Nodes)))
	}
	return out
}

// TestSlurmRules pins each of Slurm's rules on hand-built windows. The
// layouts name leaf l's nodes n[l·N … l·N+N-1] for N nodes per leaf.
func TestSlurmRules(t *testing.T) {
	twoRoots := `{"slurm": "SwitchName=s0 Nodes=h[0-3]\nSwitchName=s1 Nodes=h[4-7]"}`
	cases := []struct {
		name, topo, idle, jobs string
		want                   []string
	}{
		// Rule 1 at the leaf level: the leaf with exactly 3 idle nodes, not
		// the one with 4.
		{"best-fit leaf", layout(2, 2, 4), "n[0-3,5-7]", `[{"id": "a", "nodes": 3, "walltime": 9}]`, []string{"n[5-7]"}},
		{"best-fit leaf in the other pod", layout(2, 2, 4), "n[0-3,9-11]", `[{"id": "a", "nodes": 3, "walltime": 9}]`, []string{"n[9-11]"}},
		{"equal leaves: lower index", layout(2, 2, 4), "n[1-3,5-7]", `[{"id": "a", "nodes": 3, "walltime": 9}]`, []string{"n[1-3]"}},
		// Rule 1 at the pod level: pod1 holds 6 exactly, pod0 holds 7.
		{"best-fit pod", layout(2, 2, 4), "n[0-3,5-7,8-11,14-15]", `[{"id": "a", "nodes": 6, "walltime": 9}]`, []string{"n[8-11,14-15]"}},
		// One whole leaf and 2 from its sibling, not from the leaf of the
		// other pod that holds exactly 2.
		{"stay in the pod", layout(2, 2, 4), "n[0-3,5-7,8-9]", `[{"id": "a", "nodes": 6, "walltime": 9}]`, []string{"n[0-3,5-6]"}},
		// No pod holds 7: the largest leaf of the largest pod first, then
		// its sibling (closeness), then the smallest leaf that holds the
		// rest (n[14-15] over n[8-10]).
		{"closeness, then best fit", layout(2, 2, 4), "n[0-3,7,8-10,14-15]", `[{"id": "a", "nodes": 7, "walltime": 9}]`, []string{"n[0-3,7,14-15]"}},
		// Pod0 gives all 6; of the 3 left, no leaf holds 3, but pod2 holds
		// exactly 3 and pod1 4: pod2's larger leaf, then its sibling.
		{"parent switch that holds the rest", layout(3, 2, 4), "n[0-5,8-9,12-13,16-17,20]", `[{"id": "a", "nodes": 9, "walltime": 9}]`, []string{"n[0-5,16-17,20]"}},
		// Jobs in problem order, each on what the previous left.
		{"one after another", layout(2, 2, 4), "n[0-3,5-7]", `[{"id": "a", "nodes": 3, "walltime": 9}, {"id": "b", "nodes": 4, "walltime": 9}]`, []string{"n[5-7]", "n[0-3]"}},
		{"one after another, reversed", layout(2, 2, 4), "n[0-3,5-7]", `[{"id": "b", "nodes": 4, "walltime": 9}, {"id": "a", "nodes": 3, "walltime": 9}]`, []string{"n[0-3]", "n[5-7]"}},
		// Two trees, neither holding 5: they meet at a virtual switch.
		{"forest", twoRoots, "h[0-2,4-6]", `[{"id": "a", "nodes": 5, "walltime": 9}]`, []string{"h[0-2,4-5]"}},
	}
	for _, c := range cases {
		w := testWindow(t, c.topo, c.idle, "", c.jobs)
		if got := placed(t, w, heuristics.Slurm{}); !slices.Equal(got, c.want) {
			t.Errorf("%s: slurm placed %v, want %v", c.name, got, c.want)
		}
	}
}

// benchmarkTree times s on the multi-node jobs of paper-s3-i300.json, as
// model.SelectJobs picks them with the published code's cap of 5.
func benchmarkTree(b *testing.B, s solver.Solver) {
	w, err := instances.Load("paper-s3-i300.json")
	if err != nil {
		b.Fatal(err)
	}
	p := solver.NewProblem(w, model.SelectJobs(w, 5).Multi)
	for b.Loop() {
		if _, err := s.Solve(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSlurm(b *testing.B) { benchmarkTree(b, heuristics.Slurm{}) }
