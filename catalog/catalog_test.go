package catalog_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/clp"
	"github.com/optsched/optsched/solver/lpsolve"
)

// TestEveryEntryBuilds: every whole-node name builds (the cgo back ends
// say so when they are not linked) and solves the example window to an
// allocation model.Check accepts; every cp name builds as a scheduler and
// refuses a whole-node window; an exact name comes wrapped in a
// portfolio, a heuristic alone.
func TestEveryEntryBuilds(t *testing.T) {
	w, err := instances.Load("example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	names := catalog.Names()
	if !slices.IsSorted(names) || len(names) != len(catalog.Entries()) {
		t.Fatalf("names %v", names)
	}
	for _, e := range catalog.Entries() {
		if e.Encoding == catalog.CP {
			if slices.Contains(catalog.WholeNode(), e.Name) {
				t.Errorf("%s: a cp scheduler among the whole-node solvers", e.Name)
			}
			if _, err := catalog.Scheduler(e.Name, catalog.Options{}); err != nil {
				t.Errorf("%s: %v", e.Name, err)
			}
			if _, err := catalog.Solver(e.Name, catalog.Options{}); !errors.Is(err, catalog.ErrUnknown) {
				t.Errorf("%s as a whole-node solver: %v", e.Name, err)
			}
			continue
		}
		s, err := catalog.Solver(e.Name, catalog.Options{Seed: 1})
		if errors.Is(err, lpsolve.ErrUnavailable) || errors.Is(err, clp.ErrUnavailable) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if _, isPF := s.(solver.Portfolio); isPF != e.Exact {
			t.Errorf("%s: exact %v, built %T", e.Name, e.Exact, s)
		}
		if e.Name == "brute" {
			continue // tiny windows only
		}
		res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{TimeLimit: 0})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		if err := model.Check(w, res.Allocations); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
	}
}

// TestUnknownNames: a name the catalogue does not know, a fallback it does
// not know, and a whole-node name asked to schedule the cp model are
// ErrUnknown errors that list what is known.
func TestUnknownNames(t *testing.T) {
	if _, err := catalog.Solver("cbc", catalog.Options{}); !errors.Is(err, catalog.ErrUnknown) || !strings.Contains(err.Error(), "known: bnb, brute, clp, csp") {
		t.Errorf("unknown solver: %v", err)
	}
	if _, err := catalog.Solver("csp", catalog.Options{Fallback: "tabu"}); !errors.Is(err, catalog.ErrUnknown) {
		t.Errorf("unknown fallback: %v", err)
	}
	if _, err := catalog.Scheduler("csp", catalog.Options{}); !errors.Is(err, catalog.ErrUnknown) || !strings.Contains(err.Error(), "does not schedule the cp encoding") {
		t.Errorf("csp as a cp scheduler: %v", err)
	}
	if _, err := catalog.Scheduler("bnb", catalog.Options{CHWeight: 1}); !errors.Is(err, catalog.ErrUnknown) {
		t.Errorf("a CH weight for bnb: %v", err)
	}
}

// TestPresets: SA's zero options are Table I, its options override them;
// the fallbacks wrap as named; the list schedules are PBSWalltime then
// PBSFifo.
func TestPresets(t *testing.T) {
	d := heuristics.DefaultAnneal()
	if a := catalog.Anneal(catalog.Options{Seed: d.Seed}); a.Tmax != d.Tmax || a.Tmin != d.Tmin || a.Steps != d.Steps || a.Destroy != d.Destroy || a.Q != d.Q {
		t.Errorf("zero SA options: %+v, want Table I %+v", a, d)
	}
	if a := catalog.Anneal(catalog.Options{SA: catalog.SAParams{Steps: 1000, Q: 7}}); a.Steps != 1000 || a.Q != 7 || a.Tmax != d.Tmax {
		t.Errorf("SA options: %+v", a)
	}
	for fb, want := range map[string]string{"": "csp+sa", "sa": "csp+sa", "nsa": "csp+nsa", "none": "csp"} {
		s, err := catalog.Solver("csp", catalog.Options{Fallback: fb})
		if err != nil || s.Name() != want {
			t.Errorf("fallback %q: %v, %v", fb, s, err)
		}
	}
	var got []string
	for _, h := range catalog.ListSchedulers() {
		got = append(got, h.Name())
	}
	if strings.Join(got, ",") != "pbs-walltime,pbs-fifo" {
		t.Errorf("list schedules %v", got)
	}
}
