package cpolicy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// randomDecision returns a decision point of a random cluster: nodes,
// free, running and waiting jobs (requests from seconds to a day).
func randomDecision(r *rand.Rand, maxJobs int) (now int64, nodes, free int, running []Running, waiting []Job) {
	now = 100_000 + r.Int64N(1000)
	nodes = 4 + r.IntN(60)
	free = nodes
	for free > 0 && r.IntN(3) > 0 {
		n := 1 + r.IntN(free)
		end := now - 50 + r.Int64N(20_000) // some overran
		running = append(running, Running{End: end, Nodes: n})
		free -= n
	}
	for range 1 + r.IntN(maxJobs) {
		req := int64(1 + r.IntN(100))
		if r.IntN(2) == 0 {
			req = int64(10 + r.IntN(86_400))
		}
		waiting = append(waiting, Job{Submit: now - r.Int64N(50_000), Request: req, Nodes: 1 + r.IntN(nodes)})
	}
	return
}

// checkStart fails unless start holds distinct valid indices into waiting
// whose nodes sum to at most free.
func checkStart(t *testing.T, start []int, free int, waiting []Job) {
	t.Helper()
	used, seen := 0, map[int]bool{}
	for _, i := range start {
		if i < 0 || i >= len(waiting) || seen[i] {
			t.Fatalf("start %v: bad or repeated index %d", start, i)
		}
		seen[i] = true
		used += waiting[i].Nodes
	}
	if used > free {
		t.Fatalf("start %v uses %d nodes, %d free", start, used, free)
	}
}

func TestDecideStartsWhatFits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := &Policy{Limit: 10 * time.Millisecond}
	var searched, idleStarts int
	for k := range 60 {
		now, nodes, free, running, waiting := randomDecision(r, 25)
		start, st, err := p.Decide(context.Background(), now, nodes, free, running, waiting)
		if err != nil {
			t.Fatalf("window %d: %v", k, err)
		}
		checkStart(t, start, free, waiting)
		if st.Searched {
			searched++
		}
		// On an idle cluster some job always fits, and every schedule the
		// policy can answer (left-justified) starts one at slot 0.
		if len(running) == 0 {
			if len(start) == 0 {
				t.Fatalf("window %d: an idle cluster of %d nodes, %d waiting, nothing started", k, nodes, len(waiting))
			}
			idleStarts++
		}
	}
	if searched == 0 || idleStarts == 0 {
		t.Fatalf("the test did not bite: %d searched, %d idle clusters", searched, idleStarts)
	}
}

// TestDecideNoWorseThanFCFS holds Decide's schedule to the FCFS list
// schedules (the serial one, and heuristics.PBSFifo) on the same model.
func TestDecideNoWorseThanFCFS(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, obj := range []string{BSLD, Wait} {
		p := &Policy{Limit: 20 * time.Millisecond, Objective: obj}
		better := 0
		for k := range 40 {
			now, nodes, free, running, waiting := randomDecision(r, 12)
			start, st, err := p.Decide(context.Background(), now, nodes, free, running, waiting)
			if err != nil {
				t.Fatal(err)
			}
			checkStart(t, start, free, waiting)
			if st.Trivial {
				continue
			}
			capacity := free
			for _, x := range running {
				capacity += x.Nodes
			}
			var sel []int
			for i := range waiting {
				if waiting[i].Nodes <= capacity {
					sel = append(sel, i)
				}
			}
			slices.SortStableFunc(sel, func(a, b int) int { return int(waiting[a].Submit - waiting[b].Submit) })
			d := newDecision(now, capacity, running, waiting, sel, obj, grid(now, capacity, running, waiting, sel, 0))
			if d.g != st.Grid {
				t.Fatalf("grid %d, Decide's %d", d.g, st.Grid)
			}
			pl := newPlan(now, capacity, running, waiting, sel, obj, 0)
			order := make([]int, len(pl.jobs))
			for i := range order {
				order[i] = i
			}
			fslots := make([]int, len(pl.jobs))
			newProfile(pl).serial(pl, order, fslots, math.MaxInt64)
			fcfs := pl.objective(fslots)
			pbs, err := heuristics.PBSFifo().Solve(context.Background(), &solver.ScheduleProblem{Window: d.w, Granularity: d.g})
			if err != nil {
				t.Fatal(err)
			}
			if err := model.Check(d.w, pbs.Allocations); err != nil {
				t.Fatal(err)
			}
			pbsObj := model.WeightedQueueTime(d.w, pbs.Allocations)
			if st.Objective > fcfs+1e-9*math.Abs(fcfs) || st.Objective > pbsObj+1e-9*math.Abs(pbsObj) {
				t.Fatalf("%s window %d: objective %v above FCFS %v or PBSFifo %v", obj, k, st.Objective, fcfs, pbsObj)
			}
			if st.Objective < fcfs-1e-9 {
				better++
			}
		}
		if better == 0 {
			t.Fatalf("%s: never better than FCFS: the test does not bite", obj)
		}
	}
}

func TestDecideTinyLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	p := &Policy{Limit: time.Millisecond}
	for k := range 10 {
		now, nodes, free, running, waiting := randomDecision(r, 150)
		begin := time.Now()
		start, st, err := p.Decide(context.Background(), now, nodes, free, running, waiting)
		if el := time.Since(begin); el > 500*time.Millisecond {
			t.Fatalf("window %d: %v at a 1 ms limit", k, el)
		}
		if err != nil {
			t.Fatal(err)
		}
		checkStart(t, start, free, waiting)
		if !st.Trivial && st.Seed == "" {
			t.Fatalf("window %d: no seed", k)
		}
	}
}

func TestDecideTrivial(t *testing.T) {
	p := &Policy{}
	ctx := context.Background()
	run := []Running{{End: 500, Nodes: 6}}
	cases := []struct {
		name    string
		free    int
		running []Running
		waiting []Job
		want    []int
		trivial bool
	}{
		{"empty queue", 4, run, nil, nil, true},
		{"nothing fits", 4, run, []Job{{Nodes: 5, Request: 10}, {Nodes: 7, Request: 10}}, nil, true},
		{"one job fits", 4, run, []Job{{Nodes: 3, Request: 10}}, []int{0}, true},
		{"all fit", 10, nil, []Job{{Nodes: 3, Request: 10}, {Nodes: 7, Request: 99}}, []int{0, 1}, true},
		// 3 + 4 > 4 free: the short job of 4 nodes first (bsld), the other
		// after the running job's end.
		{"short first", 4, run, []Job{{Submit: 1, Nodes: 3, Request: 5000}, {Submit: 2, Nodes: 4, Request: 10}}, []int{1}, false},
	}
	for _, c := range cases {
		start, st, err := p.Decide(ctx, 100, 10, c.free, c.running, c.waiting)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(start, c.want) || st.Trivial != c.trivial {
			t.Errorf("%s: start %v trivial %v, want %v %v", c.name, start, st.Trivial, c.want, c.trivial)
		}
	}
	for _, bad := range []struct {
		free    int
		running []Running
		waiting []Job
	}{{11, nil, nil}, {-1, nil, nil}, {5, []Running{{End: 1, Nodes: 6}}, nil}, {5, nil, []Job{{Nodes: 0}}}} {
		if _, _, err := p.Decide(ctx, 100, 10, bad.free, bad.running, bad.waiting); !errors.Is(err, ErrInput) {
			t.Errorf("%+v: err %v, want ErrInput", bad, err)
		}
	}
	if _, _, err := (&Policy{Objective: "x"}).Decide(ctx, 100, 10, 10, nil, []Job{{Nodes: 1}}); !errors.Is(err, ErrInput) {
		t.Errorf("objective x: err %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := p.Decide(cancelled, 100, 10, 10, nil, []Job{{Nodes: 1}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
}

func TestRoundEWT(t *testing.T) {
	seen := map[int64]bool{}
	for e := int64(1); e < 1<<20; e = e*11/10 + 1 {
		q := roundEWT(e)
		seen[q] = true
		if ratio := math.Max(float64(q)/float64(e), float64(e)/float64(q)); ratio > 1.225 {
			t.Fatalf("roundEWT(%d) = %d, ratio %.3f", e, q, ratio)
		}
		for q%2 == 0 {
			q /= 2
		}
		if q != 1 && q != 3 {
			t.Fatalf("roundEWT(%d) = %d is not 2^k or 3·2^k", e, roundEWT(e))
		}
	}
	if len(seen) < 30 {
		t.Fatalf("only %d values", len(seen))
	}
}

// TestDecideCallerChecks: with CallerChecks, Decide decides as without
// (same starts, same stats) and hands over, for every decision that
// built a model, the seed schedule it acted on: it passes model.Check,
// and its jobs that start now are the ones Decide starts.
func TestDecideCallerChecks(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 1))
	handed := 0
	for k := range 300 {
		now, nodes, free, running, waiting := randomDecision(r, 40)
		inline := &Policy{NoSearch: true, Objective: []string{BSLD, Wait}[k%2]}
		caller := *inline
		caller.CallerChecks = true
		want, wst, err := inline.Decide(context.Background(), now, nodes, free, running, waiting)
		if err != nil {
			t.Fatal(err)
		}
		got, st, err := caller.Decide(context.Background(), now, nodes, free, running, waiting)
		if err != nil {
			t.Fatal(err)
		}
		u := st.Unchecked
		st.Unchecked, st.Elapsed, wst.Elapsed = nil, 0, 0
		if !slices.Equal(got, want) || st != wst || wst.Unchecked != nil {
			t.Fatalf("decision %d: start %v %+v, inline %v %+v", k, got, st, want, wst)
		}
		if (u == nil) != st.Trivial {
			t.Fatalf("decision %d: trivial %v, handed %v", k, st.Trivial, u)
		}
		if u == nil {
			continue
		}
		handed++
		allocs := u.Allocations()
		if err := u.Check(); err != nil || u.what != "seed "+st.Seed || len(allocs) != st.Jobs || u.Window().Time != now {
			t.Fatalf("decision %d: %s (stats %s), %d allocations of %d jobs at %d: %v", k, u.what, st.Seed, len(allocs), st.Jobs, u.Window().Time, err)
		}
		var now0 []int
		for _, a := range allocs {
			if a.Start == now {
				now0 = append(now0, a.Job)
			}
		}
		if len(now0) != len(got) {
			t.Fatalf("decision %d: the handed schedule starts %d jobs now, Decide %v", k, len(now0), got)
		}
		// A spoilt seed (every job now, above capacity) fails the check,
		// worded as Decide words it.
		spoilt := *u
		spoilt.slots = make([]int, len(u.slots))
		err = spoilt.Check()
		if want := SeedError(now, u.what, model.Check(u.Window(), spoilt.Allocations())); fmt.Sprint(err) != fmt.Sprint(want) || !errors.Is(err, model.ErrInfeasible) {
			t.Fatalf("decision %d: spoilt seed: %v, want %v", k, err, want)
		}
	}
	if handed < 100 {
		t.Fatalf("only %d of 300 decisions built a model", handed)
	}
}

// bestSeedFull is bestSeed as it was before its cutoff and block maxima:
// every rule's whole serial schedule, stably sorted, slot by slot, the
// least Σ ω_i s_i kept (the first on ties).
func bestSeedFull(pl *plan) seed {
	p := newProfile(pl)
	var best seed
	for r, ru := range rules {
		order := make([]int, len(pl.jobs))
		keys := make([]float64, len(pl.jobs))
		for i := range order {
			order[i] = i
			keys[i] = ru.key(pl, i)
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
		slots := serialBySlot(pl, order, p.base)
		if w := pl.weighted(slots); r == 0 || w < best.w {
			best = seed{name: ru.name, slots: slots, w: w}
		}
	}
	return best
}

// serialBySlot is profile.serial as it was before its block maxima: the
// serial schedule of the jobs in order on the capacity profile base, each
// start tried slot by slot.
func serialBySlot(pl *plan, order []int, base []int) []int {
	free := slices.Clone(base)
	slots := make([]int, len(pl.jobs))
	for _, i := range order {
		j := &pl.jobs[i]
		s := j.est
		for k := 0; k < j.dur; {
			if free[s+k] < j.nodes {
				s, k = s+k+1, 0
			} else {
				k++
			}
		}
		for k := 0; k < j.dur; k++ {
			free[s+k] -= j.nodes
		}
		slots[i] = s
	}
	return slots
}

// randomPlanned returns random decisions that build a model: the
// decision's arguments and the window's jobs (those that fit at all, by
// arrival).
func randomPlanned(r *rand.Rand, k int) (now int64, capacity int, running []Running, waiting []Job, sel []int) {
	now, _, free, running, waiting := randomDecision(r, 3+k%60)
	capacity = free
	for _, x := range running {
		capacity += x.Nodes
	}
	for i, j := range waiting {
		if j.Nodes <= capacity {
			sel = append(sel, i)
		}
	}
	slices.SortStableFunc(sel, func(a, b int) int { return cmp.Compare(waiting[a].Submit, waiting[b].Submit) })
	return now, capacity, running, waiting, sel
}

// TestBestSeedAsFull: bestSeed, which gives a rule up once it cannot win,
// skips blocks of slots too full to start in and reuses the losers'
// slots, picks the same seed with the same slots and sum as building
// every rule's whole schedule, on random decisions (ties between rules
// included: small windows often tie).
func TestBestSeedAsFull(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 4))
	won := map[string]int{}
	for k := range 3000 {
		now, capacity, running, waiting, sel := randomPlanned(r, k)
		if len(sel) == 0 {
			continue
		}
		pl := newPlan(now, capacity, running, waiting, sel, []string{BSLD, Wait}[k%2], 0)
		got, want := bestSeed(pl, newProfile(pl)), bestSeedFull(pl)
		if got.name != want.name || got.w != want.w || !slices.Equal(got.slots, want.slots) || pl.weighted(got.slots) != got.w {
			t.Fatalf("decision %d: %s %d %v, every schedule built: %s %d %v", k, got.name, got.w, got.slots, want.name, want.w, want.slots)
		}
		won[got.name]++
	}
	if len(won) < len(rules) {
		t.Fatalf("seeds won %v: some rule never did", won)
	}
}

// TestPlanAsModel: the plan a decision's seeds are computed on reads the
// decision as encode/cp's Build reads its window (newDecision): the same
// grid, capacity and running jobs' end slots and uses, and per job the
// same earliest start, duration and weight (and Σ's scale); the same
// objective, Σ ω_i s_i and lower bound of any schedule. Requests from a
// second to months, so that both exact and rounded weights occur.
func TestPlanAsModel(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 5))
	rounded := 0
	for k := range 2000 {
		now, capacity, running, waiting, sel := randomPlanned(r, k)
		if len(sel) == 0 {
			continue
		}
		if k%3 == 0 {
			for _, i := range sel[:len(sel)/2] {
				waiting[i].Request = 1 + r.Int64N(10_000_000)
			}
		}
		obj := []string{BSLD, Wait}[k%2]
		slots := 0 // the default
		if k%4 == 1 {
			slots = 1 + r.IntN(200)
		}
		pl := newPlan(now, capacity, running, waiting, sel, obj, slots)
		d := newDecision(now, capacity, running, waiting, sel, obj, grid(now, capacity, running, waiting, sel, slots))
		m, err := cp.Build(d.w, d.g)
		if err != nil {
			t.Fatal(err)
		}
		if d.g != pl.g || len(m.Jobs) != len(pl.jobs) || len(m.Nodes) != 1 || m.Nodes[0].Cap[0] != int64(pl.capacity) || m.Scale != pl.scale {
			t.Fatalf("decision %d: grid %d, %d jobs, capacity %v, scale %d; the plan's %d, %d, %d, %d", k, d.g, len(m.Jobs), m.Nodes[0].Cap, m.Scale, pl.g, len(pl.jobs), pl.capacity, pl.scale)
		}
		if !m.ExactWeights {
			rounded++
		}
		for i, run := range m.Nodes[0].Running {
			if run.EndSlot != pl.ends[i] || run.Use[0] != int64(pl.uses[i]) {
				t.Fatalf("decision %d: running job %d ends at slot %d using %d; the plan's %d, %d", k, i, run.EndSlot, run.Use[0], pl.ends[i], pl.uses[i])
			}
		}
		for i, j := range m.Jobs {
			pj := pl.jobs[i]
			if j.Index != pj.index || j.EST != pj.est || j.Dur != pj.dur || j.Weight != pj.weight {
				t.Fatalf("decision %d job %d: index %d EST %d D %d ω %d; the plan's %d %d %d %d", k, i, j.Index, j.EST, j.Dur, j.Weight, pj.index, pj.est, pj.dur, pj.weight)
			}
		}
		at := make([]int, len(pl.jobs))
		for i := range at {
			at[i] = pl.jobs[i].est + r.IntN(50)
		}
		if m.Objective(at) != pl.objective(at) || m.Weighted(at) != pl.weighted(at) || sat.LowerBound(m) != pl.lowerBound() {
			t.Fatalf("decision %d: objective %v, Σ %d, bound %d; the plan's %v, %d, %d", k, m.Objective(at), m.Weighted(at), sat.LowerBound(m), pl.objective(at), pl.weighted(at), pl.lowerBound())
		}
	}
	if rounded == 0 {
		t.Fatal("no decision had rounded weights")
	}
}

// TestDecideBackfill: with a window of a few jobs and long queues, the
// jobs after the window that Decide starts (Stats.Backfilled of them)
// leave the window's schedule as it is without backfilling, and they are
// exactly those that fit, in arrival order, beside the running jobs, the
// window's schedule and the ones backfilled before: held to model.Check
// of the schedule with every request rounded up to the grid (which is
// the plan's view of time) plus the job at now. The schedule acted on,
// backfilled jobs included, passes model.Check.
func TestDecideBackfill(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 6))
	filled, refused := 0, 0
	for k := range 400 {
		now, nodes, free, running, waiting := randomDecision(r, 40)
		p := &Policy{NoSearch: true, K: 1 + r.IntN(5), Backfill: 1 + r.IntN(30), CallerChecks: true, Objective: []string{BSLD, Wait}[k%2]}
		start, st, err := p.Decide(context.Background(), now, nodes, free, running, waiting)
		if err != nil {
			t.Fatal(err)
		}
		checkStart(t, start, free, waiting)
		none := *p
		none.Backfill = -1
		ref, _, err := none.Decide(context.Background(), now, nodes, free, running, waiting)
		if err != nil {
			t.Fatal(err)
		}
		capacity := free
		for _, x := range running {
			capacity += x.Nodes
		}
		ws := p.selectJobs(waiting, capacity, free)
		inWindow := func(i int) bool { return slices.Contains(ws.sel, i) }
		var win, bf []int
		for _, i := range start {
			if inWindow(i) {
				win = append(win, i)
			} else {
				bf = append(bf, i)
			}
		}
		if !slices.Equal(win, ref) || st.Backfilled != len(bf) {
			t.Fatalf("decision %d: window starts %v (without backfilling %v), %d backfilled, stats %d", k, win, ref, len(bf), st.Backfilled)
		}
		u := st.Unchecked
		if u == nil {
			// Trivial: then no job after the window fits the free nodes.
			for _, i := range ws.extra {
				if waiting[i].Nodes <= free {
					t.Fatalf("decision %d: trivial, but job %d of %d nodes fits the %d free", k, i, waiting[i].Nodes, free)
				}
			}
			continue
		}
		if err := u.Check(); err != nil {
			t.Fatalf("decision %d: %v", k, err)
		}
		// The reference: each extra job, in turn, at now beside the
		// schedule so far, all on the grid.
		rounded := slices.Clone(waiting)
		for i := range rounded {
			rounded[i].Request = ceilDiv(max(rounded[i].Request, 1), u.g) * u.g
		}
		jobs := slices.Clone(ws.sel)
		at := slices.Clone(u.slots[:len(ws.sel)])
		for _, i := range ws.extra {
			try := newUnchecked(now, capacity, running, rounded, append(slices.Clone(jobs), i), p.Objective, u.g, append(slices.Clone(at), 0), "try")
			fits := try.Check() == nil
			if fits != slices.Contains(bf, i) {
				t.Fatalf("decision %d: job %d (%d nodes, request %d) fits %v, backfilled %v", k, i, waiting[i].Nodes, waiting[i].Request, fits, bf)
			}
			if fits {
				jobs, at = append(jobs, i), append(at, 0)
				filled++
			} else {
				refused++
			}
		}
	}
	if filled < 100 || refused < 100 {
		t.Fatalf("%d backfilled, %d refused: the test did not bite", filled, refused)
	}
}
