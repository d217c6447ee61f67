package cnf_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
)

type nullSink struct{ n int }

func (s *nullSink) Add([]cnf.Lit) { s.n++ }

// TestClosure checks cnf.Closure on 300 seeded random small windows
// against its definition, written out here independently: every list is
// increasing, starts at lo_i and stays within [lo_i, hi_i]; it holds
// every static event on the job's nodes and the extra slots in range;
// and it is closed — for every job k, candidate c of k and other job i
// sharing a node with k, c + D_k is a candidate of i when it is in i's
// range. It also checks that the work limit is reported, and that the
// compressed encoder reads [s_i ≤ s] as the largest candidate's variable.
func TestClosure(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	smaller := 0
	for n := range 300 {
		m := randomModel(t, rng, 1+rng.IntN(3), 1+rng.IntN(5))
		if len(m.Jobs) == 0 {
			continue
		}
		lo, hi := make([]int, len(m.Jobs)), make([]int, len(m.Jobs))
		extra := make([][]int, len(m.Jobs))
		for i, j := range m.Jobs {
			lo[i], hi[i] = j.EST, j.EST+rng.IntN(12)
			extra[i] = []int{lo[i] + rng.IntN(14)}
		}
		c, err := cnf.Closure(m, lo, hi, extra, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		has := func(i, s int) bool { _, ok := slices.BinarySearch(c[i], s); return ok }
		shares := func(a, b int) bool {
			for _, oa := range m.Jobs[a].Options {
				for _, ob := range m.Jobs[b].Options {
					if oa.Node == ob.Node {
						return true
					}
				}
			}
			return false
		}
		in := func(i, s int) bool { return lo[i] <= s && s <= hi[i] }
		total := 0
		for i, j := range m.Jobs {
			if len(c[i]) == 0 || c[i][0] != lo[i] || c[i][len(c[i])-1] > hi[i] || !slices.IsSorted(c[i]) ||
				len(slices.Compact(slices.Clone(c[i]))) != len(c[i]) {
				t.Fatalf("window %d, job %d: candidates %v for [%d, %d]", n, i, c[i], lo[i], hi[i])
			}
			total += len(c[i])
			var events []int
			for _, o := range j.Options {
				events = append(events, o.Release...)
				for _, f := range o.Forbid {
					events = append(events, f[1]+1)
				}
				for _, r := range m.Nodes[o.Node].Running {
					events = append(events, r.EndSlot)
				}
			}
			events = append(events, extra[i]...)
			for _, s := range events {
				if in(i, s) && !has(i, s) {
					t.Fatalf("window %d, job %d: event %d missing from %v", n, i, s, c[i])
				}
			}
			for k := range m.Jobs {
				if k == i || !shares(i, k) {
					continue
				}
				for _, s := range c[k] {
					if e := s + m.Jobs[k].Dur; in(i, e) && !has(i, e) {
						t.Fatalf("window %d: job %d ends at %d, not a candidate of job %d: %v", n, k, e, i, c[i])
					}
				}
			}
		}
		grid := 0
		for i := range lo {
			grid += hi[i] - lo[i] + 1
		}
		if total < grid {
			smaller++
		}
		if _, err := cnf.Closure(m, lo, hi, extra, 0); !errors.Is(err, cnf.ErrClosureTooLarge) {
			t.Fatalf("window %d: limit 0 gives %v", n, err)
		}
		enc, err := cnf.New(m, &nullSink{}, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Compress(c); err != nil {
			t.Fatal(err)
		}
		enc.Base()
		for i := range m.Jobs {
			for s := lo[i] - 1; s <= hi[i]+1; s++ {
				k, _ := slices.BinarySearch(c[i], s+1) // candidates ≤ s
				var want cnf.Lit
				switch {
				case k == 0:
					want = -enc.True()
				case c[i][k-1] == enc.Hi[i]:
					want = enc.True()
				default:
					want = enc.Start(i, c[i][k-1])
				}
				if got := enc.Start(i, s); got != want {
					t.Fatalf("window %d, job %d: [s ≤ %d] is %d, want %d", n, i, s, got, want)
				}
				if enc.IsCandidate(i, s) != has(i, s) {
					t.Fatalf("window %d, job %d: IsCandidate(%d) wrong", n, i, s)
				}
			}
		}
	}
	if smaller < 30 {
		t.Errorf("the closure was smaller than the grid on only %d windows", smaller)
	}
}

// TestCompressRejects: Compress refuses lists that do not start at Lo,
// are not increasing, leave the range, or come after Base.
func TestCompressRejects(t *testing.T) {
	w, err := instances.RandomCPWindow(rand.New(rand.NewPCG(1, 1)), 1, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cp.Build(w, 10)
	if err != nil || len(m.Jobs) != 1 {
		t.Fatalf("%v, %d jobs", err, len(m.Jobs))
	}
	lo, hi := []int{m.Jobs[0].EST}, []int{m.Jobs[0].EST + 5}
	l := lo[0]
	for _, bad := range [][]int{{}, {l + 1}, {l, l}, {l, l + 3, l + 2}, {l, l + 6}} {
		enc, _ := cnf.New(m, &nullSink{}, lo, hi)
		if err := enc.Compress([][]int{bad}); err == nil {
			t.Errorf("Compress(%v) on [%d, %d] accepted", bad, lo[0], hi[0])
		}
	}
	enc, _ := cnf.New(m, &nullSink{}, lo, hi)
	enc.Base()
	if err := enc.Compress([][]int{{l}}); err == nil {
		t.Error("Compress after Base accepted")
	}
}

// randomModel builds the model, on a 10 s grid, of a random window
// (instances.RandomCPWindow) of the given nodes and waiting jobs.
func randomModel(t *testing.T, rng *rand.Rand, nodes, jobs int) *cp.Model {
	t.Helper()
	w, err := instances.RandomCPWindow(rng, nodes, jobs, 10)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cp.Build(w, 10)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// giniSink feeds clauses to gini.
type giniSink struct{ g *gini.Gini }

func (s giniSink) Add(c []cnf.Lit) {
	for _, l := range c {
		s.g.Add(z.Dimacs2Lit(int(l)))
	}
	s.g.Add(0)
}

// TestExclude: on 200 random windows, on the grid and compressed, with
// the literal of Exclude of some of a job's slots assumed, its start s is
// satisfiable exactly when it is without the literal and s is not
// excluded (slots outside the domain and non-candidates in the list are
// ignored).
func TestExclude(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	bites := 0
	for wi := range 200 {
		m := randomModel(t, rng, 1+rng.IntN(2), 1+rng.IntN(3))
		if len(m.Jobs) == 0 {
			continue
		}
		lo, hi := make([]int, len(m.Jobs)), make([]int, len(m.Jobs))
		for i, j := range m.Jobs {
			lo[i], hi[i] = j.EST, j.EST+6
		}
		g := gini.New()
		enc, err := cnf.New(m, giniSink{g}, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if wi%2 == 1 {
			cands := make([][]int, len(m.Jobs))
			for i := range cands {
				cands[i] = []int{lo[i]}
				for s := lo[i] + 1; s <= hi[i]; s++ {
					if rng.IntN(2) == 0 {
						cands[i] = append(cands[i], s)
					}
				}
			}
			if err := enc.Compress(cands); err != nil {
				t.Fatal(err)
			}
		}
		enc.Base()
		enc.EncodeAll()
		for i := range m.Jobs {
			// One job's starts at a time: the others' could leave no
			// schedule at all.
			ex := make([][]int, len(m.Jobs))
			for s := lo[i] - 1; s <= hi[i]+1; s++ {
				if rng.IntN(3) == 0 {
					ex[i] = append(ex[i], s)
				}
			}
			r := enc.Exclude(ex)
			for _, s := range enc.Candidates(i) {
				at := []z.Lit{z.Dimacs2Lit(int(enc.Start(i, s))), z.Dimacs2Lit(int(-enc.Start(i, s-1)))}
				g.Assume(at...)
				plain := g.Solve() == 1
				g.Assume(append(at, z.Dimacs2Lit(int(r)))...)
				got := g.Solve() == 1
				if want := plain && !slices.Contains(ex[i], s); got != want {
					t.Fatalf("window %d, job %d, start %d (excluded %v): satisfiable %v with the literal, %v without", wi, i, s, ex[i], got, plain)
				}
				if plain && !got {
					bites++
				}
			}
		}
	}
	if bites < 50 {
		t.Errorf("only %d feasible starts excluded", bites)
	}
}
