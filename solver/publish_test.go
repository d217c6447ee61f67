package solver_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
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

// keeper is a publisher that builds every incumbent offered and keeps
// what build returns as it is, as a Board does, with a copy of it made
// at the time.
type keeper struct {
	kept, copies [][]model.Allocation
}

func (k *keeper) Offer(_ int64, _ string, allocs []model.Allocation, build func() []model.Allocation) {
	if allocs != nil || build == nil {
		return
	}
	a := build()
	cp := make([]model.Allocation, len(a))
	for i := range a {
		cp[i] = a[i]
		cp[i].Nodes = slices.Clone(a[i].Nodes)
	}
	k.kept, k.copies = append(k.kept, a), append(k.copies, cp)
}

func (*keeper) Raise(float64) {}

// TestBuildsAreFresh: the allocations an exact solver's build returns
// (csp, free and brute offer their incumbents so) are made for the call
// — the Board keeps them without a copy. Every incumbent each solver
// offers on seeded random windows is built and kept; after the solve,
// the window's idle and running lists are overwritten, as the simulator
// does with the next window's; every allocation kept must still be as
// built (a build into a buffer reused by the next one, or a node list
// that is a slice of the window's, would show).
func TestBuildsAreFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	built := 0
	for i := range 300 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 24, 4)
		sel := model.SelectJobs(w, 3)
		if len(sel.Multi) == 0 {
			continue
		}
		for _, s := range []solver.Solver{csp.Solver{}, free.Solver{}, brute.Solver{}} {
			k := &keeper{}
			p := solver.NewProblem(w, sel.Multi)
			p.Publisher = k
			// A copy of the window, whose lists are then overwritten.
			wc := *w
			wc.Idle = slices.Clone(w.Idle)
			wc.Running = slices.Clone(w.Running)
			for r := range wc.Running {
				wc.Running[r].Nodes = slices.Clone(w.Running[r].Nodes)
			}
			p.Window = &wc
			if _, err := s.Solve(context.Background(), p); err != nil {
				t.Fatalf("window %d, %s: %v", i, s.Name(), err)
			}
			for j := range wc.Idle {
				wc.Idle[j] = -1
			}
			for _, r := range wc.Running {
				for j := range r.Nodes {
					r.Nodes[j] = -1
				}
			}
			for n := range k.kept {
				if !reflect.DeepEqual(k.kept[n], k.copies[n]) {
					t.Fatalf("window %d, %s: incumbent %d changed after it was built: %v, built %v", i, s.Name(), n, k.kept[n], k.copies[n])
				}
			}
			built += len(k.kept)
		}
	}
	if built < 300 {
		t.Errorf("%d incumbents built: too few", built)
	}
	t.Logf("%d incumbents built", built)
}
