package solver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// canned is a Scheduler that returns a schedule of the given status and
// objective, or err.
type canned struct {
	name   string
	status solver.Status
	obj    float64
	err    error
}

func (f canned) Name() string { return f.name }

func (f canned) Solve(context.Context, *solver.ScheduleProblem) (*solver.Schedule, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &solver.Schedule{Status: f.status, Objective: f.obj}, nil
}

// TestBestInitial: the least cost wins (the first of equals), schedules
// of status unknown or infeasible are skipped, none gives ok false, and
// a scheduler's or the reader's error names the scheduler.
func TestBestInitial(t *testing.T) {
	read := func(s *solver.Schedule) (float64, int64, error) {
		if s.Objective < 0 {
			return 0, 0, errors.New("negative")
		}
		return s.Objective, int64(s.Objective), nil
	}
	run := func(hs ...solver.Scheduler) (float64, string, bool, error) {
		return solver.BestInitial(context.Background(), &solver.ScheduleProblem{Window: &model.Window{}}, hs, read)
	}
	best, from, ok, err := run(canned{"a", solver.Feasible, 7, nil}, canned{"b", solver.Unknown, 1, nil},
		canned{"c", solver.Fallback, 5, nil}, canned{"d", solver.Infeasible, 2, nil}, canned{"e", solver.Feasible, 5, nil})
	if err != nil || !ok || best != 5 || from != "c" {
		t.Errorf("got %v from %q (ok %v, err %v), want 5 from c", best, from, ok, err)
	}
	if _, _, ok, err := run(canned{"b", solver.Unknown, 1, nil}); ok || err != nil {
		t.Errorf("no schedule: ok %v err %v, want false and nil", ok, err)
	}
	for _, h := range []solver.Scheduler{canned{"x", 0, 0, errors.New("boom")}, canned{"x", solver.Feasible, -1, nil}} {
		if _, _, _, err := run(canned{"a", solver.Feasible, 3, nil}, h); err == nil || !strings.Contains(err.Error(), "initial x") {
			t.Errorf("error %v, want one naming initial x", err)
		}
	}
}
