package sim

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// badSolver answers as Seq, but once, at its at-th answer that can be
// spoilt so, spoils it (kind): a node given twice within a job or to two
// jobs, a busy node, a node of the topology off the cluster (the
// checker's and startable's cases), or a job given a node too few, or
// started before the window (the checker's alone). Its objective is
// priced again, so that only model.Check can tell. (A node off the
// topology is not among them: SolveWindow's pricing of the objective
// panics on it, before model.Check, with or without the checker.)
type badSolver struct {
	kind    string
	at      int
	seen    int
	spoilt  int64 // the window time of the spoilt answer, −1 before
	offNode int   // a node of the topology off the cluster
}

func (*badSolver) Name() string { return "bad" }

func (b *badSolver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	res, err := heuristics.Seq{}.Solve(ctx, p)
	if err != nil || len(res.Allocations) == 0 {
		return res, err
	}
	w, as := p.Window, res.Allocations
	if b.spoilt >= 0 || !b.can(w, as) {
		return res, nil
	}
	if b.seen++; b.seen-1 != b.at {
		return res, nil
	}
	for i := range as {
		as[i].Nodes = slices.Clone(as[i].Nodes)
	}
	switch b.kind {
	case "twice in a job":
		as[0].Nodes[1] = as[0].Nodes[0]
	case "twice across jobs":
		as[1].Nodes[0] = as[0].Nodes[0]
	case "busy":
		as[0].Nodes[0] = w.Running[0].Nodes[0]
	case "off the cluster":
		as[0].Nodes[0] = b.offNode
	case "a node short":
		as[0].Nodes = as[0].Nodes[1:]
	case "early":
		as[0].Start = w.Time - 1
	}
	b.spoilt = w.Time
	res.Status, res.Bound, res.Objective = solver.Feasible, solver.NoBound, solver.Objective(w, as)
	return res, nil
}

// can reports whether an answer of as to w can be spoilt as b's kind.
func (b *badSolver) can(w *model.Window, as []model.Allocation) bool {
	switch b.kind {
	case "twice across jobs":
		return len(as) >= 2
	case "busy":
		return len(w.Running) > 0
	}
	return true
}

// synchronous reports whether b's kind stops the window policy at the
// spoilt window (startable), not at a later one or at the end.
func (b *badSolver) synchronous() bool { return b.kind != "a node short" && b.kind != "early" }

// TestWindowCheckAsSolveWindow runs the window policy with Check on a
// prefix of KTH SP2 (100 nodes of a 120-node layout), its windows checked
// by the checker (on their nodes, beside the simulation) and by
// SolveWindow's own model.Check of the whole window (ownWindowCheck, as
// before the checker took them on). With a sound solver the two runs
// agree; with one that spoils one answer, at the first, a middle and the
// last window it can, both fail with the same error — model.Check's, as
// SolveWindow words it — the checker's at that window when starting the
// answer would break the cluster's state, else at a later one or at the
// end.
func TestWindowCheckAsSolveWindow(t *testing.T) {
	tr, err := trace.Open("../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz", "", trace.Options{MaxJobs: 800})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := model.NewLayout(3, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	run := func(s solver.Solver, own bool) (*Result, []int64, error) {
		var windows []int64
		cfg := Config{Topology: topo, Nodes: 100, Policy: "window", Tau: 60, Solver: s, MaxJobs: 5, Check: true, ownWindowCheck: own,
			windowHook: func(t int64, skipped bool, _ int) {
				if !skipped {
					windows = append(windows, t)
				}
			}}
		r, err := Run(context.Background(), tr, cfg)
		if r != nil {
			r.SolveTimes = nil
		}
		return r, windows, err
	}
	for _, kind := range []string{"twice in a job", "twice across jobs", "busy", "off the cluster", "a node short", "early"} {
		count := &badSolver{kind: kind, at: -1, spoilt: -1}
		checked, _, err := run(count, false)
		if err != nil {
			t.Fatalf("%s: sound answers: %v", kind, err)
		}
		own, _, err := run(&badSolver{kind: kind, at: -1, spoilt: -1}, true)
		if err != nil || !reflect.DeepEqual(checked, own) {
			t.Fatalf("%s: sound answers: checked by the checker and by SolveWindow, the runs differ (%v)", kind, err)
		}
		if count.seen < 10 {
			t.Fatalf("%s: %d answers can be spoilt: too few", kind, count.seen)
		}
		for _, at := range []int{0, count.seen / 2, count.seen - 1} {
			b := &badSolver{kind: kind, at: at, spoilt: -1, offNode: 105}
			_, windows, err := run(b, false)
			_, _, want := run(&badSolver{kind: kind, at: at, spoilt: -1, offNode: 105}, true)
			if b.spoilt < 0 || err == nil || want == nil {
				t.Fatalf("%s at %d: spoilt at t=%d; checker: %v; SolveWindow: %v", kind, at, b.spoilt, err, want)
			}
			if err.Error() != want.Error() || !errors.Is(err, model.ErrInfeasible) || !errors.Is(err, solver.ErrSolverBug) {
				t.Fatalf("%s at %d: the checker says\n%v\nSolveWindow said\n%v", kind, at, err, want)
			}
			if started := slices.Contains(windows, b.spoilt); started == b.synchronous() {
				t.Fatalf("%s at %d: the spoilt window at t=%d started its jobs: %v", kind, at, b.spoilt, started)
			}
			if at == 0 {
				t.Logf("%s (%d answers can be spoilt, %d windows): %v", kind, count.seen, checked.Windows, err)
			}
		}
	}
}
