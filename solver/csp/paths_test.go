package csp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/encode"
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

// TestSingleFirstCheapest holds the one-job path to its definition by
// brute force: the block of the first cheapest start, every start priced
// by model.CostModel.PairwiseCost, on seeded random windows of a job of
// any size (one node to all idle) over random layouts, with both cost
// kinds and hop costs of 1 to 40 (a coarse price ties blocks of different
// hops, so the first cheapest block can lie inside a stretch of the
// slide, not at its ends). It counts the answers that are the last
// block of a stretch and not its first, and those inside one, and fails
// when there are too few of either to exercise the search.
//
// Chunked, it runs again with Q cut into chunks of 1 to 64 positions
// (or |Q|/64) shared among goroutines (encode.Chunks): the answer must be the
// same, and it counts the windows whose first cheapest block lies past
// the first chunk while a later chunk holds a block of the same price
// (ties across chunks), failing when there are too few.
func TestSingleFirstCheapest(t *testing.T) {
	t.Run("whole", func(t *testing.T) { singleFirstCheapest(t, false) })
	t.Run("chunked", func(t *testing.T) {
		defer func(l, m, k int) { encode.ChunkLen, encode.MinShared, encode.Workers = l, m, k }(encode.ChunkLen, encode.MinShared, encode.Workers)
		encode.MinShared, encode.Workers = 0, 64 // chunks of ⌈|Q|/64⌉ positions or more
		singleFirstCheapest(t, true)
	})
}

func singleFirstCheapest(t *testing.T, chunked bool) {
	rng := rand.New(rand.NewPCG(33, 7))
	cuts := rand.New(rand.NewPCG(33, 8)) // the chunks: the windows are the same either way
	atEnd, inside, tiedLater, atBound := 0, 0, 0, 0
	defer func(s int) { singleStep = s }(singleStep)
	for i := range 10000 {
		w := randomLayoutWindow(rng, 1, 400)
		if chunked {
			encode.ChunkLen = 1 + cuts.IntN(64)
		}
		// Looks at the least price every 1–16 positions: a chunk stops
		// at its first block of that price.
		singleStep = 1 + cuts.IntN(16)
		w.Cost.HopCost = 1 + rng.Int64N(40)
		q := w.Idle
		n := 1 + rng.IntN(min(len(q), 60))
		if i%4 == 0 {
			n = 1 + rng.IntN(len(q))
		}
		if i%2 == 0 {
			w.Cost.HopCost = 1
			n = len(q)/2 + rng.IntN(len(q)-len(q)/2)
		}
		w.Jobs = []model.Job{{ID: "j", Nodes: n, Walltime: 60, Queue: model.DefaultQueue}}
		best, at := int64(-1), 0
		prices := make([]int64, len(q))
		for k := range q {
			prices[k] = w.Cost.Cost(w.Topology, w.Block(k, n))
			if c := prices[k]; best < 0 || c < best {
				best, at = c, k
			}
		}
		if span := encode.ChunkSpan(len(q), true); chunked && at >= span && slices.Contains(prices[min(len(q), (at/span+1)*span):], best) {
			tiedLater++
		}
		if least, ok := w.Cost.MinCost(w.Topology, n); !ok || best < least {
			t.Fatalf("window %d: the first cheapest %d below the least price %d (%v)", i, best, least, ok)
		} else if best == least && at+n < len(q) && slices.Contains(prices[at+1:], best+1) {
			atBound++ // a stop one price too late would not find it
		}
		got, ok := Solver{}.single(context.Background(), solver.NewProblem(w, []int{0}))
		if !ok {
			t.Fatalf("window %d: the one-job path refused a job of %d nodes on %d idle", i, n, len(q))
		}
		if got.Objective != best || !slices.Equal(got.Allocations[0].Nodes, w.Block(at, n)) {
			t.Fatalf("window %d (|Q| %d, n %d, hop cost %d): %d from node %d, want the first cheapest %d from node %d (start %d)",
				i, len(q), n, w.Cost.HopCost, got.Objective, got.Allocations[0].Nodes[0], best, q[at], at)
		}
		// Where the answer lies in its stretch: the stretch ends where
		// the node moved out or in leaves its leaf's id range (or the in
		// end wraps), as HopCounter.Stretches cuts them.
		if at > 0 && n < len(q) {
			same := func(k int) bool { // block k and k+1 in one stretch
				a, b := q[k], q[(k+n)%len(q)]
				c, d := q[k+1], q[(k+1+n)%len(q)]
				return w.Topology.Node(a).Leaf == w.Topology.Node(c).Leaf && c > a && w.Topology.Node(b).Leaf == w.Topology.Node(d).Leaf && d > b
			}
			switch {
			case at+1 < len(q) && same(at-1) && same(at):
				inside++
			case same(at - 1):
				atEnd++
			}
		}
	}
	if atEnd < 30 || inside < 30 {
		t.Errorf("%d answers at the end of a stretch, %d inside one: too few to exercise the search", atEnd, inside)
	}
	if chunked && tiedLater < 100 {
		t.Errorf("%d answers past the first chunk tied by a later chunk: too few to exercise the chunks' merge", tiedLater)
	}
	if atBound < 100 {
		t.Errorf("%d answers at the least price with a block one dearer after them: too few to exercise the stop", atBound)
	}
	t.Logf("%d answers at the end of a stretch, %d inside one, %d past the first chunk tied by a later chunk, %d at the least price", atEnd, inside, tiedLater, atBound)
}
