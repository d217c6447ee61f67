package csp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// mediumProblems returns tight random windows (up to 120 idle nodes, 25
// jobs) with their optima from the exact DP.
func mediumProblems(t *testing.T, n int, seed uint64) (ps []*solver.Problem, opt []int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for i := 0; len(ps) < n && i < 20*n; i++ {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 120, 25)
		sel := model.SelectJobs(w, 0)
		if len(sel.Multi) < 2 {
			continue
		}
		p := solver.NewProblem(w, sel.Multi)
		res, err := Solver{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != solver.Optimal {
			continue
		}
		ps, opt = append(ps, p), append(opt, res.Objective)
	}
	return ps, opt
}

// optimalSearch returns a search on p whose incumbent is the exact DP's
// optimum, which must be opt.
func optimalSearch(t *testing.T, p *solver.Problem, opt int64) *search {
	t.Helper()
	st, err := newSearch(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.exact(context.Background(), multisets(st))
	if st.best != opt {
		t.Fatalf("DP %d, optimum %d", st.best, opt)
	}
	return st
}

// colgenSearch returns a search on p after column generation from the
// trivial multipliers, with the multipliers of its best bound and its
// master.
func colgenSearch(t *testing.T, p *solver.Problem) (*search, []float64, *master) {
	t.Helper()
	st, err := newSearch(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	lambda, ms := st.colgen(context.Background(), st.trivialLambda())
	return st, lambda, ms
}

// checkIncumbent verifies st's incumbent with model.Check and its cost.
func checkIncumbent(t *testing.T, st *search, p *solver.Problem, opt int64, what string) {
	t.Helper()
	allocs, err := st.g.Allocate(st.starts)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := model.Check(p.Window, allocs); err != nil {
		t.Fatalf("%s: incumbent fails model.Check: %v", what, err)
	}
	if st.best < opt {
		t.Fatalf("%s: incumbent %d below the optimum %d", what, st.best, opt)
	}
}

// TestColgenBound runs column generation alone, from the trivial
// multipliers, on windows with known optima: its bound never exceeds the
// optimum, its converged master value equals the bound it proves, and the
// fix-and-place incumbent is a valid allocation.
func TestColgenBound(t *testing.T) {
	ps, opt := mediumProblems(t, 120, 31)
	converged, fixedOpt, gapSum := 0, 0, 0.0
	for k, p := range ps {
		st, err := newSearch(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		lambda := st.trivialLambda()
		_, ms := st.colgen(context.Background(), lambda)
		if st.bound > float64(opt[k])+1e-6 {
			t.Fatalf("window %d: colgen bound %.3f above the optimum %d", k, st.bound, opt[k])
		}
		if !ms.artificial() && !st.provenOptimal() {
			_, _, z := ms.solve()
			if z < st.bound-1e-6*math.Abs(z)-1e-6 {
				t.Fatalf("window %d: master value %.3f below the proven bound %.3f", k, z, st.bound)
			}
			converged++
		}
		gapSum += (float64(opt[k]) - st.bound) / float64(opt[k])
		checkIncumbent(t, st, p, opt[k], "colgen")
		st.fixAndSolve(context.Background(), ms, 1_000_000)
		checkIncumbent(t, st, p, opt[k], "fixAndSolve")
		if st.best == opt[k] {
			fixedOpt++
		}
	}
	if len(ps) < 100 {
		t.Fatalf("only %d windows: the test is too weak", len(ps))
	}
	t.Logf("%d windows; mean bound gap to the optimum %.4f %%; incumbent optimal after fix-and-place on %d; %d stopped short of a proof with a converged master",
		len(ps), 100*gapSum/float64(len(ps)), fixedOpt, converged)
}

// TestReducedSearchExact: from the multipliers of column generation, the
// reduced-cost branch and bound without a deadline proves the optimum of
// every window, and so finds it.
func TestReducedSearchExact(t *testing.T) {
	ps, opt := mediumProblems(t, 120, 41)
	rounds := 0
	for k, p := range ps {
		st, err := newSearch(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		lambda := st.trivialLambda()
		// Half the windows search from the trivial multipliers, a weak
		// bound, so that the search does the work.
		if k%2 == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			lambda, _ = st.colgen(ctx, lambda)
			cancel()
		}
		rs := newRCSearch(st, lambda)
		if rs == nil {
			t.Fatalf("window %d: no search", k)
		}
		if !rs.prove(context.Background()) {
			t.Fatalf("window %d: the search stopped without a deadline", k)
		}
		if st.best != opt[k] || st.bound != float64(opt[k]) {
			t.Fatalf("window %d: search ends at %d (bound %.1f), optimum %d", k, st.best, st.bound, opt[k])
		}
		checkIncumbent(t, st, p, opt[k], "rcSearch")
		rounds += st.stats.RCRounds
	}
	t.Logf("%d windows proven; %d target rounds in all", len(ps), rounds)
}

// TestResidualDP: keeping some blocks of an optimal allocation, the
// residual DP re-places the others at exactly the optimum's remaining cost.
func TestResidualDP(t *testing.T) {
	ps, opt := mediumProblems(t, 80, 51)
	rng := rand.New(rand.NewPCG(3, 4))
	for k, p := range ps {
		st := optimalSearch(t, p, opt[k])
		used := make([]bool, st.nq)
		left := make([]int, len(st.eps))
		var keptCost int64
		for s, is := range st.starts {
			for _, i := range is {
				if rng.IntN(3) == 0 {
					left[s]++
					continue
				}
				keptCost += st.g.Cost[s][i]
				for d := range st.g.Sizes[s] {
					used[(i+d)%st.nq] = true
				}
			}
		}
		starts, ok := st.residualDP(context.Background(), used, left, 4_000_000)
		if !ok {
			t.Fatalf("window %d: residual DP failed (nil starts: %v)", k, starts == nil)
		}
		var c int64
		for s, is := range starts {
			if len(is) != left[s] {
				t.Fatalf("window %d: %d blocks of size index %d placed, %d left", k, len(is), s, left[s])
			}
			for _, i := range is {
				c += st.g.Cost[s][i]
				for d := range st.g.Sizes[s] {
					if used[(i+d)%st.nq] {
						t.Fatalf("window %d: residual block overlaps", k)
					}
					used[(i+d)%st.nq] = true
				}
			}
		}
		if c+keptCost != opt[k] {
			t.Fatalf("window %d: kept %d + residual %d != optimum %d", k, keptCost, c, opt[k])
		}
	}
}

// TestMasterMatchesGonum solves random master LPs with the revised
// simplex (box dropped) and with gonum's simplex: same optimal value, and
// the duals price every column at a non-negative reduced cost.
func TestMasterMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 300 {
		D := 1 + rng.IntN(6)
		eps := make([]int, D)
		lambda := make([]float64, D)
		for s := range eps {
			eps[s] = 1 + rng.IntN(3)
			lambda[s] = 50 * rng.Float64()
		}
		ms := newMasterFor(eps, 1e4, lambda)
		type col struct {
			n []int
			c float64
		}
		var cols []col
		// A column meeting the counts keeps the LP feasible.
		cols = append(cols, col{append([]int(nil), eps...), 100 + 400*rng.Float64()})
		// Expensive columns e_s + e_conv and e_conv give gonum's standard
		// form full row rank.
		for s := range D + 1 {
			n := make([]int, D)
			if s < D {
				n[s] = 1
			}
			cols = append(cols, col{n, 1e6})
		}
		for range 1 + rng.IntN(25) {
			n := make([]int, D)
			for s := range n {
				n[s] = rng.IntN(eps[s] + 2)
			}
			cols = append(cols, col{n, 400 * rng.Float64()})
		}
		for _, c := range cols {
			ms.add(nil, c.n, c.c)
		}
		for !math.IsInf(ms.width, 1) {
			ms.widen()
		}
		_, _, z := ms.solve()
		// Standard form for gonum: rows = sizes + convexity.
		A := mat.NewDense(D+1, len(cols), nil)
		cv := make([]float64, len(cols))
		b := make([]float64, D+1)
		for s, e := range eps {
			b[s] = float64(e)
		}
		b[D] = 1
		for j, c := range cols {
			for s, n := range c.n {
				A.Set(s, j, float64(n))
			}
			A.Set(D, j, 1)
			cv[j] = c.c
		}
		want, _, err := lp.Simplex(cv, A, b, 1e-10, nil)
		if err != nil {
			t.Fatalf("trial %d: gonum: %v", trial, err)
		}
		if ms.artificial() || math.Abs(z-want) > 1e-6*max(1, math.Abs(want)) {
			t.Fatalf("trial %d: master %.9g (artificial basic: %v), gonum %.9g", trial, z, ms.artificial(), want)
		}
		pi, pi0, _ := ms.solve()
		for j, c := range cols {
			rc := c.c - pi0
			for s, n := range c.n {
				rc -= pi[s] * float64(n)
			}
			if rc < -1e-6 {
				t.Fatalf("trial %d: column %d prices out at the optimum (%.9g)", trial, j, rc)
			}
		}
	}
}

// TestLNS runs the large-neighbourhood search from the sequential
// placement: every incumbent it makes is a valid allocation no cheaper
// than the optimum, and it improves the start on most windows where the
// start is not optimal.
func TestLNS(t *testing.T) {
	ps, opt := mediumProblems(t, 80, 61)
	improved, room := 0, 0
	for k, p := range ps {
		st, err := newSearch(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		start := st.best
		if start > opt[k] {
			room++
		}
		st.lns(context.Background(), rand.New(rand.NewPCG(uint64(k), 1)), 20*time.Millisecond, 50_000)
		checkIncumbent(t, st, p, opt[k], "lns")
		if st.best < start {
			improved++
		}
	}
	if room < 10 || improved < room/2 {
		t.Errorf("lns improved the start on %d of the %d windows where it was not optimal", improved, room)
	}
	t.Logf("lns improved the greedy/sequential start on %d of the %d windows where it was not optimal", improved, room)
}
