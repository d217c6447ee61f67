package verdict_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/verdict"
	"github.com/optsched/optsched/model/windowjson"
)

// randomWindow returns a window on a pods × leaves × nodes layout with a
// random idle subset (the others busy under one running job) and random
// waiting jobs.
func randomWindow(t *testing.T, r *rand.Rand, pods, leaves, nodes, jobs int) *model.Window {
	t.Helper()
	topo, err := model.NewLayout(pods, leaves, nodes)
	if err != nil {
		t.Fatal(err)
	}
	w := &model.Window{Time: 100, Topology: topo, Cost: model.DefaultCostModel}
	var busy []int
	for k := range topo.NumNodes() {
		if r.IntN(3) == 0 {
			busy = append(busy, k)
		} else {
			w.Idle = append(w.Idle, k)
		}
	}
	if len(busy) > 0 {
		w.Running = []model.RunningJob{{ID: "r", Nodes: busy, End: 500}}
	}
	for i := range jobs {
		w.Jobs = append(w.Jobs, model.Job{ID: fmt.Sprintf("j%d", i), Nodes: 1 + r.IntN(max(1, topo.NumNodes()/3)),
			Walltime: 60, Submit: 50, NWP: r.IntN(3)})
	}
	return w
}

// subsets calls f with every k-subset of s.
func subsets(s []int, k int, f func([]int)) {
	var pick []int
	var rec func(i int)
	rec = func(i int) {
		if len(pick) == k {
			f(pick)
			return
		}
		for j := i; j <= len(s)-(k-len(pick)); j++ {
			pick = append(pick, s[j])
			rec(j + 1)
			pick = pick[:len(pick)-1]
		}
	}
	rec(0)
}

// TestJobLowerBoundBelowEveryNodeSet enumerates every node set of every
// size on small random windows, under both cost models: the bound is
// never above the least cost (pairwise definition) and equals it on a
// fully idle layout, where the fullest switches nest.
func TestJobLowerBoundBelowEveryNodeSet(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 12 {
		w := randomWindow(t, r, 2, 2, 3, 0)
		if trial == 0 {
			w.Idle, w.Running = nil, nil
			for k := range w.Topology.NumNodes() {
				w.Idle = append(w.Idle, k)
			}
		}
		for _, kind := range []model.CostKind{model.CostLanCode, model.CostLanPaper} {
			w.Cost.Kind = kind
			for n := 2; n <= len(w.Idle); n++ {
				least := int64(-1)
				subsets(w.Idle, n, func(s []int) {
					if c := w.Cost.PairwiseCost(w.Topology, s); least < 0 || c < least {
						least = c
					}
				})
				lb := verdict.JobLowerBound(w, n)
				if lb > least || trial == 0 && lb != least {
					t.Errorf("trial %d %s n=%d: bound %d, least cost %d", trial, kind, n, lb, least)
				}
			}
		}
	}
}

// TestSelectAgreesWithSelectJobs cross-checks the checker's selection
// rule with model.SelectJobs, the solvers', written apart.
func TestSelectAgreesWithSelectJobs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		w := randomWindow(t, r, 2, 3, 4, 1+r.IntN(10))
		for _, cap := range []int{0, 1, 2} {
			got := verdict.Select(w, cap).Start
			sel := model.SelectJobs(w, cap)
			want := append(slices.Clone(sel.Multi), sel.Single...)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("cap %d: checker selects %v, SelectJobs %v", cap, got, want)
			}
		}
	}
}

// TestBestPlacementIsAPlacement: the checker's placement cost lies
// between the lower bound and the cost of any one sequential placement.
func TestBestPlacementIsAPlacement(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		w := randomWindow(t, r, 3, 2, 5, 6)
		var multi []int
		var lb int64
		for _, j := range verdict.Select(w, 0).Start {
			if w.Jobs[j].Nodes >= 2 {
				multi = append(multi, j)
				lb += verdict.JobLowerBound(w, w.Jobs[j].Nodes)
			}
		}
		if len(multi) == 0 {
			continue
		}
		// The jobs in order from position 0.
		var seq int64
		pos := 0
		for _, j := range multi {
			seq += w.Cost.PairwiseCost(w.Topology, w.Idle[pos:pos+w.Jobs[j].Nodes])
			pos += w.Jobs[j].Nodes
		}
		if best := verdict.BestPlacement(w, multi); best < lb || best > seq {
			t.Fatalf("best placement %d outside [lower bound %d, sequential %d]", best, lb, seq)
		}
	}
}

func example(t *testing.T) *model.Window {
	t.Helper()
	w, err := windowjson.Load("../../instances/example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// sequential returns a feasible answer for w: the selection's jobs laid
// along the idle sequence in order (status feasible, no bound).
func sequential(w *model.Window, cap int) verdict.Answer {
	sel := verdict.Select(w, cap)
	a := verdict.Answer{Status: "feasible", MaxJobs: cap, MaxJobsKnown: true}
	pos := 0
	var obj int64
	for _, j := range sel.Start {
		n := w.Jobs[j].Nodes
		nodes := slices.Clone(w.Idle[pos : pos+n])
		pos += n
		c := w.Cost.PairwiseCost(w.Topology, nodes)
		a.Allocations = append(a.Allocations, model.Allocation{Job: j, Nodes: nodes, Start: w.Time})
		a.Costs = append(a.Costs, c)
		if n >= 2 {
			obj += c
		}
	}
	a.Objective = &obj
	for j := range w.Jobs {
		if !slices.Contains(sel.Start, j) {
			a.Deferred = append(a.Deferred, model.Deferral{Job: j, Reason: sel.Why[j]})
		}
	}
	return a
}

func failed(v *verdict.Verdict) string {
	var names []string
	for _, c := range v.Checks {
		if !c.OK {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ",")
}

func TestJudge(t *testing.T) {
	w := example(t)
	jobG, _ := w.JobIndex("g")
	f := func(x float64) *float64 { return &x }
	i := func(x int64) *int64 { return &x }
	for _, c := range []struct {
		name   string
		edit   func(a *verdict.Answer)
		cap    int
		failed string
	}{
		{"sequential", func(a *verdict.Answer) {}, 0, ""},
		{"capped", func(a *verdict.Answer) {}, 2, ""},
		{"cap unknown, implied", func(a *verdict.Answer) { a.MaxJobsKnown = false }, 2, ""},
		{"cap 0 judged as 2", func(a *verdict.Answer) { a.MaxJobs = 2 }, 0, "selection"},
		{"defers g, claims optimal below the optimum", func(a *verdict.Answer) {
			for k, al := range a.Allocations {
				if al.Job == jobG {
					*a.Objective -= a.Costs[k]
					a.Allocations = slices.Delete(a.Allocations, k, k+1)
					a.Costs = slices.Delete(a.Costs, k, k+1)
					break
				}
			}
			a.Deferred = append(a.Deferred, model.Deferral{Job: jobG, Reason: "x"})
			a.Status, a.Bound = "optimal", f(float64(*a.Objective))
		}, 0, "selection,bound"},
		{"defers all, claims optimal 0", func(a *verdict.Answer) {
			for _, al := range a.Allocations {
				a.Deferred = append(a.Deferred, model.Deferral{Job: al.Job, Reason: "x"})
			}
			a.Allocations, a.Costs = nil, nil
			a.Status, a.Objective, a.Bound = "optimal", i(0), f(0)
		}, 0, "selection,optimality"},
		{"unknown, multi-node jobs wait", func(a *verdict.Answer) {
			var keep []model.Allocation
			var costs []int64
			for k, al := range a.Allocations {
				if len(al.Nodes) >= 2 {
					a.Deferred = append(a.Deferred, model.Deferral{Job: al.Job, Reason: "time", ForTime: true})
				} else {
					keep, costs = append(keep, al), append(costs, a.Costs[k])
				}
			}
			a.Allocations, a.Costs = keep, costs
			a.Status, a.Objective = "unknown", nil
		}, 0, ""},
		{"infeasible claimed", func(a *verdict.Answer) {
			var keep []model.Allocation
			for _, al := range a.Allocations {
				if len(al.Nodes) >= 2 {
					a.Deferred = append(a.Deferred, model.Deferral{Job: al.Job, Reason: "x"})
				} else {
					keep = append(keep, al)
				}
			}
			a.Allocations, a.Costs = keep, nil
			a.Status, a.Objective = "infeasible", nil
		}, 0, "optimality"},
		{"optimal above a found placement", func(a *verdict.Answer) { a.Status = "optimal" }, 0, "optimality"},
		{"bound above a found placement", func(a *verdict.Answer) { a.Bound = f(float64(*a.Objective) * 2) }, 0, "bound"},
		{"wrong cost", func(a *verdict.Answer) { a.Costs[0]++ }, 0, "costs"},
		{"wrong objective", func(a *verdict.Answer) { *a.Objective += 7 }, 0, "objective"},
		{"node twice", func(a *verdict.Answer) { a.Allocations[1].Nodes[0] = a.Allocations[0].Nodes[0] }, 0, "feasible"},
	} {
		a := sequential(w, c.cap)
		c.edit(&a)
		v := verdict.Judge(w, a)
		if got := failed(v); got != c.failed || v.Valid != (c.failed == "") {
			t.Errorf("%s: failed checks %q (valid %v), want %q\n%v", c.name, got, v.Valid, c.failed, v.Err())
		}
	}
}

// TestJudgeSchedule: the schedule checks catch a wrong objective, a wrong
// cost and a bound above the objective.
func TestJudgeSchedule(t *testing.T) {
	w := example(t)
	seq := sequential(w, 0)
	obj := model.WeightedQueueTime(w, seq.Allocations)
	base := func() verdict.ScheduleAnswer {
		o := obj
		return verdict.ScheduleAnswer{Objective: &o, Allocations: seq.Allocations, Costs: slices.Clone(seq.Costs), Deferred: seq.Deferred}
	}
	if v := verdict.JudgeSchedule(w, base()); !v.Valid {
		t.Fatalf("valid schedule judged invalid: %v", v.Err())
	}
	a := base()
	*a.Objective += 1
	if got := failed(verdict.JudgeSchedule(w, a)); got != "objective" {
		t.Errorf("wrong objective: failed %q", got)
	}
	a = base()
	a.Costs[0] = 0
	if got := failed(verdict.JudgeSchedule(w, a)); got != "costs" {
		t.Errorf("wrong cost: failed %q", got)
	}
	a = base()
	b := obj + 10
	a.Bound = &b
	if got := failed(verdict.JudgeSchedule(w, a)); got != "bound" {
		t.Errorf("bound above objective: failed %q", got)
	}
	a = base()
	a.CHWeight = 0.5
	if got := failed(verdict.JudgeSchedule(w, a)); got != "objective" {
		t.Errorf("ch weight not in objective: failed %q", got)
	}
}
