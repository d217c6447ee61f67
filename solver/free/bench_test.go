package free_test

import (
	"context"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
	"github.com/optsched/optsched/solver/free"
)

// benchPaper solves, per iteration, the next of 60 windows of bench scas's
// paper class (windows 0–59 of seed 1, ≤ 5 multi-node jobs) with s, to
// completion: the free solver's time to its proof, beside csp's to the
// SCAS optimum on the same windows (BenchmarkPaperClassSCAS).
func benchPaper(b *testing.B, s solver.Solver) {
	var ps []*solver.Problem
	for k := range uint64(60) {
		w := paperWindow(b, k)
		ps = append(ps, solver.NewProblem(w, model.SelectJobs(w, 5).Multi))
	}
	k := 0
	for b.Loop() {
		r, err := s.Solve(context.Background(), ps[k%len(ps)])
		if err != nil || r.Status != solver.Optimal {
			b.Fatalf("window %d: %v %v", k%len(ps), r.Status, err)
		}
		k++
	}
}

func BenchmarkPaperClassFree(b *testing.B) { benchPaper(b, free.Solver{}) }
func BenchmarkPaperClassSCAS(b *testing.B) { benchPaper(b, csp.Solver{}) }
