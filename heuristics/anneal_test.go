package heuristics_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

func solveWith(t testing.TB, w *model.Window, s solver.Solver, maxJobs int) *solver.WindowResult {
	t.Helper()
	res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{MaxJobs: maxJobs})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAnnealRandom: on 600 seeded random windows of three topology kinds,
// SA (and its paper-compatible variant) returns allocations that pass
// model.Check (SolveWindow runs it) and are never worse than Seq, its
// initial solution; a warm start is never worsened either.
func TestAnnealRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	improved := 0
	for i := range 600 {
		w := randomWindow(t, rng, i%3)
		seq := solveWith(t, w, heuristics.Seq{}, 5)
		sa := heuristics.DefaultAnneal()
		sa.Seed = uint64(i)
		sa.Steps = 200
		got := solveWith(t, w, sa, 5)
		if got.Objective > seq.Objective {
			t.Fatalf("window %d: sa %d worse than its initial seq %d", i, got.Objective, seq.Objective)
		}
		if got.Objective < seq.Objective {
			improved++
		}
		sa.PaperCompat = true
		if pc := solveWith(t, w, sa, 5); pc.Objective > seq.Objective {
			t.Fatalf("window %d: paper-compat sa %d worse than seq %d", i, pc.Objective, seq.Objective)
		}
		// Warm start from the SA answer's multi-node part.
		var multi []model.Allocation
		for _, a := range got.Allocations {
			if len(a.Nodes) > 1 {
				multi = append(multi, a)
			}
		}
		if len(multi) > 0 {
			warm := sa.WithInitial(multi)
			if again := solveWith(t, w, warm, 5); again.Objective > got.Objective {
				t.Fatalf("window %d: warm-started sa %d worse than its start %d", i, again.Objective, got.Objective)
			}
		}
	}
	if improved < 100 {
		t.Errorf("sa improved on seq in only %d of 600 windows", improved)
	}
}

// TestAnnealDeterministic: the same seed gives the same allocation; other
// seeds may not.
func TestAnnealDeterministic(t *testing.T) {
	w, err := instances.Load("paper-s3-i300.json")
	if err != nil {
		t.Fatal(err)
	}
	sa := heuristics.DefaultAnneal()
	a := solveWith(t, w, sa, 5)
	b := solveWith(t, w, sa, 5)
	if a.Objective != b.Objective || len(a.Allocations) != len(b.Allocations) {
		t.Fatalf("same seed, different answers: %d and %d", a.Objective, b.Objective)
	}
	for k := range a.Allocations {
		if !slices.Equal(a.Allocations[k].Nodes, b.Allocations[k].Nodes) {
			t.Fatalf("same seed, different nodes for allocation %d", k)
		}
	}
}

// TestAnnealRejectsBadParameters: bad parameters and an initial solution
// that does not fit the problem are errors, not silent fallbacks.
func TestAnnealRejectsBadParameters(t *testing.T) {
	w, err := instances.Load("example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	sel := model.SelectJobs(w, 3)
	for _, a := range []heuristics.Anneal{{Tmax: 1, Tmin: 2, Steps: 1, Destroy: 1, Q: 1}, {Tmax: 2, Tmin: 1, Steps: 1, Destroy: 0, Q: 1}} {
		if _, err := a.Solve(context.Background(), solver.NewProblem(w, sel.Multi)); err == nil {
			t.Errorf("no error for %+v", a)
		}
	}
	bad := heuristics.DefaultAnneal()
	bad.Initial = []model.Allocation{{Job: sel.Multi[0], Nodes: []int{0}}}
	if _, err := bad.Solve(context.Background(), solver.NewProblem(w, sel.Multi)); err == nil {
		t.Error("no error for an initial solution that does not match the problem")
	}
}

// TestAnnealCanceled: a cancelled context still yields the initial
// solution.
func TestAnnealCanceled(t *testing.T) {
	w, err := instances.Load("paper-s3-i300.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := solver.SolveWindow(ctx, w, heuristics.DefaultAnneal(), solver.Options{MaxJobs: 5})
	if err != nil || res.Status != solver.Feasible || len(res.Allocations) == 0 {
		t.Fatalf("cancelled sa: %v %v", res, err)
	}
}

// BenchmarkAnneal: SA-500 and SA-1000 on the shipped paper-scale windows
// (at most 5 multi-node jobs). The target is SA-1000 ≤ 20 ms median.
func BenchmarkAnneal(b *testing.B) {
	for _, steps := range []int{500, 1000} {
		for _, name := range []string{"paper-s1-i50.json", "paper-s3-i300.json", "paper-s6-i1000.json"} {
			w, err := instances.Load(name)
			if err != nil {
				b.Fatal(err)
			}
			sa := heuristics.DefaultAnneal()
			sa.Steps = steps
			b.Run(name+"/SA-"+strconv.Itoa(steps), func(b *testing.B) {
				for b.Loop() {
					solveWith(b, w, sa, 5)
				}
			})
		}
	}
}
