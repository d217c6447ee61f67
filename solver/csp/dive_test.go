package csp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// TestRestrictedColgen keeps a random part of an optimal allocation (and
// bans a random block the optimum does not use) and runs column
// generation on the residual problem to convergence: every packing it
// generates avoids the kept positions and the banned block, and its bound
// plus the kept cost never exceeds the optimum (which completes the
// restriction). A pricer that blocked too much would break the second
// check, one that blocked too little the first.
func TestRestrictedColgen(t *testing.T) {
	ps, opt := mediumProblems(t, 100, 61)
	rng := rand.New(rand.NewPCG(5, 6))
	tight := 0
	for k, p := range ps {
		st := optimalSearch(t, p, opt[k])
		rs := newRestriction(st)
		inOpt := map[block]bool{}
		for s, is := range st.starts {
			for _, i := range is {
				inOpt[block{s, i}] = true
				if rng.IntN(3) == 0 && !rs.take(st, block{s, i}) {
					t.Fatalf("window %d: could not keep a block of the optimum", k)
				}
			}
		}
		for range 20 {
			s := rng.IntN(len(st.eps))
			b := block{s, rng.IntN(st.nq)}
			if !inOpt[b] && !rs.blocked(st, b.s, b.i) {
				rs.banned[b] = true
				break
			}
		}
		_, ms, lb := st.colgenOn(context.Background(), st.trivialLambda(), rs, nil, 5000)
		if lb+float64(rs.keptCost) > float64(opt[k])+1e-6 {
			t.Fatalf("window %d: residual bound %.3f + kept %d above the optimum %d", k, lb, rs.keptCost, opt[k])
		}
		if lb+float64(rs.keptCost) > float64(opt[k])-1 {
			tight++
		}
		for j := ms.nart; j < len(ms.cols); j++ {
			for s, is := range ms.starts[j] {
				for _, i := range is {
					if rs.blocked(st, s, i) {
						t.Fatalf("window %d: a generated packing uses block (%d, %d), kept over or banned", k, s, i)
					}
				}
			}
		}
	}
	t.Logf("%d windows; residual bound meets the optimum on %d", len(ps), tight)
}

// TestDive: with residual DPs capped small, so that the dive has to fix
// blocks round after round, it returns valid allocations never below the
// optimum on windows with known optima.
func TestDive(t *testing.T) {
	ps, opt := mediumProblems(t, 120, 71)
	dived, reached := 0, 0
	for k, p := range ps {
		st, lambda, ms := colgenSearch(t, p)
		if st.provenOptimal() {
			continue
		}
		dived++
		st.dive(context.Background(), ms, lambda, 8, 600)
		checkIncumbent(t, st, p, opt[k], "dive")
		if st.best == opt[k] {
			reached++
		}
	}
	t.Logf("%d windows left unproven by column generation; the dive ends at the optimum on %d", dived, reached)
}

// TestDiveBeatsFixing compares, on tight mid-size fat-tree windows (k=16,
// 300–800 idle nodes, 20–60 jobs, most of the idle nodes requested), the
// dive with fixing from the first master solution alone (fixAndSolve),
// both with residual DPs capped at 20,000 cells: the dive, which re-solves
// the master after every round of fixings, must find the better
// incumbent more often than the worse, and every incumbent passes
// model.Check.
func TestDiveBeatsFixing(t *testing.T) {
	if testing.Short() {
		t.Skip("column generation on 30 mid-size windows")
	}
	const cells = 20_000
	better, worse, tried := 0, 0, 0
	for k := range 30 {
		rng := rand.New(rand.NewPCG(81, uint64(k)))
		cfg := instances.PaperGenConfig()
		cfg.Seed = uint64(1000 + k)
		cfg.Layout = nil
		cfg.FatTree = &model.FatTreeSpec{K: 16}
		cfg.Idle = 300 + rng.IntN(501)
		cfg.Jobs = 20 + rng.IntN(41)
		w, err := instances.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sel := model.SelectJobs(w, 0)
		p := solver.NewProblem(w, sel.Multi)
		st, lambda, ms := colgenSearch(t, p)
		if st.provenOptimal() {
			continue
		}
		tried++
		lb := int64(math.Ceil(st.bound - 1e-6))
		fix, _ := newSearch(p, nil)
		fix.fixAndSolve(context.Background(), ms, cells)
		checkIncumbent(t, fix, p, lb, "fixAndSolve")
		dv, _ := newSearch(p, nil)
		dv.dive(context.Background(), ms, lambda, 8, cells)
		checkIncumbent(t, dv, p, lb, "dive")
		switch {
		case dv.best < fix.best:
			better++
		case dv.best > fix.best:
			worse++
		}
	}
	t.Logf("%d windows unproven by column generation: the dive is better on %d, worse on %d", tried, better, worse)
	if tried < 10 {
		t.Fatalf("only %d windows need a dive: the test is too weak", tried)
	}
	if better <= worse {
		t.Fatalf("the dive does not beat fixing from one master solution: better on %d, worse on %d", better, worse)
	}
}
