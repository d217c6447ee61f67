package free_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
	"github.com/optsched/optsched/solver/csp"
	"github.com/optsched/optsched/solver/free"
)

// topologies returns one small topology of every kind: the layout of
// [Lan23], a fat-tree, a topology.conf-style tree of unequal depths and a
// forest of two trees (which meet at a virtual top).
func topologies(t *testing.T) map[string]*model.Topology {
	t.Helper()
	out := map[string]*model.Topology{}
	var err error
	if out["layout-2x2x4"], err = model.NewLayout(2, 2, 4); err != nil {
		t.Fatal(err)
	}
	if out["fattree-k4"], err = model.NewFatTree(4, 0); err != nil {
		t.Fatal(err)
	}
	names := func(prefix string, from, n int) []string {
		var s []string
		for i := from; i < from+n; i++ {
			s = append(s, prefix+strconv.Itoa(i))
		}
		return s
	}
	// Unequal depths: s1 holds leaves and a sub-switch; leaf l0 hangs
	// right under the top.
	if out["uneven"], err = model.BuildTopology([]model.SwitchSpec{
		{Name: "l0", Nodes: names("a", 0, 3)},
		{Name: "l1", Nodes: names("b", 0, 4)},
		{Name: "l2", Nodes: names("c", 0, 3)},
		{Name: "l3", Nodes: names("d", 0, 3)},
		{Name: "s2", Switches: []string{"l2", "l3"}},
		{Name: "s1", Switches: []string{"l1", "s2"}},
		{Name: "top", Switches: []string{"l0", "s1"}},
	}); err != nil {
		t.Fatal(err)
	}
	if out["forest"], err = model.BuildTopology([]model.SwitchSpec{
		{Name: "x0", Nodes: names("xn", 0, 4)},
		{Name: "x1", Nodes: names("xn", 4, 3)},
		{Name: "X", Switches: []string{"x0", "x1"}},
		{Name: "y0", Nodes: names("yn", 0, 5)},
		{Name: "y1", Nodes: names("yn", 5, 2)},
		{Name: "Y", Switches: []string{"y0", "y1"}},
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// smallWindow draws idle nodes and jobs on top: between minIdle and 16
// idle nodes, 1–4 jobs whose sizes sum to at most maxDemand.
func smallWindow(top *model.Topology, cm model.CostModel, rng *rand.Rand, minIdle, maxDemand int) *model.Window {
	n := top.NumNodes()
	perm := rng.Perm(n)
	nIdle := min(n, 16, minIdle+rng.IntN(max(1, min(n, 16)-minIdle+1)))
	idle := slices.Clone(perm[:nIdle])
	slices.Sort(idle)
	w := &model.Window{Time: 0, Topology: top, Idle: idle, Cost: cm}
	demand := min(nIdle, maxDemand)
	jobs := 1 + rng.IntN(4)
	for j := 0; j < jobs && demand > 0; j++ {
		sz := 1 + rng.IntN(min(demand, 6))
		demand -= sz
		w.Jobs = append(w.Jobs, model.Job{ID: fmt.Sprint("j", j), Nodes: sz, Walltime: 60, Queue: "q"})
	}
	return w
}

// bruteFree returns the least total cost of placing every job of w on
// disjoint idle node sets, trying every set: the definition itself, with
// jobs priced by model.CostModel.Cost. Jobs of equal size are
// interchangeable, so a job takes a set whose first node comes after that
// of the previous job of its size. It shares no code with the solver.
func bruteFree(w *model.Window) int64 {
	best := int64(1) << 62
	used := make([]bool, len(w.Idle))
	var set []int
	var place func(j int, sofar int64, firstAfter int)
	var choose func(j, from, left int, sofar int64)
	place = func(j int, sofar int64, firstAfter int) {
		if sofar >= best {
			return
		}
		if j == len(w.Jobs) {
			best = sofar
			return
		}
		from := 0
		if j > 0 && w.Jobs[j-1].Nodes == w.Jobs[j].Nodes {
			from = firstAfter + 1
		}
		set = set[:0]
		choose(j, from, w.Jobs[j].Nodes, sofar)
	}
	first := func() int {
		for i, id := range w.Idle {
			if id == set[0] {
				return i
			}
		}
		return -1
	}
	choose = func(j, from, left int, sofar int64) {
		if left == 0 {
			c := w.Cost.Cost(w.Topology, set)
			saved := slices.Clone(set)
			place(j+1, sofar+c, first())
			set = saved
			return
		}
		for i := from; i < len(w.Idle); i++ {
			if used[i] {
				continue
			}
			used[i] = true
			set = append(set, w.Idle[i])
			choose(j, i+1, left-1, sofar)
			set = set[:len(set)-1]
			used[i] = false
		}
	}
	place(0, 0, -1)
	return best
}

func allJobs(w *model.Window) []int {
	jobs := make([]int, len(w.Jobs))
	for j := range jobs {
		jobs[j] = j
	}
	return jobs
}

// solveChecked solves p with s and holds the answer to model.Check and to
// an independent pricing of its objective.
func solveChecked(t *testing.T, s solver.Solver, w *model.Window) *solver.Result {
	t.Helper()
	r, err := s.Solve(context.Background(), solver.NewProblem(w, allJobs(w)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != solver.Optimal {
		t.Fatalf("%s: status %v, want optimal", s.Name(), r.Status)
	}
	if len(r.Allocations) != len(w.Jobs) {
		t.Fatalf("%s: %d allocations for %d jobs", s.Name(), len(r.Allocations), len(w.Jobs))
	}
	if err := model.Check(w, r.Allocations); err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
	var sum int64
	for _, a := range r.Allocations {
		sum += w.Cost.PairwiseCost(w.Topology, a.Nodes)
	}
	if sum != r.Objective {
		t.Fatalf("%s: objective %d, the allocations cost %d", s.Name(), r.Objective, sum)
	}
	return r
}

// TestFreeMatchesBruteForce is the proof: on small windows of
// every topology kind and both cost models the free optimum equals a brute
// force over all node sets, and it is never above the SCAS optimum.
func TestFreeMatchesBruteForce(t *testing.T) {
	models := []model.CostModel{model.DefaultCostModel, {Kind: model.CostLanPaper, HopCost: model.DefaultHopCost}, {Kind: model.CostLanCode, HopCost: 7}}
	windows, below := 0, 0
	for name, top := range topologies(t) {
		for _, cm := range models {
			rng := rand.New(rand.NewPCG(uint64(len(name)), uint64(cm.HopCost)+uint64(cm.Kind)))
			for k := 0; k < 16; k++ {
				w := smallWindow(top, cm, rng, 8, 12)
				if len(w.Jobs) == 0 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s-c%d/%d", name, cm.Kind, cm.HopCost, k), func(t *testing.T) {
					want := bruteFree(w)
					got := solveChecked(t, free.Solver{SCASShare: -1}, w)
					if got.Objective != want {
						t.Fatalf("free optimum %d, brute force over node sets %d (idle %v, jobs %v)", got.Objective, want, w.Idle, w.Jobs)
					}
					scas := solveChecked(t, brute.Solver{}, w)
					if got.Objective > scas.Objective {
						t.Fatalf("free optimum %d above the SCAS optimum %d", got.Objective, scas.Objective)
					}
					withSCAS := solveChecked(t, free.Solver{}, w)
					if withSCAS.Objective != want {
						t.Fatalf("free started from SCAS: %d, want %d", withSCAS.Objective, want)
					}
					windows++
					if got.Objective < scas.Objective {
						below++
					}
				})
			}
		}
	}
	if windows < 100 || below == 0 {
		// The windows must include some where placing jobs off the idle
		// sequence's runs pays, or the cross-check cannot tell the free
		// optimum from the SCAS one.
		t.Fatalf("only %d windows checked, %d with the free optimum below the SCAS optimum", windows, below)
	}
	t.Logf("%d windows; the free optimum is below the SCAS optimum on %d", windows, below)
}

// TestFreeNeverAboveSCAS checks the paper's windows: the free optimum is
// proven, at most the SCAS optimum, and its allocation passes model.Check.
func TestFreeNeverAboveSCAS(t *testing.T) {
	for k := 0; k < 30; k++ {
		w := paperWindow(t, uint64(k))
		p := solver.NewProblem(w, model.SelectJobs(w, 5).Multi)
		scas, err := csp.Solver{}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := free.Solver{MaxNodes: 2_000_000}.Solve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if err := model.Check(w, r.Allocations); err != nil {
			t.Fatal(err)
		}
		if got := w.Cost.TotalCost(w.Topology, r.Allocations); got != r.Objective {
			t.Fatalf("window %d: objective %d, allocations cost %d", k, r.Objective, got)
		}
		if scas.Status == solver.Optimal && r.Objective > scas.Objective {
			t.Fatalf("window %d: free %d above the SCAS optimum %d", k, r.Objective, scas.Objective)
		}
		if r.Status != solver.Optimal {
			t.Fatalf("window %d: status %v within the node limit", k, r.Status)
		}
	}
}

// paperWindow is window k of the paper class of bench scas: the 25×4×10
// layout, 50–1000 idle nodes, eight jobs of 2–40 nodes.
func paperWindow(t testing.TB, k uint64) *model.Window {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, k))
	cfg := instances.PaperGenConfig()
	cfg.Seed = 1_000_003 + k
	cfg.Idle = 50 + rng.IntN(951)
	cfg.Jobs = 8
	cfg.MinNodes = 2
	w, err := instances.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestBoardHoldsOnlyFreeBounds: the SCAS start (csp) runs inside the free
// solver, but its bound — the SCAS optimum's, above the free optimum on
// these windows — must not reach the board a portfolio reads when it
// abandons the solver.
func TestBoardHoldsOnlyFreeBounds(t *testing.T) {
	top := topologies(t)["layout-2x2x4"]
	rng := rand.New(rand.NewPCG(99, 12))
	found := 0
	for k := 0; k < 3000 && found < 1; k++ {
		w := smallWindow(top, model.DefaultCostModel, rng, 8, 12)
		if len(w.Jobs) < 2 {
			continue
		}
		want := bruteFree(w)
		scas := solveChecked(t, brute.Solver{}, w)
		if want >= scas.Objective {
			continue
		}
		found++
		b := solver.NewBoard()
		if _, err := (free.Solver{}).Solve(context.Background(), solver.NewProblem(w, allJobs(w)).WithPublisher(b)); err != nil {
			t.Fatal(err)
		}
		_, obj, bound, ok := b.Best()
		if !ok || obj != want || bound > float64(want) {
			t.Fatalf("board: incumbent %d (ok %v) bound %g; free optimum %d, SCAS optimum %d", obj, ok, bound, want, scas.Objective)
		}
	}
	if found == 0 {
		t.Fatal("no window with the free optimum below the SCAS optimum")
	}
}

// TestDeadlineNeverFakesAProof: cut short anywhere — in the SCAS start,
// the improvement, the bounds or the branch and bound — the solver may
// answer Feasible or Unknown, but Optimal only with the true optimum, and
// its bound never passes the optimum. The limits are tiny, so where the
// deadline lands varies with the machine; the property holds wherever.
func TestDeadlineNeverFakesAProof(t *testing.T) {
	// Windows 20 and 69 are fragmented ones where the free optimum is below
	// the SCAS start, so a proof claimed too early would be wrong there.
	for _, k := range []uint64{20, 69, 137, 0, 1, 2, 3, 4, 5, 6} {
		w := paperWindow(t, k)
		p := solver.NewProblem(w, model.SelectJobs(w, 5).Multi)
		ref, err := free.Solver{MaxNodes: 5_000_000}.Solve(context.Background(), p)
		if err != nil || ref.Status != solver.Optimal {
			t.Fatalf("window %d: reference %v %v", k, err, ref.Status)
		}
		for _, limit := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, time.Millisecond, 3 * time.Millisecond,
			10 * time.Millisecond, 30 * time.Millisecond} {
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			r, err := free.Solver{}.Solve(ctx, p)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if r.Status == solver.Optimal && r.Objective != ref.Objective {
				t.Fatalf("window %d at %v: optimal %d, the optimum is %d", k, limit, r.Objective, ref.Objective)
			}
			if r.HasBound() && r.Bound > float64(ref.Objective)+1e-9 {
				t.Fatalf("window %d at %v: bound %g above the optimum %d", k, limit, r.Bound, ref.Objective)
			}
			if r.Status == solver.Feasible && r.Objective < ref.Objective {
				t.Fatalf("window %d at %v: %d below the optimum %d", k, limit, r.Objective, ref.Objective)
			}
		}
	}
}
