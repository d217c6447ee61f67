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
			if slices.Contains(catalog.WholeNodeNames(), e.Name) {
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

// TestValidate: one check for both models, its errors typed and
// wrapping ErrUnknown, before anything is built.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		spec catalog.Spec
		// want: "" valid, "name", or the OptionError's option.
		want string
	}{
		{catalog.Spec{Name: "csp"}, ""},
		{catalog.Spec{Name: "sat"}, ""},
		{catalog.Spec{Name: "sat", Encoding: catalog.CP, Options: catalog.Options{CHWeight: 2, Fallback: "none"}}, ""},
		{catalog.Spec{Name: "free", Encoding: catalog.DCAS}, ""},
		{catalog.Spec{Name: "slurm", Model: catalog.WholeNode, Options: catalog.Options{Fallback: "nsa"}}, ""},
		{catalog.Spec{Name: "cbc"}, "name"},
		{catalog.Spec{Name: "sat", Model: catalog.WholeNode}, "name"},
		{catalog.Spec{Name: "csp", Model: catalog.TimeResource}, "name"},
		{catalog.Spec{Name: "csp", Encoding: catalog.SCAS}, "name"},
		{catalog.Spec{Name: "csp", Encoding: catalog.CP}, "name"},
		{catalog.Spec{Name: "sat", Encoding: catalog.CSP}, "name"},
		{catalog.Spec{Name: "csp", Encoding: "tabu"}, "Encoding"},
		{catalog.Spec{Name: "csp", Options: catalog.Options{Fallback: "pbs"}}, "Fallback"},
		{catalog.Spec{Name: "sat", Options: catalog.Options{Fallback: "sa"}}, "Fallback"},
		{catalog.Spec{Name: "sat", Options: catalog.Options{CHWeight: -1}}, "CHWeight"},
		{catalog.Spec{Name: "bnb", Options: catalog.Options{CHWeight: 1}}, "CHWeight"},
		{catalog.Spec{Name: "csp", Options: catalog.Options{CHWeight: 1}}, "CHWeight"},
	} {
		err := catalog.Validate(c.spec)
		var ne *catalog.NameError
		var oe *catalog.OptionError
		got := ""
		switch {
		case errors.As(err, &ne):
			got = "name"
		case errors.As(err, &oe):
			got = oe.Option
		case err != nil:
			got = "untyped: " + err.Error()
		}
		if got != c.want || err != nil && !errors.Is(err, catalog.ErrUnknown) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
		// What Validate refuses, the builders refuse with the same error.
		if err != nil {
			_, serr := c.spec.Solver()
			_, cerr := c.spec.Scheduler()
			if serr == nil || cerr == nil {
				t.Errorf("%+v: built despite %v (solver %v, scheduler %v)", c.spec, err, serr, cerr)
			}
		}
	}
}

// TestOneConstructorPerEntry: every entry builds through its model's
// builder and is refused by the other's; its encoding is one a command
// may ask for (or tree, whose heuristics any whole-node encoding takes).
func TestOneConstructorPerEntry(t *testing.T) {
	for _, e := range catalog.Entries() {
		_, serr := catalog.Spec{Name: e.Name, Model: catalog.WholeNode}.Solver()
		_, cerr := catalog.Spec{Name: e.Name}.Scheduler()
		if errors.Is(serr, lpsolve.ErrUnavailable) || errors.Is(serr, clp.ErrUnavailable) {
			serr = nil
		}
		if whole := e.Model() == catalog.WholeNode; whole != (serr == nil) || whole == (cerr == nil) {
			t.Errorf("%s (%s): as a solver %v, as a scheduler %v", e.Name, e.Encoding, serr, cerr)
		}
		if !slices.Contains(catalog.Encodings(), e.Encoding) && e.Encoding != catalog.Tree {
			t.Errorf("%s: encoding %q is not among %v", e.Name, e.Encoding, catalog.Encodings())
		}
	}
}

// TestPartialPresets: the PBS cycle's presets are sat seeded by the list
// schedules, then PBSFifo truncated; its window fallbacks Slurm then Seq.
func TestPartialPresets(t *testing.T) {
	var got []string
	for _, s := range catalog.PartialSchedulers() {
		got = append(got, s.Name())
	}
	if strings.Join(got, ",") != "sat,pbs-fifo" {
		t.Errorf("partial schedulers %v", got)
	}
	if h, ok := catalog.PartialSchedulers()[1].(heuristics.PBSList); !ok || !h.Truncate {
		t.Errorf("the FIFO list schedule is not truncated: %#v", catalog.PartialSchedulers()[1])
	}
	got = nil
	for _, s := range catalog.WindowFallbacks() {
		got = append(got, s.Name())
	}
	if strings.Join(got, ",") != "slurm,seq" {
		t.Errorf("window fallbacks %v", got)
	}
}
