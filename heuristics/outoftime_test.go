package heuristics_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// TestSlurmOutOfTime: slurm whose context ends after k jobs places those
// k by its rules (as the full run does) and the rest first-fit, counted
// in first_fit_jobs; every answer places every job and passes
// model.Check, on random windows of the three topology kinds.
func TestSlurmOutOfTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 5))
	for i := range 150 {
		w := randomWindow(t, rng, i%3)
		sel := model.SelectJobs(w, 0)
		if len(sel.Multi) == 0 {
			continue
		}
		p := solver.NewProblem(w, sel.Multi)
		full, err := heuristics.Slurm{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{0, 1, len(sel.Multi) / 2, len(sel.Multi)} {
			res, err := heuristics.Slurm{}.Solve(&errAfter{Context: context.Background(), n: k}, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := model.Check(w, res.Allocations); err != nil {
				t.Fatalf("window %d, stop after %d: %v", i, k, err)
			}
			if len(res.Allocations) != len(sel.Multi) || res.Objective != solver.Objective(w, res.Allocations) {
				t.Fatalf("window %d, stop after %d: %d allocations of %d, objective %d", i, k, len(res.Allocations), len(sel.Multi), res.Objective)
			}
			if late := len(sel.Multi) - k; firstFit(res) != late {
				t.Fatalf("window %d, stop after %d: first_fit_jobs %v, want %d", i, k, firstFit(res), late)
			}
			for a := range k {
				if !equalInts(res.Allocations[a].Nodes, full.Allocations[a].Nodes) {
					t.Fatalf("window %d, stop after %d: job %d on %v, the full run's %v", i, k, a, res.Allocations[a].Nodes, full.Allocations[a].Nodes)
				}
			}
		}
	}
}

// TestAnnealOutOfTime: SA whose context ends before it has set up answers
// its initial solution — Seq's, or the warm start's — priced, feasible,
// and refuses a warm start that does not match the problem.
func TestAnnealOutOfTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 6))
	for i := range 60 {
		w := randomWindow(t, rng, i%3)
		sel := model.SelectJobs(w, 0)
		if len(sel.Multi) == 0 {
			continue
		}
		p := solver.NewProblem(w, sel.Multi)
		seq, err := heuristics.Seq{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		warm, err := heuristics.Slurm{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, stop := range []int{0, 1, 2} { // at the start, after the warm start's load, while pricing
			for _, tc := range []struct {
				a    heuristics.Anneal
				want *solver.Result
			}{{heuristics.DefaultAnneal(), seq}, {heuristics.DefaultAnneal().WithInitial(warm.Allocations).(heuristics.Anneal), warm}} {
				res, err := tc.a.Solve(&errAfter{Context: context.Background(), n: stop}, p)
				if err != nil {
					t.Fatal(err)
				}
				if err := model.Check(w, res.Allocations); err != nil {
					t.Fatalf("window %d: %v", i, err)
				}
				if res.Objective > tc.want.Objective || res.Objective != solver.Objective(w, res.Allocations) || len(res.Allocations) != len(sel.Multi) {
					t.Fatalf("window %d, stop %d: objective %d, initial %d", i, stop, res.Objective, tc.want.Objective)
				}
			}
		}
		if len(sel.Multi) < 2 {
			continue
		}
		bad := append([]model.Allocation(nil), warm.Allocations[1:]...)
		if _, err := heuristics.DefaultAnneal().WithInitial(bad).Solve(&errAfter{Context: context.Background()}, p); err == nil {
			t.Fatalf("window %d: a warm start missing a job was taken", i)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// errAfter is a context whose Err turns to Canceled after n calls.
type errAfter struct {
	context.Context
	n int
}

func (s *errAfter) Err() error {
	if s.n--; s.n < 0 {
		return context.Canceled
	}
	return nil
}

// firstFit is the Slurm allocator's count of jobs placed first-fit.
func firstFit(res *solver.Result) int {
	if res.Stats.Slurm == nil {
		return 0
	}
	return res.Stats.Slurm.FirstFitJobs
}
