package csp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
)

// randomLayoutWindow returns a window on a random pods×leaves×nodes layout
// with a random share of its nodes idle (in runs, as a busy cluster leaves
// them, or scattered) and jobs random sizes from 2 to maxSize nodes whose
// sum fits; about half use the lan-paper cost.
func randomLayoutWindow(rng *rand.Rand, maxJobs, maxSize int) *model.Window {
	topo, err := model.NewLayout(2+rng.IntN(12), 1+rng.IntN(4), 2+rng.IntN(9))
	if err != nil {
		panic(err)
	}
	n := topo.NumNodes()
	w := &model.Window{Topology: topo, Cost: model.DefaultCostModel}
	if rng.IntN(2) == 0 {
		w.Cost.Kind = model.CostLanPaper
	}
	p := 0.2 + 0.8*rng.Float64()
	idle := rng.IntN(2) == 0
	for k := range n {
		if rng.IntN(8) == 0 { // a run ends
			idle = rng.Float64() < p
		}
		if idle || rng.IntN(10) == 0 {
			w.Idle = append(w.Idle, k)
		}
	}
	if len(w.Idle) < 2 {
		w.Idle = []int{0, n - 1}
	}
	left := len(w.Idle)
	for j := 0; j < 1+rng.IntN(maxJobs) && left >= 2; j++ {
		size := 2 + rng.IntN(min(maxSize, left)-1)
		left -= size
		w.Jobs = append(w.Jobs, model.Job{ID: fmt.Sprint("j", j), Nodes: size, Walltime: 60, Queue: model.DefaultQueue})
	}
	return w
}

func allJobs(w *model.Window) *solver.Problem {
	jobs := make([]int, len(w.Jobs))
	for j := range jobs {
		jobs[j] = j
	}
	return solver.NewProblem(w, jobs)
}

func mustSolve(t *testing.T, s Solver, p *solver.Problem) *solver.Result {
	t.Helper()
	r, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Check(p.Window, r.Allocations); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSingleAsGeneral holds the one-job path to the general one (graph,
// sequential and greedy placements, trivial bound) on 3,000 seeded random
// windows: the same status, objective, bound and node list.
func TestSingleAsGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 4))
	notFirst := 0
	for i := range 3000 {
		w := randomLayoutWindow(rng, 1, 400)
		if len(w.Jobs) == 0 {
			continue
		}
		p := solver.NewProblem(w, []int{0})
		got, want := mustSolve(t, Solver{}, p), mustSolve(t, Solver{mode: modeGeneral}, p)
		if !got.Stats.CSP.Single {
			t.Fatalf("window %d: the one-job path did not run", i)
		}
		if got.Status != want.Status || got.Objective != want.Objective || got.Bound != want.Bound ||
			!reflect.DeepEqual(got.Allocations, want.Allocations) {
			t.Fatalf("window %d: one-job path %v %d %v %v, general %v %d %v %v", i, got.Status, got.Objective, got.Bound,
				got.Allocations, want.Status, want.Objective, want.Bound, want.Allocations)
		}
		if got.Allocations[0].Nodes[0] != w.Idle[0] {
			notFirst++
		}
	}
	if notFirst < 500 {
		t.Errorf("only %d answers are not the sequential placement: the test does not exercise the search", notFirst)
	}
}

// TestRotationsAsWraps holds exact's rotations to its wrap DPs (each
// alone, forced) and to brute force: the same optimum on seeded random
// windows, small ones against brute force, and on layouts of up to 1,440
// nodes with up to six jobs the same placement as the wrap DPs (the
// rotations then look for the wrap DPs' answer among the optimal ones).
func TestRotationsAsWraps(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 5))
	rotated, wrapped := 0, 0
	for i := range 300 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 16, 5)
		p := allJobs(w)
		if len(p.Jobs) == 0 || slices.ContainsFunc(w.Jobs, func(j model.Job) bool { return j.Nodes < 2 }) {
			continue // one-node jobs are solver.SolveWindow's, not the solvers'
		}
		res, err := solver.SolveWindow(context.Background(), w, brute.Solver{}, solver.Options{TimeLimit: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		got := mustSolve(t, Solver{mode: modeRotations}, p)
		if got.Status != solver.Optimal || got.Objective != res.Objective {
			t.Fatalf("small window %d: rotations %v %d, brute force %d", i, got.Status, got.Objective, res.Objective)
		}
		if got.Stats.CSP.RotationDPs > 0 {
			rotated++
		}
	}
	for i := range 600 {
		w := randomLayoutWindow(rng, 6, 120)
		p := allJobs(w)
		if len(p.Jobs) < 2 {
			continue
		}
		rot := mustSolve(t, Solver{mode: modeRotations}, p)
		wr := mustSolve(t, Solver{mode: modeWraps}, p)
		auto := mustSolve(t, Solver{}, p)
		if rot.Status != solver.Optimal || wr.Status != solver.Optimal || auto.Status != solver.Optimal ||
			rot.Objective != wr.Objective || auto.Objective != wr.Objective {
			t.Fatalf("window %d: rotations %v %d, wrap DPs %v %d, auto %v %d", i, rot.Status, rot.Objective,
				wr.Status, wr.Objective, auto.Status, auto.Objective)
		}
		if !reflect.DeepEqual(rot.Allocations, wr.Allocations) || !reflect.DeepEqual(auto.Allocations, wr.Allocations) {
			t.Fatalf("window %d: rotations place %v, auto %v, the wrap DPs %v", i, rot.Allocations, auto.Allocations, wr.Allocations)
		}
		if rot.Stats.CSP.RotationDPs > 0 {
			rotated++
		}
		if wr.Stats.CSP.WrapDPs > 0 {
			wrapped++
		}
	}
	if rotated < 100 || wrapped < 50 {
		t.Errorf("rotations ran on %d windows, wrap DPs on %d: the test does not exercise both", rotated, wrapped)
	}
	t.Logf("rotations ran on %d windows, wrap DPs on %d", rotated, wrapped)
}

// TestNearlyFullAsAllRows holds the DP over the rows it needs (rowRange,
// suffixRest) to the DP over every row (allRows) on seeded random
// layouts whose jobs cover all but 0–3 idle positions, where the rows
// left out are most of the table and most placements wrap: the same
// status, objective and allocations, with the rotations forced, with the
// wrap DPs forced and by default.
func TestNearlyFullAsAllRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 9))
	defer func() { allRows = false }()
	rotated, wrapped := 0, 0
	for i := range 400 {
		w := randomLayoutWindow(rng, 6, 120)
		if len(w.Jobs) < 2 {
			continue
		}
		// The last job takes what the others leave but for 0–3 positions.
		used := 0
		for _, j := range w.Jobs[:len(w.Jobs)-1] {
			used += j.Nodes
		}
		last := len(w.Idle) - used - rng.IntN(4)
		if last < 2 {
			continue
		}
		w.Jobs[len(w.Jobs)-1].Nodes = last
		p := allJobs(w)
		for _, mode := range []int{modeAuto, modeRotations, modeWraps} {
			allRows = false
			got := mustSolve(t, Solver{mode: mode}, p)
			allRows = true
			want := mustSolve(t, Solver{mode: mode}, p)
			allRows = false
			if got.Status != want.Status || got.Objective != want.Objective || !reflect.DeepEqual(got.Allocations, want.Allocations) {
				t.Fatalf("window %d, mode %d: rows needed %v %d %v, every row %v %d %v", i, mode, got.Status, got.Objective,
					got.Allocations, want.Status, want.Objective, want.Allocations)
			}
			if got.Status != solver.Optimal {
				t.Fatalf("window %d, mode %d: not proven without a deadline (%v)", i, mode, got.Status)
			}
			rotated += got.Stats.CSP.RotationDPs
			wrapped += got.Stats.CSP.WrapDPs
		}
	}
	if rotated < 200 || wrapped < 200 {
		t.Errorf("%d rotation DPs, %d wrap DPs: too few to exercise the rows left out", rotated, wrapped)
	}
	t.Logf("%d rotation DPs, %d wrap DPs", rotated, wrapped)
}

// TestRotationsAside: the rotation DPs shared with a second goroutine
// (rotationsAside, on long idle sequences) give the allocations,
// objective and DP count of the DPs run one after the other, on 600
// random layouts where rotations run.
func TestRotationsAside(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 44))
	defer func(v int) { parallelRotations = v }(parallelRotations)
	aside := 0
	for i := range 600 {
		w := randomLayoutWindow(rng, 6, 120)
		p := allJobs(w)
		if len(p.Jobs) < 2 {
			continue
		}
		parallelRotations = 1 << 30
		seq := mustSolve(t, Solver{mode: modeRotations}, p)
		parallelRotations = 0
		par := mustSolve(t, Solver{mode: modeRotations}, p)
		if par.Status != seq.Status || par.Objective != seq.Objective || !reflect.DeepEqual(par.Allocations, seq.Allocations) ||
			par.Stats.CSP.RotationDPs != seq.Stats.CSP.RotationDPs {
			t.Fatalf("window %d: aside %v %d %v (%v DPs), one after the other %v %d %v (%v DPs)", i, par.Status, par.Objective, par.Allocations,
				par.Stats.CSP.RotationDPs, seq.Status, seq.Objective, seq.Allocations, seq.Stats.CSP.RotationDPs)
		}
		if seq.Stats.CSP.RotationDPs >= 2 {
			aside++
		}
	}
	if aside < 50 {
		t.Errorf("two or more rotation DPs on %d windows: too few to exercise rotationsAside", aside)
	}
	t.Logf("two or more rotation DPs on %d windows", aside)
}
