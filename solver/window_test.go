package solver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/output"
	"github.com/optsched/optsched/solver"
)

// fake answers with whatever its function returns, to exercise the
// pipeline's checks on well- and ill-behaved solvers.
type fake struct {
	solve func(p *solver.Problem) (*solver.Result, error)
}

func (fake) Name() string { return "fake" }
func (f fake) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	return f.solve(p)
}

// window: 1 pod × 2 leaves × 4 nodes, n0–n6 idle; jobs a(3) b(2) s(1)
// and a deferred z(9).
const window = `{"time": 10, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}},
 "idle": "n[0-6]", "running": [{"id": "r", "nodes": "n7", "end": 50}],
 "jobs": [{"id": "a", "nodes": 3, "walltime": 5}, {"id": "b", "nodes": 2, "walltime": 5},
          {"id": "s", "nodes": 1, "walltime": 5}, {"id": "z", "nodes": 9, "walltime": 5}]}`

func load(t *testing.T) *model.Window {
	t.Helper()
	w, err := windowjson.Parse([]byte(window), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// place puts the problem's jobs on the given node lists.
func place(w *model.Window, p *solver.Problem, nodes ...[]int) *solver.Result {
	r := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Solver: "fake"}
	for i, j := range p.Jobs {
		r.Allocations = append(r.Allocations, model.Allocation{Job: j, Nodes: nodes[i], Start: w.Time})
	}
	r.Objective = solver.Objective(w, r.Allocations)
	return r
}

func TestSolveWindowGood(t *testing.T) {
	w := load(t)
	s := fake{func(p *solver.Problem) (*solver.Result, error) {
		// Problem order: b(2) then a(3) (fewer nodes first).
		r := place(w, p, []int{4, 5}, []int{0, 1, 2})
		r.Status, r.Bound = solver.Optimal, float64(r.Objective)
		return r, nil
	}}
	res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Optimal || len(res.Allocations) != 3 || len(res.Deferred) != 1 {
		t.Fatalf("result %+v", res)
	}
	// The one-node job s takes the lowest idle node left: n3.
	last := res.Allocations[2]
	if w.Jobs[last.Job].ID != "s" || last.Nodes[0] != 3 {
		t.Errorf("single placed as %+v", last)
	}
	doc := output.Answer(w, res)
	if doc.Objective == nil || *doc.Objective != res.Objective || doc.Gap == nil || *doc.Gap != 0 || doc.Deferred[0].Job != "z" {
		t.Errorf("doc %+v", doc)
	}
	if err := model.Check(w, res.Allocations); err != nil {
		t.Error(err)
	}
}

// TestSolveWindowCatchesBadSolvers makes sure no invalid answer gets
// through: each must come back as ErrSolverBug.
func TestSolveWindowCatchesBadSolvers(t *testing.T) {
	w := load(t)
	cases := []struct {
		name  string
		solve func(p *solver.Problem) (*solver.Result, error)
		want  string
	}{
		{"shared node", func(p *solver.Problem) (*solver.Result, error) {
			return place(w, p, []int{0, 1}, []int{1, 2, 3}), nil
		}, "overlap"},
		{"busy node", func(p *solver.Problem) (*solver.Result, error) {
			return place(w, p, []int{6, 7}, []int{0, 1, 2}), nil
		}, "busy until"},
		{"missing job", func(p *solver.Problem) (*solver.Result, error) {
			r := place(w, p, []int{4, 5}, []int{0, 1, 2})
			r.Allocations = r.Allocations[:1]
			r.Objective = solver.Objective(w, r.Allocations)
			return r, nil
		}, "left unallocated"},
		{"wrong objective", func(p *solver.Problem) (*solver.Result, error) {
			r := place(w, p, []int{4, 5}, []int{0, 1, 2})
			r.Objective--
			return r, nil
		}, "reported objective"},
		{"bound above objective", func(p *solver.Problem) (*solver.Result, error) {
			r := place(w, p, []int{4, 5}, []int{0, 1, 2})
			r.Bound = float64(r.Objective) + 10
			return r, nil
		}, "bound"},
		{"unasked job", func(p *solver.Problem) (*solver.Result, error) {
			r := place(w, p, []int{4, 5}, []int{0, 1, 2})
			r.Allocations[0].Job = 2
			return r, nil
		}, "not asked for"},
		{"unknown with allocation", func(p *solver.Problem) (*solver.Result, error) {
			r := place(w, p, []int{4, 5}, []int{0, 1, 2})
			r.Status = solver.Unknown
			return r, nil
		}, "with an allocation"},
		{"nil result", func(p *solver.Problem) (*solver.Result, error) { return nil, nil }, "nil answer"},
	}
	for _, c := range cases {
		_, err := solver.SolveWindow(context.Background(), w, fake{c.solve}, solver.Options{})
		if !errors.Is(err, solver.ErrSolverBug) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want ErrSolverBug with %q", c.name, err, c.want)
		}
	}
	// A solver error is passed on, not taken for a bug.
	boom := errors.New("boom")
	_, err := solver.SolveWindow(context.Background(), w, fake{func(*solver.Problem) (*solver.Result, error) { return nil, boom }}, solver.Options{})
	if !errors.Is(err, boom) || errors.Is(err, solver.ErrSolverBug) {
		t.Errorf("solver error became %v", err)
	}
}

func TestSolveWindowUnknownDefers(t *testing.T) {
	w := load(t)
	s := fake{func(p *solver.Problem) (*solver.Result, error) {
		return &solver.Result{Status: solver.Unknown, Bound: 1234}, nil
	}}
	res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{TimeLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	// a and b are deferred for lack of an allocation; s still starts.
	if len(res.Allocations) != 1 || len(res.Deferred) != 3 || !strings.Contains(res.Deferred[1].Reason, "no allocation within") {
		t.Errorf("allocations %+v deferred %+v", res.Allocations, res.Deferred)
	}
	if d := output.Answer(w, res); d.Objective != nil || d.Gap != nil || d.Bound == nil {
		t.Errorf("doc of unknown result: %+v", d)
	}
}

func TestSolveWindowNothingToOptimise(t *testing.T) {
	w := load(t)
	w.Jobs = w.Jobs[2:3] // only the one-node job
	called := false
	s := fake{func(p *solver.Problem) (*solver.Result, error) { called = true; return nil, nil }}
	res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{})
	if err != nil || called || res.Status != solver.Optimal || len(res.Allocations) != 1 {
		t.Errorf("res %+v err %v called %v", res, err, called)
	}
}

func TestGap(t *testing.T) {
	cases := []struct {
		r    solver.Result
		gap  float64
		isOK bool
	}{
		{solver.Result{Status: solver.Feasible, Objective: 200, Bound: 150}, 0.25, true},
		{solver.Result{Status: solver.Optimal, Objective: 0, Bound: 0}, 0, true},
		{solver.Result{Status: solver.Feasible, Objective: 200, Bound: math.NaN()}, 0, false},
		{solver.Result{Status: solver.Unknown, Objective: 0, Bound: 100}, 0, false},
	}
	for _, c := range cases {
		g, ok := c.r.Gap()
		if ok != c.isOK || math.Abs(g-c.gap) > 1e-12 {
			t.Errorf("Gap(%+v) = %v, %v; want %v, %v", c.r, g, ok, c.gap, c.isOK)
		}
	}
}

// TestSolveWindowPricesManyAside: with many allocations the objective is
// priced beside the checks (parallelPricing); a wrong one is still caught,
// and a right one passes.
func TestSolveWindowPricesManyAside(t *testing.T) {
	w := manyJobsWindow(t)
	for _, off := range []int64{0, 1} {
		s := fake{func(p *solver.Problem) (*solver.Result, error) {
			r := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound}
			for k, j := range p.Jobs {
				r.Allocations = append(r.Allocations, model.Allocation{Job: j, Nodes: []int{w.Idle[2*k], w.Idle[2*k+1]}, Start: w.Time})
			}
			r.Objective = solver.Objective(w, r.Allocations) + off
			return r, nil
		}}
		res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{})
		switch {
		case off == 0 && (err != nil || len(res.Allocations) != 1400):
			t.Errorf("right objective: %v", err)
		case off != 0 && (!errors.Is(err, solver.ErrSolverBug) || !strings.Contains(err.Error(), "reported objective")):
			t.Errorf("objective off by %d: %v", off, err)
		}
	}
}

// TestSolveWindowCallerChecks: with Options.CallerChecks, SolveWindow
// leaves model.Check of the answer to the caller — a shared or busy node
// gets through, to be caught by the caller — and makes every other check
// as without it, with the same errors; when one of those fails on an
// answer model.Check would also fail, model.Check's error comes first, as
// without CallerChecks (here a shared node and a wrong objective priced
// aside, on 1,400 jobs).
func TestSolveWindowCallerChecks(t *testing.T) {
	w := load(t)
	for _, c := range []struct {
		name    string
		nodes   [][]int
		off     int64
		checked bool // model.Check's to catch
	}{
		{"sound", [][]int{{4, 5}, {0, 1, 2}}, 0, false},
		{"shared node", [][]int{{0, 1}, {1, 2, 3}}, 0, true},
		{"busy node", [][]int{{6, 7}, {0, 1, 2}}, 0, true},
		{"wrong objective", [][]int{{4, 5}, {0, 1, 2}}, 1, false},
		{"busy node, wrong objective", [][]int{{6, 7}, {0, 1, 2}}, 1, false},
	} {
		s := fake{func(p *solver.Problem) (*solver.Result, error) {
			r := place(w, p, c.nodes...)
			r.Objective += c.off
			return r, nil
		}}
		_, want := solver.SolveWindow(context.Background(), w, s, solver.Options{})
		_, got := solver.SolveWindow(context.Background(), w, s, solver.Options{CallerChecks: true})
		if c.checked {
			want = nil
		}
		if (want == nil) != (c.name == "sound" || c.checked) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: with CallerChecks %v, want %v", c.name, got, want)
		}
	}

	w = manyJobsWindow(t)
	s := fake{func(p *solver.Problem) (*solver.Result, error) {
		r := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound}
		for k, j := range p.Jobs {
			r.Allocations = append(r.Allocations, model.Allocation{Job: j, Nodes: []int{w.Idle[2*k], w.Idle[2*k+1]}, Start: w.Time})
		}
		r.Allocations[1].Nodes[0] = r.Allocations[0].Nodes[0]
		r.Objective = solver.Objective(w, r.Allocations) + 1
		return r, nil
	}}
	_, want := solver.SolveWindow(context.Background(), w, s, solver.Options{})
	_, got := solver.SolveWindow(context.Background(), w, s, solver.Options{CallerChecks: true})
	if !errors.Is(want, model.ErrInfeasible) || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("many allocations, a shared node, a wrong objective: with CallerChecks %v, without %v", got, want)
	}
}

// TestSolveWindowOffTopology: an answer with a node id off the topology
// (below 0, at or past its last node) is refused as infeasible, naming
// the node, with and without CallerChecks and with its objective priced
// aside (many allocations) or not — never a panic of the pricing.
func TestSolveWindowOffTopology(t *testing.T) {
	small := load(t)
	large := manyJobsWindow(t)
	for _, w := range []*model.Window{small, large} {
		for _, bad := range []int{-1, w.Topology.NumNodes(), 1 << 40} {
			s := fake{func(p *solver.Problem) (*solver.Result, error) {
				r := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound}
				for k, j := range p.Jobs {
					n := w.Jobs[j].Nodes
					r.Allocations = append(r.Allocations, model.Allocation{Job: j, Nodes: slices.Clone(w.Idle[k*n : (k+1)*n]), Start: w.Time})
				}
				r.Allocations[len(r.Allocations)-1].Nodes[0] = bad
				return r, nil
			}}
			for _, caller := range []bool{false, true} {
				_, err := solver.SolveWindow(context.Background(), w, s, solver.Options{CallerChecks: caller})
				if !errors.Is(err, model.ErrInfeasible) || !strings.Contains(err.Error(), fmt.Sprintf("node %d is not on the topology", bad)) {
					t.Errorf("%d jobs, node %d, caller checks %v: %v", len(w.Jobs), bad, caller, err)
				}
			}
		}
	}
}

// manyJobsWindow is a window of 1,400 two-node jobs on 3,000 idle nodes:
// more allocations than parallelPricing, so that SolveWindow prices the
// objective aside.
func manyJobsWindow(t *testing.T) *model.Window {
	t.Helper()
	topo, err := model.NewLayout(10, 10, 30)
	if err != nil {
		t.Fatal(err)
	}
	w := &model.Window{Topology: topo, Cost: model.DefaultCostModel}
	for id := range topo.NumNodes() {
		w.Idle = append(w.Idle, id)
	}
	for j := range 1400 {
		w.Jobs = append(w.Jobs, model.Job{ID: strconv.Itoa(j), Nodes: 2, Walltime: 60, Queue: model.DefaultQueue})
	}
	return w
}
