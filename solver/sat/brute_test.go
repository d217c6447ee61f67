package sat_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/cpbnb"
)

// bruteForce returns the least weighted queue time of any feasible
// schedule of w's jobs that can ever start (model.Check is the judge),
// and the set of jobs that can never start. It shares no code with the
// encoder or the solver: it enumerates every start in E and every
// distribution of each job's units over the usable nodes. E is the
// closure of the window time, the running jobs' ends and the
// reservations' ends under adding walltimes: every optimal schedule of a
// regular objective such as Eq. (2) starts each job at the window time or
// when something ends (else it could start earlier), so some optimal
// schedule lies in E.
func bruteForce(t *testing.T, w *model.Window) (float64, map[int]bool) {
	t.Helper()
	return bruteForceCH(t, w, 0)
}

// bruteForceCH is bruteForce for the objective Eq. (2) + chWeight·Σ_j
// CH_j, CH_j the window's cost model's price of job j's node set
// (model.CostModel.Cost; at least 1). Moving a job earlier keeps its
// nodes, so the same starts E suffice.
func bruteForceCH(t *testing.T, w *model.Window, chWeight float64) (float64, map[int]bool) {
	t.Helper()
	var usable []int
	for k := range w.Topology.NumNodes() {
		if w.IsIdle(k) || slices.ContainsFunc(w.Running, func(r model.RunningJob) bool { return slices.Contains(r.Nodes, k) }) {
			usable = append(usable, k)
		}
	}
	bases := []int64{w.Time}
	last := w.Time
	for _, r := range w.Running {
		bases = append(bases, r.End)
		last = max(last, r.End)
	}
	for _, r := range w.Reservations {
		if r.End > w.Time {
			bases = append(bases, r.End)
			last = max(last, r.End)
		}
	}
	// placements[j]: every map node → units adding up to the job's units.
	placements := make([][]map[int]int, len(w.Jobs))
	for j := range w.Jobs {
		u := w.Jobs[j].Nodes
		if w.Jobs[j].Select != nil {
			u = w.Jobs[j].Select.Units()
		}
		var rec func(k, left int, cur map[int]int)
		rec = func(k, left int, cur map[int]int) {
			if left == 0 {
				m := map[int]int{}
				for n, c := range cur {
					if c > 0 {
						m[n] = c
					}
				}
				placements[j] = append(placements[j], m)
				return
			}
			if k == len(usable) {
				return
			}
			for c := 0; c <= left; c++ {
				cur[usable[k]] = c
				rec(k+1, left-c, cur)
			}
			delete(cur, usable[k])
		}
		rec(0, u, map[int]int{})
	}
	alloc := func(j int, start int64, units map[int]int) model.Allocation {
		var nodes []int
		for n := range units {
			nodes = append(nodes, n)
		}
		slices.Sort(nodes)
		return model.Allocation{Job: j, Nodes: nodes, Start: start, Units: units}
	}
	// A job that fits alone after everything has ended can start; one that
	// does not never can.
	never := map[int]bool{}
	var jobs []int
	for j := range w.Jobs {
		ok := false
		for _, p := range placements[j] {
			if model.Check(w, []model.Allocation{alloc(j, last, p)}) == nil {
				ok = true
				break
			}
		}
		if ok {
			jobs = append(jobs, j)
		} else {
			never[j] = true
		}
	}
	cands := slices.Clone(bases)
	for _, j := range jobs {
		for _, c := range cands {
			cands = append(cands, c+w.Jobs[j].Walltime)
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
	}
	cost := func(j int, start int64) float64 {
		return float64(start-w.Jobs[j].Submit)/float64(w.ExpectedWait(w.Jobs[j].Queue)) + chWeight // CH ≥ 1
	}
	chExtra := make([][]float64, len(w.Jobs)) // chWeight·(CH − 1) per placement
	for j := range w.Jobs {
		for _, p := range placements[j] {
			a := alloc(j, 0, p)
			chExtra[j] = append(chExtra[j], chWeight*float64(w.Cost.Cost(w.Topology, a.Nodes)-1))
		}
	}
	best := math.Inf(1)
	var allocs []model.Allocation
	var dfs func(k int, obj float64)
	dfs = func(k int, obj float64) {
		if k == len(jobs) {
			best = min(best, obj)
			return
		}
		rest := 0.0
		for _, j := range jobs[k+1:] {
			rest += cost(j, w.Time)
		}
		j := jobs[k]
		for _, c := range cands {
			if obj+cost(j, c)+rest >= best-1e-12 {
				break
			}
			for pi, p := range placements[j] {
				extra := chExtra[j][pi]
				if obj+cost(j, c)+extra+rest >= best-1e-12 {
					continue
				}
				allocs = append(allocs, alloc(j, c, p))
				if model.Check(w, allocs) == nil {
					dfs(k+1, obj+cost(j, c)+extra)
				}
				allocs = allocs[:len(allocs)-1]
			}
		}
	}
	dfs(0, 0)
	if len(jobs) == 0 {
		best = 0
	}
	return best, never
}

// TestBnBEqualsBruteForce cross-checks the second exact scheduler,
// cpbnb (a branch and bound sharing no code with this package's SAT
// search), against brute force on 240 seeded random small windows (the
// generator of TestSATEqualsBruteForce): with and without the list
// schedules' first incumbent it proves the brute-force optimum, and
// stopped after a few nodes its bound stays at or below it.
func TestBnBEqualsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const g = 10
	stoppedBelow := 0
	for i := range 240 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), g)
		if err != nil {
			t.Fatal(err)
		}
		want, never := bruteForce(t, w)
		for si, s := range []cpbnb.Solver{{}, {Initial: listSchedulers()}, {NodeLimit: 3}} {
			res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{Granularity: g})
			if err != nil {
				t.Fatalf("window %d, bnb %d: %v", i, si, err)
			}
			if len(res.Deferred) != len(never) && res.Status != solver.Unknown {
				t.Fatalf("window %d: deferred %v, brute force finds %d jobs that never start", i, res.Deferred, len(never))
			}
			if s.NodeLimit > 0 {
				if res.HasBound() && res.Bound > want+1e-9 {
					data, _ := windowjson.Marshal(w)
					t.Fatalf("window %d: bound %.9g after %v nodes above the brute-force optimum %.9g\n%s", i, res.Bound, bnbNodes(res), want, data)
				}
				if res.Status == solver.Feasible && res.Bound < want-1e-9 {
					stoppedBelow++
				}
				continue
			}
			if res.Status != solver.Optimal || math.Abs(res.Objective-want) > 1e-9 {
				data, _ := windowjson.Marshal(w)
				t.Fatalf("window %d, bnb %d: %s %.9g, brute force %.9g\n%s", i, si, res.Status, res.Objective, want, data)
			}
		}
	}
	if stoppedBelow < 10 {
		t.Errorf("the node limit stopped the search with a bound below the optimum on only %d windows", stoppedBelow)
	}
	t.Logf("stopped searches with a bound below the optimum: %d", stoppedBelow)
}

// bnbNodes is the search nodes of a bnb answer (-1 without its counters).
func bnbNodes(res *solver.ScheduleResult) int64 {
	if res.Stats.BnB == nil {
		return -1
	}
	return res.Stats.BnB.Nodes
}
