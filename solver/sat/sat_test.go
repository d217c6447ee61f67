package sat_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

func listSchedulers() []solver.Scheduler {
	return []solver.Scheduler{heuristics.PBSWalltime(), heuristics.PBSFifo()}
}

// TestSATEqualsBruteForce: on 240 seeded random small windows (1–3 nodes
// with cores and GPUs, running jobs, down nodes, reservations, 1–4
// waiting jobs of varied units and place statements, all times on the
// grid), the SAT optimum equals the brute-force optimum over all start
// times, with and without the list schedulers' and the serial schedules'
// first incumbent, with every node block written up front, and without
// the pool and group bounds (computed here from two jobs on) and the
// left-justified dominance, and on the grid instead of the compressed
// time domain (which must leave out slots on some windows, so that the
// comparison bites), and without the pool cuts of the last search, and
// without the time-indexed relaxation or its fixing (so that the group
// bounds, which small windows skip after fixing, run too), and with the
// last search's prover beside it (the default with two threads; it must
// run on some windows) and without (Solver.Sequential); every schedule
// passes
// solver.SolveWindow's checks (model.Check, grid, objective, bound).
func TestSATEqualsBruteForce(t *testing.T) {
	defer sat.BoundsFromJobs(1)() // pool and group bounds on these tiny windows too
	rng := rand.New(rand.NewPCG(8, 8))
	const g = 10
	type A = sat.Ablation
	solvers := []sat.Solver{{Initial: listSchedulers(), Ablation: A{NoSGS: true}}, {}, {Initial: listSchedulers(), Ablation: A{Eager: true}},
		{Initial: listSchedulers()}, {Initial: listSchedulers(), Ablation: A{NoGroups: true, NoPool: true, NoDominance: true}},
		{Initial: listSchedulers(), Grid: true}, {Grid: true, Ablation: A{NoDominance: true}}, {Initial: listSchedulers(), Ablation: A{NoPoolCuts: true}},
		{Initial: listSchedulers(), Ablation: A{NoSGS: true, NoTimeIndexed: true}}, {Initial: listSchedulers(), Ablation: A{NoSGS: true, NoFixing: true}},
		{Initial: listSchedulers(), Sequential: true}}
	improved, compressed, proverRan := 0, 0, 0
	for i := range 240 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), g)
		if err != nil {
			t.Fatal(err)
		}
		want, never := bruteForce(t, w)
		for si, s := range solvers {
			res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{Granularity: g})
			if err != nil {
				t.Fatalf("window %d, solver %d: %v", i, si, err)
			}
			if res.Status != solver.Optimal {
				t.Fatalf("window %d, solver %d: status %s", i, si, res.Status)
			}
			if math.Abs(res.Objective-want) > 1e-9 {
				data, _ := windowjson.Marshal(w)
				t.Fatalf("window %d, solver %d: objective %.9g, brute force %.9g\n%s", i, si, res.Objective, want, data)
			}
			if len(res.Deferred) != len(never) {
				t.Fatalf("window %d: deferred %v, brute force finds %d jobs that never start", i, res.Deferred, len(never))
			}
			for _, d := range res.Deferred {
				if !never[d.Job] {
					t.Fatalf("window %d: job %s deferred, but it can start", i, w.Jobs[d.Job].ID)
				}
			}
			if si == 0 && satStats(res).IncumbentFromSAT {
				improved++
			}
			if si == 1 && satStats(res).Search.DomainCandidates < satStats(res).Search.DomainSlots {
				compressed++
			}
			if satStats(res).Prover.SATCalls > 0 {
				if s.Sequential {
					t.Fatalf("window %d, solver %d: sequential, but a prover ran", i, si)
				}
				proverRan++
			}
		}
	}
	// The test must exercise the search, not just the list schedules.
	if improved < 20 {
		t.Errorf("SAT improved the list schedule on only %d windows", improved)
	}
	if compressed < 20 {
		t.Errorf("the compressed time domain left out slots on only %d windows", compressed)
	}
	// With two threads the last search has a prover beside it.
	if runtime.GOMAXPROCS(0) >= 2 && proverRan < 20 {
		t.Errorf("the prover ran on only %d searches", proverRan)
	}
	t.Logf("SAT improved the list schedule on %d windows; the compressed domain left out slots on %d; the prover ran %d times", improved, compressed, proverRan)
}

// TestSATTinyTimeLimit: a 1 µs limit still returns a valid status and a
// checked answer that accounts for every job: a schedule (complete, or
// truncated with the rest deferred) whenever list schedulers are given,
// unknown only without them.
func TestSATTinyTimeLimit(t *testing.T) {
	for seed := range uint64(3) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 30})
		if err != nil {
			t.Fatal(err)
		}
		// The last: a heavy window (120 jobs, 95 % load) whose list
		// schedules cannot finish before a 1 µs deadline.
		if seed == 2 {
			if w, err = instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 120, Load: 0.95}); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []sat.Solver{{Initial: listSchedulers()}, {}} {
			res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{TimeLimit: time.Microsecond})
			if err != nil {
				t.Fatal(err)
			}
			// The limit under test: sat with no incumbent once took 14.6 s
			// here; the margin is generous for any load.
			if res.Elapsed > raceSlowdown*time.Second {
				t.Errorf("seed %d, %d list schedulers: answered after %v", seed, len(s.Initial), res.Elapsed)
			}
			switch res.Status {
			case solver.Unknown:
				// Only without list schedules: with them a truncated
				// one answers, never nothing.
				if len(s.Initial) > 0 || len(res.Allocations) != 0 || len(res.Deferred) != len(w.Jobs) {
					t.Errorf("seed %d, %d list schedulers: unknown with %d allocations, %d deferred", seed, len(s.Initial), len(res.Allocations), len(res.Deferred))
				}
			case solver.Optimal, solver.Feasible, solver.Fallback:
				if len(res.Allocations)+len(res.Deferred) != len(w.Jobs) {
					t.Errorf("seed %d: %d allocations and %d deferrals for %d jobs", seed, len(res.Allocations), len(res.Deferred), len(w.Jobs))
				}
			default:
				t.Errorf("status %s", res.Status)
			}
		}
	}
}

// TestSATExample: the shipped Eurora example window is solved optimally
// within the default limit and its schedule passes model.Check.
func TestSATExample(t *testing.T) {
	w, err := instances.Load("eurora-example.json")
	if err != nil {
		t.Skip(err)
	}
	res, err := solver.SolveWindow(context.Background(), w, sat.Solver{Initial: listSchedulers()}, solver.Options{TimeLimit: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Optimal {
		t.Errorf("status %s", res.Status)
	}
	if err := model.Check(w, res.Allocations); err != nil {
		t.Error(err)
	}
}

// TestSATLargeWindows runs the full search — coarse bound diagrams, probes
// from below, and with Solver.LNS neighbourhood moves (which must run on
// some of them, and never without it) — on Eurora-like windows of 30 and
// 40 waiting jobs under a short limit: every answer passes
// solver.SolveWindow's checks, its bound is below its objective, and it
// is never worse than the best list schedule.
func TestSATLargeWindows(t *testing.T) {
	lnsRan := 0
	for seed := range uint64(4) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 30 + 10*int(seed%2)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []sat.Solver{{Initial: listSchedulers()}, {Initial: listSchedulers(), LNS: true}} {
			res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{TimeLimit: raceSlowdown * 400 * time.Millisecond})
			if err != nil {
				t.Fatalf("seed %d, LNS %v: %v", seed, s.LNS, err)
			}
			switch res.Status {
			case solver.Optimal, solver.Feasible, solver.Fallback:
			default:
				t.Fatalf("seed %d, LNS %v: status %s", seed, s.LNS, res.Status)
			}
			for _, h := range listSchedulers() {
				l, err := solver.SolveWindow(context.Background(), w, h, solver.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if res.Objective > l.Objective+1e-9 {
					t.Errorf("seed %d, LNS %v: sat %.6f worse than %s %.6f", seed, s.LNS, res.Objective, h.Name(), l.Objective)
				}
			}
			if !res.HasBound() || res.Bound > res.Objective+1e-9 {
				t.Errorf("seed %d, LNS %v: bound %v, objective %v", seed, s.LNS, res.Bound, res.Objective)
			}
			if satStats(res).Search.LNSMS > 0 && !s.LNS {
				t.Errorf("seed %d, LNS %v: %v ms of neighbourhood moves", seed, s.LNS, satStats(res).Search.LNSMS)
			}
			if s.LNS && satStats(res).Search.LNSMS > 0 {
				lnsRan++
			}
		}
	}
	// On a loaded machine 400 ms may end before the moves get their turn:
	// the property is that they run given the time, so longer limits are
	// tried before the test fails.
	for _, limit := range []time.Duration{2 * time.Second, 8 * time.Second} {
		for seed := range uint64(4) {
			if lnsRan > 0 {
				break
			}
			w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 30 + 10*int(seed%2)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := solver.SolveWindow(context.Background(), w, sat.Solver{Initial: listSchedulers(), LNS: true}, solver.Options{TimeLimit: raceSlowdown * limit})
			if err != nil {
				t.Fatal(err)
			}
			if satStats(res).Search.LNSMS > 0 {
				lnsRan++
			}
		}
	}
	if lnsRan == 0 {
		t.Error("the neighbourhood moves never ran, even with 8 s")
	}
}

// forSmallCPWindows calls fn on 240 seeded random small windows with jobs
// (1–3 nodes, 2–4 waiting jobs, 10 s grid), their models and brute-force
// optima.
func forSmallCPWindows(t *testing.T, seed uint64, fn func(i int, w *model.Window, m *cp.Model, want float64)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 8))
	const g = 10
	for i := range 240 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 2+rng.IntN(3), g)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cp.Build(w, g)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Jobs) == 0 {
			continue
		}
		want, _ := bruteForce(t, w)
		fn(i, w, m, want)
	}
}

// TestGroupBoundBelowBruteForce: on 240 seeded random small windows the
// group bound (each group of a partition of the jobs solved alone, the
// bounds added) never exceeds the brute-force optimum, for groups of at
// most 1–2, 2–4 and 3–6 jobs (see groupBounds), without an incumbent
// and with a serial schedule as one (its contention and blocking
// partitions first, only the groups it delays searched); and it rises
// above Σ ω_i·EST_i on some windows, so the comparison is not vacuous.
func TestGroupBoundBelowBruteForce(t *testing.T) {
	var above [2]int
	forSmallCPWindows(t, 12, func(i int, w *model.Window, m *cp.Model, want float64) {
		for k, bound := range []func(*cp.Model, int) (int64, error){sat.GroupBound, sat.GroupBoundFrom} {
			for _, size := range []int{1, 2, 3} {
				b, err := bound(m, size)
				if err != nil {
					t.Fatal(err)
				}
				if got := m.ObjectiveOfWeighted(float64(b)); got > want+1e-9 {
					data, _ := windowjson.Marshal(w)
					t.Fatalf("window %d, groups of %d, incumbent %v: bound %.9g above the brute-force optimum %.9g\n%s", i, size, k == 1, got, want, data)
				}
				if b > sat.LowerBound(m) {
					above[k]++
				}
			}
		}
	})
	for k, a := range above {
		if a < 20 {
			t.Errorf("the group bound (incumbent %v) rose above LB on only %d windows", k == 1, a)
		}
	}
	t.Logf("group bound above LB on %v (window, size) pairs without and with an incumbent", above)
}

// TestPoolBoundBelowBruteForce: on 240 seeded random small windows the
// optimum of the counting relaxation (cp.Model.Pool), with all its
// resources and with the most contended one, never exceeds the
// brute-force optimum; and it rises above Σ ω_i·EST_i on some windows.
func TestPoolBoundBelowBruteForce(t *testing.T) {
	above := 0
	forSmallCPWindows(t, 13, func(i int, w *model.Window, m *cp.Model, want float64) {
		for _, keep := range []int{0, 1} {
			b, err := sat.PoolBound(m, keep)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.ObjectiveOfWeighted(float64(b)); got > want+1e-9 {
				data, _ := windowjson.Marshal(w)
				t.Fatalf("window %d, keep %d: bound %.9g above the brute-force optimum %.9g\n%s\n%s", i, keep, got, want, data, m.Pool(keep).Describe())
			}
			if b > sat.LowerBound(m) {
				above++
			}
		}
	})
	if above < 20 {
		t.Errorf("the counting relaxation rose above LB on only %d windows", above)
	}
	t.Logf("counting relaxation above LB on %d (window, keep) pairs", above)
}

// TestTimeIndexedBoundBelowBruteForce: on 240 seeded random small
// windows the time-indexed relaxation's Lagrangian bound, over the grid
// and over the compressed time domain, never exceeds the brute-force
// optimum; it rises above Σ ω_i·EST_i on some windows and reaches the
// optimum on some, so the comparison is not vacuous.
func TestTimeIndexedBoundBelowBruteForce(t *testing.T) {
	above, tight := 0, 0
	forSmallCPWindows(t, 14, func(i int, w *model.Window, m *cp.Model, want float64) {
		for _, grid := range []bool{false, true} {
			b, err := sat.TimeIndexedBound(m, grid)
			if err != nil {
				t.Fatal(err)
			}
			got := m.ObjectiveOfWeighted(float64(b))
			if got > want+1e-9 {
				data, _ := windowjson.Marshal(w)
				t.Fatalf("window %d, grid %v: bound %.9g above the brute-force optimum %.9g\n%s\n%s", i, grid, got, want, data, m.Describe())
			}
			if b > sat.LowerBound(m) {
				above++
				if got > want-1e-9 {
					tight++
				}
			}
		}
	})
	if above < 20 || tight == 0 {
		t.Errorf("the time-indexed bound rose above LB on only %d (window, grid) pairs, %d of them to the optimum", above, tight)
	}
	t.Logf("time-indexed bound above LB on %d (window, grid) pairs, %d of them at the optimum", above, tight)
}

// TestFixingKeepsAnOptimum: on 240 seeded random small windows, on the
// grid and in the compressed time domain, fixing starts by the
// time-indexed relaxation's reduced costs — against an incumbent one
// above the optimum (the least margin the solver uses), the fixing
// applied to every probe of a search from no incumbent; and against a
// serial schedule, applied to the domains and probes of a search from
// it — still lets both searches find the brute-force optimum, and rules
// out starts on some windows so that the comparison bites.
func TestFixingKeepsAnOptimum(t *testing.T) {
	windows, ruled := 0, 0
	forSmallCPWindows(t, 15, func(i int, w *model.Window, m *cp.Model, want float64) {
		for _, grid := range []bool{false, true} {
			opt, none, serial, out, err := sat.FixedOptimum(m, grid)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.ObjectiveOfWeighted(float64(opt)); math.Abs(got-want) > 1e-9 {
				t.Fatalf("window %d, grid %v: search optimum %.9g, brute force %.9g", i, grid, got, want)
			}
			if none != opt || serial != opt {
				data, _ := windowjson.Marshal(w)
				t.Fatalf("window %d, grid %v: %d starts ruled out, optimum %d from no incumbent and %d from a serial one, want %d\n%s\n%s",
					i, grid, out, none, serial, opt, data, m.Describe())
			}
			if out > 0 {
				windows++
				ruled += out
			}
		}
	})
	if windows < 20 {
		t.Errorf("fixing ruled out starts on only %d (window, grid) pairs", windows)
	}
	t.Logf("fixing ruled out %d starts on %d (window, grid) pairs", ruled, windows)
}

// chWindow draws a small random window (instances.RandomCPWindow) on a
// topology with several switches — 2–4 nodes as one leaf, one node per
// leaf, or two pods — some of whose jobs get 3 one-core units, priced by
// lan-code or lan-paper with hop cost 1000 or 7.
func chWindow(t *testing.T, rng *rand.Rand, g int64) *model.Window {
	t.Helper()
	nodes := 2 + rng.IntN(3)
	w, err := instances.RandomCPWindow(rng, nodes, 1+rng.IntN(3), g)
	if err != nil {
		t.Fatal(err)
	}
	spec := [][3]int{{1, 1, nodes}, {1, nodes, 1}, {nodes, 1, 1}}[rng.IntN(3)]
	if nodes == 4 && rng.IntN(2) == 0 {
		spec = [3]int{2, 1, 2}
	}
	if w.Topology, err = model.NewLayout(spec[0], spec[1], spec[2]); err != nil {
		t.Fatal(err)
	}
	w.TopologySpec = model.TopologySpec{Layout: &model.LayoutSpec{Pods: spec[0], LeavesPerPod: spec[1], NodesPerLeaf: spec[2]}}
	w.Cost = model.CostModel{Kind: []model.CostKind{model.CostLanCode, model.CostLanPaper}[rng.IntN(2)], HopCost: []int64{1000, 7}[rng.IntN(2)]}
	for j := range w.Jobs {
		if s := w.Jobs[j].Select; s != nil && rng.IntN(3) == 0 {
			s[0].Count, s[0].Amounts = 3, model.Resources{"ncpus": 1}
			w.Jobs[j].Nodes = 3
		}
	}
	return w
}

// TestSATCHEqualsBruteForce: with the CH term (Solver.CHWeight W > 0),
// on 240 seeded random small windows with multi-switch topologies and
// jobs of up to 3 units, the SAT optimum of Eq. (2) + W·Σ CH equals the
// brute-force optimum (bruteForceCH, which prices node sets with
// model.CostModel.Cost), with and without the list schedules, on the
// grid and compressed, with every node block written up front;
// solver.SolveWindow recomputes the combined objective. The CH term
// must change the optimal placement on some windows (against W = 0), so
// that the comparison bites.
func TestSATCHEqualsBruteForce(t *testing.T) {
	defer sat.BoundsFromJobs(1)()
	rng := rand.New(rand.NewPCG(81, 82))
	const g = 10
	changed := 0
	for i := range 240 {
		w := chWindow(t, rng, g)
		W := []float64{0.001, 0.004, 1.0 / 300, 0.0005}[rng.IntN(4)]
		if w.Cost.HopCost == 7 {
			W *= 100
		}
		want, _ := bruteForceCH(t, w, W)
		for si, s := range []sat.Solver{{Initial: listSchedulers(), CHWeight: W}, {CHWeight: W, Grid: true},
			{Initial: listSchedulers(), CHWeight: W, Ablation: sat.Ablation{Eager: true, NoDominance: true}}} {
			res, err := solver.SolveWindow(context.Background(), w, s, solver.Options{Granularity: g})
			if err != nil {
				data, _ := windowjson.Marshal(w)
				t.Fatalf("window %d (W %v), solver %d: %v\n%s", i, W, si, err, data)
			}
			if res.Status != solver.Optimal || res.CHWeight != W {
				t.Fatalf("window %d, solver %d: status %s, CH weight %v", i, si, res.Status, res.CHWeight)
			}
			if math.Abs(res.Objective-want) > 1e-9*max(1, want) {
				data, _ := windowjson.Marshal(w)
				t.Fatalf("window %d (W %v, cost %v), solver %d: objective %.9g, brute force %.9g\n%s", i, W, w.Cost, si, res.Objective, want, data)
			}
		}
		plain, _ := bruteForceCH(t, w, 0)
		res0, err := solver.SolveWindow(context.Background(), w, sat.Solver{}, solver.Options{Granularity: g})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res0.Objective-plain) > 1e-9 {
			t.Fatalf("window %d: W = 0 objective %.9g, brute force %.9g", i, res0.Objective, plain)
		}
		var ch int64
		for _, a := range res0.Allocations {
			ch += w.Cost.Cost(w.Topology, a.Nodes)
		}
		if res0.Objective+W*float64(ch) > want+1e-9*max(1, want) {
			changed++ // the W = 0 optimum is not optimal with the CH term
		}
	}
	if changed < 10 {
		t.Errorf("the CH term changed the optimum on only %d windows", changed)
	}
	t.Logf("the CH term changed the optimum on %d of 240 windows", changed)
}

// satStats returns sat's counters of an answer of SolveWindow.
func satStats(res *solver.ScheduleResult) *solver.SATStats {
	st := res.Stats.SAT
	if st == nil {
		return &solver.SATStats{}
	}
	return st
}
