package solver_test

import (
	"context"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
	"github.com/optsched/optsched/solver/clp"
	"github.com/optsched/optsched/solver/csp"
	"github.com/optsched/optsched/solver/free"
	"github.com/optsched/optsched/solver/lpsolve"
)

// TestExactSolversPublish: every exact whole-node solver publishes to
// the problem's Publisher: by the time it returns, the publisher holds an
// incumbent no worse than its answer and a bound no better than its
// answer's (equal to both when it proved its answer optimal).
func TestExactSolversPublish(t *testing.T) {
	w, err := instances.Load("example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	sel := model.SelectJobs(w, 3) // brute enumerates 127³ starts
	solvers := []solver.Solver{csp.Solver{}, free.Solver{}, brute.Solver{}}
	if lpsolve.Available {
		solvers = append(solvers, lpsolve.Solver{})
	}
	if clp.Available {
		solvers = append(solvers, clp.Solver{})
	}
	for _, s := range solvers {
		board := solver.NewBoard()
		p := solver.NewProblem(w, sel.Multi)
		p.Publisher = board
		res, err := s.Solve(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
		allocs, obj, bound, ok := board.Best()
		switch {
		case !ok || obj > res.Objective || solver.Objective(w, allocs) != obj:
			t.Errorf("%s: published %v objective %d; answered %v %d", s.Name(), ok, obj, res.Status, res.Objective)
		case res.HasBound() && !(bound >= res.Bound-1e-9 && bound <= float64(res.Objective)):
			t.Errorf("%s: published bound %v; answered bound %v, objective %d", s.Name(), bound, res.Bound, res.Objective)
		case res.Status == solver.Optimal && (obj != res.Objective || bound != float64(obj)):
			t.Errorf("%s: optimal %d, published %d with bound %v", s.Name(), res.Objective, obj, bound)
		}
	}
}
