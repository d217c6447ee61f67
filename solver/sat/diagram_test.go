package sat_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model/windowjson"
)

type gsink struct{ g *gini.Gini }

func (s gsink) Add(c []cnf.Lit) {
	for _, l := range c {
		s.g.Add(z.Dimacs2Lit(int(l)))
	}
	s.g.Add(0)
}

// bigNodeModel returns the model of jobs one-unit jobs of random queues on
// one big node, where every start is feasible, and random start ranges
// [lo_i = 0, hi_i < 12] to test objective diagrams over.
func bigNodeModel(t *testing.T, rng *rand.Rand, jobs int) (m *cp.Model, lo, hi []int) {
	t.Helper()
	doc := `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 1}}, "idle": "n0",
	 "queues": {"a": {"expected_wait": 10}, "b": {"expected_wait": 30}, "c": {"expected_wait": 60}}, "jobs": [`
	for j := range jobs {
		if j > 0 {
			doc += ","
		}
		doc += fmt.Sprintf(`{"id": "j%d", "nodes": 1, "walltime": 10, "queue": %q, "select": "1:ncpus=1"}`, j, []string{"a", "b", "c"}[rng.IntN(3)])
	}
	doc += `], "node_resources": {"default": {"ncpus": 1000}}}`
	w, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err = cp.Build(w, 10)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi = make([]int, jobs), make([]int, jobs)
	for i := range hi {
		hi[i] = rng.IntN(12)
	}
	return m, lo, hi
}

// TestObjectiveDiagrams checks the objective diagrams against the sum they
// bound: on a window where every start is feasible (one big node, no
// node blocks written), a start vector is satisfiable with AtMostCoarse(b,
// c) assumed exactly when Σ ω_i·c·⌈δ_i/c⌉ ≤ b, and with AtMostJobs(J, b)
// exactly when Σ_{i∈J} ω_i·δ_i ≤ b — for exact (c = 1) and coarse
// diagrams, several bounds sharing one diagram.
func TestObjectiveDiagrams(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 30 {
		jobs := 2 + rng.IntN(4)
		m, lo, hi := bigNodeModel(t, rng, jobs)
		g := gini.New()
		enc, err := cnf.New(m, gsink{g}, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		enc.Base()
		for range 6 {
			c := []int{1, 1, 2, 3, 4}[rng.IntN(5)]
			b := rng.Int64N(40)
			sub := []int{}
			for i := range jobs {
				if rng.IntN(2) == 0 {
					sub = append(sub, i)
				}
			}
			// A call cut short by its work limit must leave only sound
			// nodes behind for the next.
			if _, err := enc.AtMostCoarse(b, c, 1+rng.IntN(30)); err != nil && err != cnf.ErrTooLarge {
				t.Fatal(err)
			}
			root, err := enc.AtMostCoarse(b, c, cnf.MaxObjectiveWork)
			if err != nil {
				t.Fatal(err)
			}
			subRoot, err := enc.AtMostJobs(sub, b)
			if err != nil {
				t.Fatal(err)
			}
			for range 25 {
				slots := make([]int, jobs)
				var sum, subSum int64
				inSub := map[int]bool{}
				for _, i := range sub {
					inSub[i] = true
				}
				var assume []z.Lit
				for i := range slots {
					slots[i] = rng.IntN(hi[i] + 1)
					d := int64(slots[i])
					sum += m.Jobs[i].Weight * int64(c) * ((d + int64(c) - 1) / int64(c))
					if inSub[i] {
						subSum += m.Jobs[i].Weight * d
					}
					for _, l := range []cnf.Lit{enc.Start(i, slots[i]), -enc.Start(i, slots[i]-1)} {
						assume = append(assume, z.Dimacs2Lit(int(l)))
					}
				}
				g.Assume(append(assume, z.Dimacs2Lit(int(root)))...)
				if got := g.Solve() == 1; got != (sum <= b) {
					t.Fatalf("round %d: c %d, b %d, slots %v (coarse sum %d): satisfiable %v", round, c, b, slots, sum, got)
				}
				g.Assume(append(assume, z.Dimacs2Lit(int(subRoot)))...)
				if got := g.Solve() == 1; got != (subSum <= b) {
					t.Fatalf("round %d: jobs %v, b %d, slots %v (sum %d): satisfiable %v", round, sub, b, slots, subSum, got)
				}
			}
		}
	}
}

// TestObjectiveGroupDiagrams checks the diagrams of cnf.ObjectiveGroups
// against the condition they encode: with groups G_1 … G_k (in order) and
// bounds δ_g, the literal of AtMostCoarse(b, c) is satisfiable under a
// start vector exactly when Σ_i ω_i·c·⌈d_i/c⌉ ≤ b and, for every k' ≤ k,
// the coarse delays of G_1 … G_{k'−1} plus δ_{k'} + … + δ_k are at most b
// (the bounds here are arbitrary, not necessarily valid, so that the
// pruning shows); calls cut short by their work limit leave sound nodes.
func TestObjectiveGroupDiagrams(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for round := range 30 {
		jobs := 2 + rng.IntN(4)
		m, lo, hi := bigNodeModel(t, rng, jobs)
		perm := rng.Perm(jobs)
		var groups [][]int
		var delta []int64
		for k := 0; k < jobs; {
			n := 1 + rng.IntN(jobs-k)
			groups = append(groups, perm[k:k+n])
			delta = append(delta, rng.Int64N(20))
			k += n
		}
		g := gini.New()
		enc, err := cnf.New(m, gsink{g}, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		enc.Base()
		if err := enc.ObjectiveGroups(groups[:len(groups)-1], delta[:len(delta)-1]); err == nil && len(groups) > 1 {
			t.Fatal("groups that leave jobs out accepted")
		}
		if err := enc.ObjectiveGroups(groups, delta); err != nil {
			t.Fatal(err)
		}
		for range 6 {
			c := []int{1, 1, 2, 3}[rng.IntN(4)]
			b := rng.Int64N(60)
			if _, err := enc.AtMostCoarse(b, c, 1+rng.IntN(30)); err != nil && err != cnf.ErrTooLarge {
				t.Fatal(err)
			}
			root, err := enc.AtMostCoarse(b, c, cnf.MaxObjectiveWork)
			if err != nil {
				t.Fatal(err)
			}
			for range 25 {
				slots := make([]int, jobs)
				var assume []z.Lit
				cost := make([]int64, jobs)
				for i := range slots {
					slots[i] = rng.IntN(hi[i] + 1)
					d := int64(slots[i])
					cost[i] = m.Jobs[i].Weight * int64(c) * ((d + int64(c) - 1) / int64(c))
					for _, l := range []cnf.Lit{enc.Start(i, slots[i]), -enc.Start(i, slots[i]-1)} {
						assume = append(assume, z.Dimacs2Lit(int(l)))
					}
				}
				want := true
				for k := 0; k <= len(groups); k++ {
					var sum int64
					for gi, grp := range groups {
						if gi < k {
							for _, i := range grp {
								sum += cost[i]
							}
						} else {
							sum += delta[gi]
						}
					}
					if k == len(groups) || sum > b {
						want = want && sum <= b
					}
				}
				g.Assume(append(assume, z.Dimacs2Lit(int(root)))...)
				if got := g.Solve() == 1; got != want {
					t.Fatalf("round %d: groups %v bounds %v, c %d, b %d, slots %v (costs %v): satisfiable %v", round, groups, delta, c, b, slots, cost, got)
				}
			}
		}
	}
}
