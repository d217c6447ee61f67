package nsa

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// randomSteps returns n repair steps on w drawn so that states recur
// (a few free sets and sizes, reused) and so that different free sets
// often show the same classes (nodes of one leaf swapped), as the
// memoised chooser must tell apart only what the policy sees.
func randomSteps(rng *rand.Rand, w *model.Window, n int) []heuristics.RepairStep {
	var frees [][]int
	for range 6 {
		var f []int
		keep := rng.Float64()
		for i := range w.Idle {
			if rng.Float64() < keep {
				f = append(f, i)
			}
		}
		if len(f) == 0 {
			f = []int{0}
		}
		frees = append(frees, f)
	}
	var pool []heuristics.RepairStep
	for range 40 {
		free := frees[rng.IntN(len(frees))]
		pending := make([]int, rng.IntN(3))
		for i := range pending {
			pending[i] = 1 + rng.IntN(4)
		}
		starts := len(free)
		if rng.IntN(4) == 0 {
			starts = 1 + rng.IntN(len(free))
		}
		pool = append(pool, heuristics.RepairStep{Window: w, Free: free, Size: 1 + rng.IntN(4), Pending: pending,
			Starts: min(starts, 100)})
	}
	steps := make([]heuristics.RepairStep, n)
	for i := range steps {
		steps[i] = pool[rng.IntN(len(pool))]
	}
	return steps
}

// TestChooserMemoExact: the memoised chooser gives, step after step, the
// probabilities a fresh forward pass gives (compared exactly) and the
// same choices as the reference chooser that runs the network every time,
// for greedy and sampled choice, with and without the idle channel,
// relative ids and a temperature, on idle sequences shorter and longer
// than q; and the memo does hit.
func TestChooserMemoExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for ci, c := range []struct {
		arch          Arch
		idle, rel     bool
		temp          float64
		nIdle         int
		sample, nomem bool
	}{
		{arch: CNN3, nIdle: 60, sample: true},
		{arch: CNN3, nIdle: 300, sample: false},
		{arch: CNN3, idle: true, rel: true, temp: 2, nIdle: 90, sample: true},
		{arch: FCN2, rel: true, nIdle: 150, sample: true},
		{arch: CNN1, idle: true, nIdle: 40, sample: false},
	} {
		pol, err := NewPolicy(c.arch, 100, c.idle, c.rel, 40, rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, par := range pol.Net.Params() { // a policy with opinions
			for i := range par.W {
				par.W[i] = rng.NormFloat64() / 4
			}
		}
		w := paperWindow(t, uint64(ci+1), c.nIdle, 3)
		steps := randomSteps(rng, w, 400)
		memo := pol.chooser(w.Topology, c.sample, c.temp)
		ref := pol.chooser(w.Topology, c.sample, c.temp)
		ref.noMemo = true
		fresh := pol.chooser(w.Topology, c.sample, c.temp)
		fresh.noMemo = true
		seed := rng.Uint64()
		r1, r2 := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
		for i := range steps {
			s1, s2 := steps[i], steps[i]
			s1.Rand, s2.Rand = r1, r2
			a1, a2 := memo.ChooseStart(&s1), ref.ChooseStart(&s2)
			if a1 != a2 {
				t.Fatalf("case %d, step %d: memoised chooser took %d, reference %d", ci, i, a1, a2)
			}
			valid := min(100, len(s1.Free), s1.Starts)
			if valid <= 1 {
				continue
			}
			got := memo.memo[string(memo.stateKey(&s1, valid))]
			want := fresh.probs(&s1, valid)[:valid]
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d, step %d: memoised probabilities differ from a fresh forward pass", ci, i)
			}
		}
		if len(memo.memo) == 0 || len(memo.memo) >= len(steps)/2 {
			t.Fatalf("case %d: %d memoised states for %d steps: the memo is not exercised", ci, len(memo.memo), len(steps))
		}
	}
}

// TestChooserMemoSameClassesSameState: two free sets whose nodes differ
// but lie on the same leaves in the same order have one key and the same
// encoded state (what makes the key sufficient), and free sets on other
// leaves have another key.
func TestChooserMemoSameClassesSameState(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	pol, err := NewPolicy(CNN3, 100, true, false, 40, rng)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := model.NewLayout(25, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	w := &model.Window{Topology: topo}
	for id := range topo.NumNodes() {
		w.Idle = append(w.Idle, id)
	}
	c := pol.chooser(topo, false, 0)
	// Nodes 0–9 are leaf 0, 10–19 leaf 1: {0, 1, 10} and {2, 5, 13} show
	// the same classes, {0, 10, 20} does not.
	step := func(free ...int) *heuristics.RepairStep {
		return &heuristics.RepairStep{Window: w, Free: free, Size: 2, Pending: []int{3}, Starts: len(free)}
	}
	x := func(s *heuristics.RepairStep) []float64 {
		c.enc.encode(c.x, c.tf, w.Idle, s.Free, s.Size, s.Pending)
		return append([]float64(nil), c.x...)
	}
	a, b, o := step(0, 1, 10), step(2, 5, 13), step(0, 10, 20)
	ka := string(c.stateKey(a, 3))
	kb := string(c.stateKey(b, 3))
	ko := string(c.stateKey(o, 3))
	if ka != kb || ka == ko {
		t.Fatalf("keys: same leaves equal %v (want true), other leaves equal %v (want false)", ka == kb, ka == ko)
	}
	if !reflect.DeepEqual(x(a), x(b)) || reflect.DeepEqual(x(a), x(o)) {
		t.Fatal("encoded states do not follow the classes")
	}
	// Every field of the step is in the key.
	for _, s := range []*heuristics.RepairStep{
		{Window: w, Free: a.Free, Size: 3, Pending: []int{3}, Starts: 3},
		{Window: w, Free: a.Free, Size: 2, Pending: []int{4}, Starts: 3},
		{Window: w, Free: a.Free, Size: 2, Pending: []int{3, 3}, Starts: 3},
		{Window: w, Free: a.Free[:2], Size: 2, Pending: []int{3}, Starts: 2},
	} {
		if string(c.stateKey(s, min(len(s.Free), s.Starts))) == ka {
			t.Fatalf("step %+v has the key of %+v", s, a)
		}
	}
	if string(c.stateKey(a, 2)) == ka {
		t.Fatal("the number of allowed starts is not in the key")
	}
}

// TestNSAMemoSameResult: NSA (memoised) and the annealer driven by the
// reference chooser (the network run on every step) return the same
// allocations and objective, sampled and greedy, on windows with idle
// sequences shorter and longer than q.
func TestNSAMemoSameResult(t *testing.T) {
	pol, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, c := range []struct{ idle, jobs int }{{60, 4}, {250, 5}, {500, 5}} {
		w := paperWindow(t, uint64(40+i), c.idle, c.jobs)
		sel := model.SelectJobs(w, 5)
		if len(sel.Multi) == 0 {
			t.Fatalf("window %d has no multi-node job", i)
		}
		p := solver.NewProblem(w, sel.Multi)
		for _, sample := range []bool{true, false} {
			n := Default()
			n.Sample = sample
			n.Anneal.Seed = uint64(7 + i)
			got, err := n.Solve(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			a := n.Anneal
			ref := pol.chooser(w.Topology, sample, 0)
			ref.noMemo = true
			a.Repair, a.LargestFirst = ref, true
			want, err := a.Solve(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if got.Objective != want.Objective || !reflect.DeepEqual(got.Allocations, want.Allocations) {
				t.Fatalf("window %d, sample=%v: memoised NSA %d, reference %d", i, sample, got.Objective, want.Objective)
			}
			if err := model.Check(w, got.Allocations); err != nil {
				t.Fatalf("window %d: %v", i, err)
			}
		}
	}
}
