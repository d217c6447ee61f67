package sim_test

import (
	"cmp"
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
)

// tiny is three jobs on a 4-node cluster (1 pod × 2 leaves × 2 nodes):
// A (t=0, 10 s, 3 nodes), B (t=1, 5 s, 2 nodes), C (t=2, 2 s, 1 node).
func tiny() *trace.Trace {
	return &trace.Trace{Jobs: []trace.Job{
		{ID: "A", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 3},
		{ID: "B", Submit: 1, Runtime: 5, Walltime: 5, Nodes: 2},
		{ID: "C", Submit: 2, Runtime: 2, Walltime: 2, Nodes: 1},
	}}
}

func config(t *testing.T, policy string) sim.Config {
	t.Helper()
	topo, err := model.NewLayout(1, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	return sim.Config{Topology: topo, Policy: policy, Tau: 5, Solver: csp.Solver{}, Check: true}
}

func waits(t *testing.T, r *sim.Result) map[string]int64 {
	t.Helper()
	w := map[string]int64{}
	for i := range r.Jobs {
		w[r.Jobs[i].ID] = r.Jobs[i].Wait()
	}
	return w
}

// TestTinyTrace pins hand-computed schedules:
//
//	fcfs:   A 0–10; B waits for A (9 s); C waits behind B (8 s).
//	easy:   C backfills at 2 (it ends at 4, before A's end at 10).
//	window: τ = 5; at t = 5 the window takes C, B (fewer nodes first) and
//	        stops at A, which waits a period and starts at 10.
func TestTinyTrace(t *testing.T) {
	cases := []struct {
		policy string
		want   map[string]int64
	}{
		{"fcfs", map[string]int64{"A": 0, "B": 9, "C": 8}},
		{"easy", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"window", map[string]int64{"A": 10, "B": 4, "C": 3}},
		// C is shorter, smaller and fits: every reordering or backfilling
		// policy starts it at once.
		{"sjf", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"saf", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"drf", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"tetris", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"pbs-fifo", map[string]int64{"A": 0, "B": 9, "C": 0}},
		{"pbs-walltime", map[string]int64{"A": 0, "B": 9, "C": 0}},
	}
	for _, c := range cases {
		r, err := sim.Run(context.Background(), tiny(), config(t, c.policy))
		if err != nil {
			t.Fatalf("%s: %v", c.policy, err)
		}
		got := waits(t, r)
		for id, w := range c.want {
			if got[id] != w {
				t.Errorf("%s: job %s waited %d s, want %d (all: %v)", c.policy, id, got[id], w, got)
			}
		}
	}
}

func TestTinyMetrics(t *testing.T) {
	r, err := sim.Run(context.Background(), tiny(), config(t, "fcfs"))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summarise()
	// Waits 0, 9, 8 → 17/3; turnarounds 10, 14, 10 → 34/3; bounded
	// slowdowns max(1, 10/10), max(1, 14/10), max(1, 10/10) → 3.4/3.
	if s.Jobs != 3 || abs(s.MeanWait-17.0/3) > 1e-9 || abs(s.MeanTurnaround-34.0/3) > 1e-9 || abs(s.MeanBSLD-3.4/3) > 1e-9 {
		t.Errorf("summary %+v", s)
	}
	// Makespan 0..15; node-seconds 30 + 10 + 2 = 42 of 4 × 15.
	if s.Makespan != 15 || abs(s.Utilisation-42.0/60) > 1e-9 {
		t.Errorf("makespan %d utilisation %g", s.Makespan, s.Utilisation)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestDropsJobsLargerThanCluster(t *testing.T) {
	tr := tiny()
	tr.Jobs = append(tr.Jobs, trace.Job{ID: "huge", Submit: 3, Runtime: 1, Walltime: 1, Nodes: 5})
	r, err := sim.Run(context.Background(), tr, config(t, "window"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Dropped != 1 || len(r.Jobs) != 3 {
		t.Errorf("dropped %d, ran %d", r.Dropped, len(r.Jobs))
	}
}

func TestBadConfig(t *testing.T) {
	c := config(t, "magic")
	if _, err := sim.Run(context.Background(), tiny(), c); err == nil {
		t.Error("no error for an unknown policy")
	}
	c = config(t, "window")
	c.Tau = 0
	if _, err := sim.Run(context.Background(), tiny(), c); err == nil {
		t.Error("no error for τ = 0")
	}
}

const lanTrace = "../../instances/traces/lan2023_trace_1800_40.txt.gz"

// lanPrefix returns the first 3,000 jobs of the NSA paper's trace and its
// 25×4×10 cluster, skipping the test when the trace is absent.
func lanPrefix(t *testing.T) (*trace.Trace, *model.Topology) {
	t.Helper()
	if _, err := os.Stat(lanTrace); err != nil {
		t.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	tr, err := trace.Open(lanTrace, "lan", trace.Options{MaxJobs: 3000})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := model.NewLayout(25, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	return tr, topo
}

// TestLanPrefix runs the first 3,000 jobs of the NSA paper's trace under
// each policy; every allocation goes through model.Check, and the window
// policy is deterministic.
func TestLanPrefix(t *testing.T) {
	tr, topo := lanPrefix(t)
	var first sim.Summary
	for _, policy := range append([]string{"window", "window"}, sim.PolicyNames()...) {
		c := sim.Config{Topology: topo, Policy: policy, Tau: 60, Solver: csp.Solver{}, MaxJobs: 5, Check: true}
		r, err := sim.Run(context.Background(), tr, c)
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		s := r.Summarise()
		switch {
		case policy == sim.CP && s.Windows == 0:
			t.Errorf("cp reported no decisions") // its decisions count as windows, with their latency
		case policy != "window" && policy != sim.CP && s.Windows != 0:
			t.Errorf("%s solved windows", policy)
		}
		if s.Jobs != 3000 {
			t.Errorf("%s ran %d of 3000 jobs", policy, s.Jobs)
		}
		if policy == "window" {
			s2 := s
			s2.SolveMedianMS, s2.SolveP99MS = 0, 0 // timings vary
			if first.Jobs != 0 && s2 != first {
				t.Errorf("window policy not deterministic: %+v vs %+v", s2, first)
			}
			first = s2
		}
		t.Logf("%-6s mean cost %.0f (multi %.0f), wait %.0f s, bsld %.2f, util %.1f%%", policy, s.MeanCost, s.MeanMultiCost, s.MeanWait, s.MeanBSLD, 100*s.Utilisation)
	}
}

// TestOrderingPolicies pins the orderings on a trace where they differ: on
// a 4-node cluster A (4 nodes, 10 s) runs; then four jobs arrive, and at
// t = 10 the policies pick different ones first.
func TestOrderingPolicies(t *testing.T) {
	tr := &trace.Trace{Jobs: []trace.Job{
		{ID: "A", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 4},
		{ID: "long", Submit: 1, Runtime: 100, Walltime: 100, Nodes: 1},
		{ID: "wide", Submit: 2, Runtime: 20, Walltime: 20, Nodes: 4},
		{ID: "short", Submit: 3, Runtime: 5, Walltime: 5, Nodes: 2},
	}}
	first := map[string]string{ // the job that starts first at t = 10
		"fcfs": "long", "sjf": "short", "saf": "short", "drf": "long", "tetris": "wide", "pbs-walltime": "short",
	}
	for policy, want := range first {
		r, err := sim.Run(context.Background(), tr, config(t, policy))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for i := range r.Jobs {
			if r.Jobs[i].Start == 10 && got == "" {
				got = r.Jobs[i].ID
			}
		}
		if got != want {
			t.Errorf("%s: first start at t=10 is %q, want %q", policy, got, want)
		}
	}
}

// TestBridiMetrics pins WQT, NL and TR on the tiny trace under fcfs (waits
// A 0, B 9, C 8) with two queues of different expected waits.
func TestBridiMetrics(t *testing.T) {
	cases := []struct {
		name      string
		queues    [3]string // of A, B, C
		ewt       map[string]int64
		def       int64
		wqt       float64
		late      int
		tardiness int64
	}{
		// ewt 5 and 4: 0/5 + 9/5 + 8/4 = 3.8; B is 4 s late, C 4 s.
		{"two queues", [3]string{"1", "1", "2"}, map[string]int64{"1": 5, "2": 4}, 0, 3.8, 2, 8},
		// A wait equal to the ewt is not late: 0/9 + 9/9 + 8/4 = 3; C is
		// 4 s late.
		{"on time at ewt", [3]string{"1", "1", "2"}, map[string]int64{"1": 9, "2": 4}, 0, 3, 1, 4},
		// C's queue is not listed: the default ewt of 10 s, 8/10.
		{"default ewt", [3]string{"1", "1", ""}, map[string]int64{"1": 5, "2": 4}, 10, 2.6, 1, 4},
		// Nothing listed: the one-hour DefaultEWT, 17/3600, nobody late.
		{"DefaultEWT", [3]string{"", "", "7"}, nil, 0, 17.0 / sim.DefaultEWT, 0, 0},
	}
	for _, c := range cases {
		tr := tiny()
		for i := range tr.Jobs {
			tr.Jobs[i].Queue = c.queues[i]
		}
		cfg := config(t, "fcfs")
		cfg.ExpectedWait, cfg.DefaultExpectedWait = c.ewt, c.def
		r, err := sim.Run(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		s := r.Summarise()
		if abs(s.WQT-c.wqt) > 1e-9 || abs(s.MeanWQT-c.wqt/3) > 1e-9 || s.LateJobs != c.late || s.Tardiness != c.tardiness {
			t.Errorf("%s: WQT %g (mean %g), NL %d, TR %d; want %g, %d, %d", c.name, s.WQT, s.MeanWQT, s.LateJobs, s.Tardiness, c.wqt, c.late, c.tardiness)
		}
		for i := range r.Jobs {
			if j := r.Jobs[i]; j.Queue != c.queues[j.ID[0]-'A'] {
				t.Errorf("%s: job %s queue %q", c.name, j.ID, j.Queue)
			}
		}
	}
	cfg := config(t, "fcfs")
	cfg.ExpectedWait = map[string]int64{"1": 0}
	if _, err := sim.Run(context.Background(), tiny(), cfg); !errors.Is(err, sim.ErrConfig) {
		t.Errorf("ewt 0: err %v, want ErrConfig", err)
	}
	cfg = config(t, "fcfs")
	cfg.DefaultExpectedWait = -1
	if _, err := sim.Run(context.Background(), tiny(), cfg); !errors.Is(err, sim.ErrConfig) {
		t.Errorf("default ewt −1: err %v, want ErrConfig", err)
	}
}

// TestAllocators runs a per-job policy on 1 pod × 2 leaves × 4 nodes
// (leaf 0: nodes 0–3, leaf 1: nodes 4–7). X (1 node, long) starts first
// on node 0 under every allocator; then Y (4 nodes) arrives. First-fit
// gives Y nodes 1–4, across the leaves: of its 6 node pairs 3 are 2 hops
// apart and 3 are 4, so 18 hops and a cost of (18 − 6)·1000/4 = 3000.
// Slurm (the lowest switch holding 4 idle nodes: leaf 1, as leaf 0 has 3)
// and Mishra et al.'s allocators (the same switch rule) give it leaf 1:
// 12 hops, (12 − 6)·1000/4 = 1500.
func TestAllocators(t *testing.T) {
	topo, err := model.NewLayout(1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	tr := &trace.Trace{Jobs: []trace.Job{
		{ID: "X", Submit: 0, Runtime: 100, Walltime: 100, Nodes: 1},
		{ID: "Y", Submit: 1, Runtime: 10, Walltime: 10, Nodes: 4},
	}}
	want := map[string]struct {
		nodes []int
		cost  int64
	}{
		"":                {[]int{1, 2, 3, 4}, 3000},
		"first-fit":       {[]int{1, 2, 3, 4}, 3000},
		"slurm":           {[]int{4, 5, 6, 7}, 1500},
		"mishra-greedy":   {[]int{4, 5, 6, 7}, 1500},
		"mishra-balanced": {[]int{4, 5, 6, 7}, 1500},
		"mishra-adaptive": {[]int{4, 5, 6, 7}, 1500},
	}
	for alloc, w := range want {
		for _, policy := range []string{"fcfs", "easy", "tetris"} {
			r, err := sim.Run(context.Background(), tr, sim.Config{Topology: topo, Policy: policy, Allocator: alloc, Check: true})
			if err != nil {
				t.Fatalf("%s/%s: %v", policy, alloc, err)
			}
			got := map[string]sim.JobResult{}
			for _, j := range r.Jobs {
				got[j.ID] = j
			}
			if x := got["X"]; !slices.Equal(x.Nodes, []int{0}) {
				t.Errorf("%s/%s: X on %v, want [0]", policy, alloc, x.Nodes)
			}
			if y := got["Y"]; !slices.Equal(y.Nodes, w.nodes) || y.Cost != w.cost || y.Start != 1 {
				t.Errorf("%s/%s: Y on %v from %d, cost %d; want %v from 1, cost %d", policy, alloc, y.Nodes, y.Start, y.Cost, w.nodes, w.cost)
			}
		}
	}
	for _, bad := range []sim.Config{
		{Topology: topo, Policy: "easy", Allocator: "round-robin"},
		{Topology: topo, Policy: "window", Tau: 5, Solver: csp.Solver{}, Allocator: "slurm"},
		{Topology: topo, Policy: "easy", GapSolver: csp.Solver{}},
	} {
		if _, err := sim.Run(context.Background(), tr, bad); !errors.Is(err, sim.ErrConfig) {
			t.Errorf("%s with allocator %q, gap solver %v: err %v, want ErrConfig", bad.Policy, bad.Allocator, bad.GapSolver, err)
		}
	}
	if names := sim.AllocatorNames(); !slices.Equal(names, []string{"first-fit", "mishra-adaptive", "mishra-balanced", "mishra-greedy", "slurm"}) {
		t.Errorf("AllocatorNames() = %v", names)
	}
}

// noOverlap fails t when two jobs of r hold a node at the same time or a
// job holds a node id twice.
func noOverlap(t *testing.T, name string, r *sim.Result) {
	t.Helper()
	type span struct {
		from, to int64
		id       string
	}
	byNode := map[int][]span{}
	for _, j := range r.Jobs {
		for _, k := range j.Nodes {
			byNode[k] = append(byNode[k], span{j.Start, j.End, j.ID})
		}
	}
	for k, ss := range byNode {
		slices.SortFunc(ss, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		for i := 1; i < len(ss); i++ {
			if ss[i].from < ss[i-1].to {
				t.Fatalf("%s: node %d held by %s [%d, %d) and %s [%d, %d)", name, k, ss[i-1].id, ss[i-1].from, ss[i-1].to, ss[i].id, ss[i].from, ss[i].to)
			}
		}
	}
}

// TestAllocatorsLanPrefix runs per-job policies with every allocator on the
// first 3,000 jobs of the NSA paper's trace: every allocation passes
// model.Check and no node is ever shared; an allocator does not change
// FCFS's start times (it decides where, not when); slurm and mishra-greedy,
// which fill leaves, lower the mean CH cost of first-fit. (Mishra et al.'s
// balanced shares spread jobs over more leaves and cost more than
// first-fit under the CH cost on this prefix; the adaptive one picks by
// their pattern cost, not the CH cost.)
func TestAllocatorsLanPrefix(t *testing.T) {
	tr, topo := lanPrefix(t)
	for _, policy := range []string{"fcfs", "easy", "tetris"} {
		var ff *sim.Result
		for _, alloc := range sim.AllocatorNames() {
			r, err := sim.Run(context.Background(), tr, sim.Config{Topology: topo, Policy: policy, Allocator: alloc, Check: true})
			if err != nil {
				t.Fatalf("%s/%s: %v", policy, alloc, err)
			}
			name := policy + "/" + alloc
			noOverlap(t, name, r)
			s := r.Summarise()
			if s.Jobs != 3000 {
				t.Errorf("%s ran %d of 3000 jobs", name, s.Jobs)
			}
			if alloc == sim.FirstFit {
				ff = r
			} else if fs := ff.Summarise(); (alloc == "slurm" || alloc == "mishra-greedy") && s.MeanMultiCost >= fs.MeanMultiCost {
				t.Errorf("%s: mean multi-node cost %.0f not below first-fit's %.0f", name, s.MeanMultiCost, fs.MeanMultiCost)
			}
			if policy == "fcfs" {
				for i := range r.Jobs {
					if r.Jobs[i].ID != ff.Jobs[i].ID || r.Jobs[i].Start != ff.Jobs[i].Start {
						t.Fatalf("%s: job %d is %s from %d, first-fit %s from %d", name, i, r.Jobs[i].ID, r.Jobs[i].Start, ff.Jobs[i].ID, ff.Jobs[i].Start)
					}
				}
			}
			t.Logf("%-22s mean cost %.0f (multi %.0f), wait %.0f s", name, s.MeanCost, s.MeanMultiCost, s.MeanWait)
		}
	}
}

// TestGap: on 1 pod × 2 leaves × 4 nodes, P (2 nodes) and Q (4 nodes)
// arrive at 0 and share the window at τ = 5, P first (fewer nodes). Seq
// puts P on nodes 0–1 (cost 500) and Q on 2–5 across the leaves (20 hops:
// (20 − 6)·1000/4 = 3500), 4000 in all; the optimum puts Q on a leaf of its
// own (1500) for 2000. So seq's gap is (4000 − 2000)/4000 = 0.5, csp's 0,
// and measuring it does not change seq's trajectory.
func TestGap(t *testing.T) {
	topo, err := model.NewLayout(1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	tr := &trace.Trace{Jobs: []trace.Job{
		{ID: "P", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 2},
		{ID: "Q", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 4},
		{ID: "R", Submit: 20, Runtime: 10, Walltime: 10, Nodes: 1}, // a window without multi-node jobs
	}}
	run := func(s, gap solver.Solver) *sim.Result {
		t.Helper()
		r, err := sim.Run(context.Background(), tr, sim.Config{Topology: topo, Policy: "window", Tau: 5, Solver: s, GapSolver: gap, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	seq := run(heuristics.Seq{}, csp.Solver{})
	if len(seq.Gaps) != 1 || seq.GapSkipped != 0 {
		t.Fatalf("seq: gaps %+v, skipped %d; want one measured window", seq.Gaps, seq.GapSkipped)
	}
	if g := seq.Gaps[0]; g.Time != 5 || g.Objective != 4000 || g.Bound != 2000 || g.ExactObjective != 2000 || g.Exact != solver.Optimal || g.Gap != 0.5 {
		t.Errorf("seq: gap %+v, want objective 4000, bound 2000, gap 0.5 at t=5", g)
	}
	sum := seq.Summarise()
	if sum.Gap == nil || sum.Gap.Solver != "csp" || sum.Gap.Windows != 1 || sum.Gap.MeanGap != 0.5 || sum.Gap.MaxGap != 0.5 || sum.Gap.OptimalShare != 0 {
		t.Errorf("seq: gap summary %+v", sum.Gap)
	}
	plain := run(heuristics.Seq{}, nil)
	if !reflect.DeepEqual(plain.Jobs, seq.Jobs) {
		t.Errorf("measuring the gap changed the trajectory:\n%+v\n%+v", plain.Jobs, seq.Jobs)
	}
	if s := plain.Summarise(); s.Gap != nil || plain.GapSolver != "" {
		t.Errorf("no gap solver, but gap summary %+v", s.Gap)
	}

	exact := run(csp.Solver{}, csp.Solver{})
	sum = exact.Summarise()
	if len(exact.Gaps) != 1 || exact.Gaps[0].Objective != 2000 || sum.Gap.MeanGap != 0 || sum.Gap.MaxGap != 0 || sum.Gap.OptimalShare != 1 {
		t.Errorf("csp: gaps %+v, summary %+v; want gap 0 on the one window", exact.Gaps, sum.Gap)
	}
}

// aliasSolver places the window's jobs first-fit and returns node lists
// that are slices of the window's Idle list (as a solver may), to check
// that the simulator, which builds each window over the previous one's
// lists, keeps copies.
type aliasSolver struct{}

func (aliasSolver) Name() string { return "alias" }

func (aliasSolver) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	w := p.Window
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Solver: "alias"}
	at := 0
	for _, j := range p.Jobs {
		n := w.Jobs[j].Nodes
		res.Allocations = append(res.Allocations, model.Allocation{Job: j, Nodes: w.Idle[at : at+n : at+n], Start: w.Time})
		res.Objective += w.Cost.Cost(w.Topology, w.Idle[at:at+n])
		at += n
	}
	return res, nil
}

// TestWindowListsReused: with a solver whose node lists share the
// window's Idle list, the window policy's jobs keep the nodes they were
// given (no two jobs on a node at once, every job on its own size) while
// later windows are built over the earlier ones' lists.
func TestWindowListsReused(t *testing.T) {
	tr, topo := lanPrefix(t)
	r, err := sim.Run(context.Background(), tr, sim.Config{Topology: topo, Policy: "window", Tau: 60, Solver: aliasSolver{},
		MaxJobs: 5, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Jobs) != len(tr.Jobs) || r.Windows < 100 {
		t.Fatalf("%d of %d jobs run in %d windows", len(r.Jobs), len(tr.Jobs), r.Windows)
	}
	size := map[string]int{}
	for _, j := range tr.Jobs {
		size[j.ID] = j.Nodes
	}
	for _, j := range r.Jobs {
		if len(j.Nodes) != size[j.ID] {
			t.Fatalf("job %s holds %d nodes, wants %d", j.ID, len(j.Nodes), size[j.ID])
		}
	}
	noOverlap(t, "alias solver", r)
}

// stuckSolver ignores its deadline until release is closed, then reports
// on changed whether the window it was given changed meanwhile: a
// portfolio abandons it at every window, as it abandons a cgo solver
// mid-solve or a goroutine the machine's load delays past the grace.
type stuckSolver struct {
	release <-chan struct{}
	changed chan<- bool
	started *atomic.Int64 // Solve calls begun
}

func (stuckSolver) Name() string { return "stuck" }

func (s stuckSolver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	s.started.Add(1)
	idle, jobs := slices.Clone(p.Window.Idle), slices.Clone(p.Window.Jobs)
	<-s.release
	s.changed <- !slices.Equal(idle, p.Window.Idle) || !reflect.DeepEqual(jobs, p.Window.Jobs)
	return &solver.Result{Status: solver.Unknown, Bound: solver.NoBound}, nil
}

// TestAbandonedSolverKeepsWindow: a window whose exact solver the
// portfolio abandoned is not written over by later windows (the
// simulator reuses a window's lists otherwise); the abandoned solver read
// it while the simulation went on, and crashed on lists of another
// window (a 251,928-job replay at a machine load of 8 did).
func TestAbandonedSolverKeepsWindow(t *testing.T) {
	tr, topo := lanPrefix(t)
	tr.Jobs = tr.Jobs[:40]
	release := make(chan struct{})
	changed := make(chan bool, 1000)
	var started atomic.Int64
	pf := solver.Portfolio{Exact: stuckSolver{release, changed, &started}, Fallback: heuristics.Seq{}, Grace: time.Millisecond}
	r, err := sim.Run(context.Background(), tr, sim.Config{Topology: topo, Policy: "window", Tau: 60, Solver: pf,
		MaxJobs: 5, Check: true, TimeLimit: 5 * time.Millisecond})
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if r.Windows < 10 {
		t.Fatalf("%d windows: too few to reuse lists", r.Windows)
	}
	// Every solver the portfolio started answers once released (on a
	// busy machine it starts fewer than one a window: a window whose own
	// work used the exact solver's share skips it).
	answered := 0
	deadline := time.Now().Add(10 * time.Second)
	for answered == 0 || answered < int(started.Load()) {
		select {
		case c := <-changed:
			answered++
			if c {
				t.Fatal("an abandoned solver's window changed under it")
			}
		case <-time.After(100 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d abandoned solvers answered (%d windows)", answered, started.Load(), r.Windows)
			}
		}
	}
	if answered < 3 {
		t.Errorf("only %d of %d windows started the exact solver: too few to reuse lists", answered, r.Windows)
	}
}

// TestSchedulerSeesRequestsOnly holds the heuristics to what a scheduler
// knows: a job's request, never its run time, which may exceed the request
// (SWF allows it; jobs here are not killed at it).
//
// Order: at t = 10 "over" (request 5, runs 100) and "fair" (request 8,
// runs 3) wait for A's 4 nodes; sjf, saf and pbs-walltime start "over"
// first by its request. Ranking by max(request, run time) would start
// "fair".
//
// Reservation: under easy, A (3 of 4 nodes) has asked for 5 s and runs 50.
// The head H needs all 4 nodes; by A's request it starts at 5, so B (1
// node, 40 s) cannot backfill without delaying it and waits behind H. An
// EASY that knew A's run time would backfill B at 2, as it would end (42)
// before A (50).
func TestSchedulerSeesRequestsOnly(t *testing.T) {
	order := &trace.Trace{Jobs: []trace.Job{
		{ID: "A", Submit: 0, Runtime: 10, Walltime: 10, Nodes: 4},
		{ID: "fair", Submit: 1, Runtime: 3, Walltime: 8, Nodes: 4},
		{ID: "over", Submit: 2, Runtime: 100, Walltime: 5, Nodes: 4},
	}}
	for _, policy := range []string{"sjf", "saf", "pbs-walltime"} {
		r, err := sim.Run(context.Background(), order, config(t, policy))
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Jobs {
			if r.Jobs[i].ID == "over" && r.Jobs[i].Start != 10 {
				t.Errorf("%s: over starts at %d, want 10 (request 5 < 8)", policy, r.Jobs[i].Start)
			}
		}
	}
	reserve := &trace.Trace{Jobs: []trace.Job{
		{ID: "A", Submit: 0, Runtime: 50, Walltime: 5, Nodes: 3},
		{ID: "H", Submit: 1, Runtime: 10, Walltime: 10, Nodes: 4},
		{ID: "B", Submit: 2, Runtime: 40, Walltime: 40, Nodes: 1},
	}}
	r, err := sim.Run(context.Background(), reserve, config(t, "easy"))
	if err != nil {
		t.Fatal(err)
	}
	start := map[string]int64{}
	for i := range r.Jobs {
		start[r.Jobs[i].ID] = r.Jobs[i].Start
	}
	if want := map[string]int64{"A": 0, "H": 50, "B": 60}; !reflect.DeepEqual(start, want) {
		t.Errorf("easy starts %v, want %v", start, want)
	}
}
