package solver_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// fakeScheduler answers with whatever its function makes of a good
// schedule, to exercise the time-and-resource checks of SolveWindow.
type fakeScheduler struct {
	spoil func(w *model.Window, s *solver.Schedule)
}

func (fakeScheduler) Name() string { return "fake" }

func (f fakeScheduler) Solve(ctx context.Context, p *solver.ScheduleProblem) (*solver.Schedule, error) {
	s, err := heuristics.PBSFifo().Solve(ctx, p)
	if err != nil {
		return nil, err
	}
	out := *s
	out.Allocations = slices.Clone(s.Allocations)
	out.Deferred = slices.Clone(s.Deferred)
	f.spoil(p.Window, &out)
	return &out, nil
}

// TestSolveWindowCatchesBadSchedules: the one verification of
// SolveWindow holds a scheduler to every job scheduled or deferred once,
// units allocations on the grid, model.Check, its objective and a bound
// at most the objective; each failure is an ErrSolverBug. The unspoiled
// schedule passes, so that each case fails for its own reason.
func TestSolveWindowCatchesBadSchedules(t *testing.T) {
	const g = 10
	w, err := instances.RandomCPWindow(rand.New(rand.NewPCG(38, 1)), 3, 4, g)
	if err != nil {
		t.Fatal(err)
	}
	opt := solver.Options{Granularity: g}
	good, err := solver.SolveWindow(context.Background(), w, fakeScheduler{func(*model.Window, *solver.Schedule) {}}, opt)
	if err != nil || len(good.Allocations) < 2 {
		t.Fatalf("unspoiled: %v (%d allocations), want a schedule of at least 2 jobs", err, len(good.Allocations))
	}
	price := func(w *model.Window, s *solver.Schedule) { s.Objective = model.WeightedQueueTime(w, s.Allocations) }
	cases := []struct {
		name  string
		spoil func(w *model.Window, s *solver.Schedule)
		want  string
	}{
		{"missing job", func(w *model.Window, s *solver.Schedule) { s.Allocations = s.Allocations[1:]; price(w, s) }, "left unallocated"},
		{"scheduled and deferred", func(w *model.Window, s *solver.Schedule) {
			s.Deferred = append(s.Deferred, model.Deferral{Job: s.Allocations[0].Job, Reason: "twice"})
		}, "deferred twice"},
		{"deferred twice", func(w *model.Window, s *solver.Schedule) {
			j := s.Allocations[0].Job
			s.Allocations = s.Allocations[1:]
			s.Deferred = append(s.Deferred, model.Deferral{Job: j}, model.Deferral{Job: j})
			price(w, s)
		}, "deferred 2 times"},
		{"unknown job", func(w *model.Window, s *solver.Schedule) {
			s.Deferred = append(s.Deferred, model.Deferral{Job: len(w.Jobs)})
		}, "not asked for"},
		{"off the grid", func(w *model.Window, s *solver.Schedule) { s.Allocations[0].Start++; price(w, s) }, "off the"},
		{"not units", func(w *model.Window, s *solver.Schedule) { s.Allocations[0].Units = nil }, "not a units allocation"},
		{"wrong objective", func(w *model.Window, s *solver.Schedule) { s.Objective++ }, "reported objective"},
		{"bound above objective", func(w *model.Window, s *solver.Schedule) { s.Bound = s.Objective + 1 }, "bound"},
		{"unknown with a schedule", func(w *model.Window, s *solver.Schedule) { s.Status = solver.Unknown }, "with an allocation"},
		{"CH weight without its term", func(w *model.Window, s *solver.Schedule) { s.CHWeight = 1 }, "reported objective"},
	}
	for _, c := range cases {
		_, err := solver.SolveWindow(context.Background(), w, fakeScheduler{c.spoil}, opt)
		if !errors.Is(err, solver.ErrSolverBug) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrSolverBug with %q", c.name, err, c.want)
		}
	}
}

// TestSolveWindowWholeNodeDefersNone: a whole-node solver's answer with
// a deferral is a bug (the selection defers, not the solver).
func TestSolveWindowWholeNodeDefersNone(t *testing.T) {
	w := load(t)
	_, err := solver.SolveWindow(context.Background(), w, fake{func(p *solver.Problem) (*solver.Result, error) {
		r := place(w, p, []int{4, 5}, []int{0, 1, 2})
		r.Allocations = r.Allocations[:1] // a job placed, the other deferred: each accounted once
		r.Objective = solver.Objective(w, r.Allocations)
		r.Deferred = []model.Deferral{{Job: p.Jobs[1], Reason: "mine"}}
		return r, nil
	}}, solver.Options{})
	if !errors.Is(err, solver.ErrSolverBug) || !strings.Contains(err.Error(), "from a whole-node solver") {
		t.Errorf("error %v, want ErrSolverBug about the deferral", err)
	}
}
