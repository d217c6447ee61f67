package sat

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// GroupBound exposes the group bound to the package's external tests:
// LB + the largest bound of the partitions into groups of at most size
// (and 1.5·size, 2·size) jobs, each group solved to the end, in units of W = Σ ω_i·s_i.
func GroupBound(m *cp.Model, size int) (int64, error) {
	gb, err := Solver{}.groupBounds(context.Background(), m, nil, size, time.Now())
	if err != nil || gb == nil {
		return LowerBound(m), err
	}
	return LowerBound(m) + gb.total, nil
}

// GroupBoundFrom is GroupBound with a serial schedule as the incumbent,
// so that its partitions (contention, blocking) come first and only the
// groups it delays are searched.
func GroupBoundFrom(m *cp.Model, size int) (int64, error) {
	best := sgsIncumbent(context.Background(), m, 50, rand.New(rand.NewPCG(uint64(len(m.Jobs)), 1)))
	if best == nil {
		return LowerBound(m), nil
	}
	gb, err := Solver{}.groupBounds(context.Background(), m, best, size, time.Now())
	if err != nil || gb == nil {
		return LowerBound(m), err
	}
	return LowerBound(m) + gb.total, nil
}

// TestContention: the contention partition of serial schedules of
// Eurora-like windows and random small windows puts every job in exactly
// one group of at most size jobs, and joins at least one pair (a delayed
// job and a job holding a node it fits on) on most windows.
func TestContention(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	joined, windows := 0, 0
	for k := range 60 {
		var w *model.Window
		var err error
		g := int64(10)
		if k < 20 {
			w, err = instances.Eurora(instances.EuroraConfig{Seed: uint64(k), Jobs: 10 + 10*(k%3)})
			g = 60
		} else {
			w, err = instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), 10)
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := cp.Build(w, g)
		if err != nil {
			t.Fatal(err)
		}
		best := sgsIncumbent(context.Background(), m, 20, rng)
		if best == nil {
			continue
		}
		for _, size := range []int{2, 8} {
			seen := make([]int, len(m.Jobs))
			part := contention(m, best, size)
			for _, g := range part {
				if len(g) > size {
					t.Fatalf("window %d: group %v over size %d", k, g, size)
				}
				for _, i := range g {
					seen[i]++
				}
			}
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("window %d: job %d in %d groups of %v", k, i, c, part)
				}
			}
			if size == 8 {
				windows++
				if len(part) < len(m.Jobs) {
					joined++
				}
			}
		}
	}
	if joined < windows/2 {
		t.Errorf("contention joined jobs on %d of %d windows", joined, windows)
	}
	t.Logf("contention joined jobs on %d of %d windows", joined, windows)
}

// TestSerialSchedule: the serial schedule generation scheme, in the
// weight order, its reverse and random orders, places every job of
// Eurora-like windows (10–40 jobs) and of 200 random small windows, with
// no node block violated and model.Check accepting the schedule; each job
// starts at or after its EST.
func TestSerialSchedule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var windows []*model.Window
	for seed := range uint64(8) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 10 + 10*int(seed%4)})
		if err != nil {
			t.Fatal(err)
		}
		windows = append(windows, w)
	}
	for range 200 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), 10)
		if err != nil {
			t.Fatal(err)
		}
		windows = append(windows, w)
	}
	for wi, w := range windows {
		g := int64(60)
		if wi >= 8 {
			g = 10
		}
		m, err := cp.Build(w, g)
		if err != nil {
			t.Fatal(err)
		}
		n := len(m.Jobs)
		orders := [][]int{rng.Perm(n), rng.Perm(n)}
		id := make([]int, n)
		for i := range id {
			id[i] = n - 1 - i
		}
		orders = append(orders, id)
		for _, order := range orders {
			inc := serialSchedule(m, order, SerialHorizon(m))
			if inc == nil {
				t.Fatalf("window %d: order %v: no schedule", wi, order)
			}
			if v := violations(m, inc.slots, inc.units); len(v) > 0 {
				t.Fatalf("window %d: order %v: node checks fail %v", wi, order, v)
			}
			var allocs []model.Allocation
			for i, j := range m.Jobs {
				if inc.slots[i] < j.EST {
					t.Fatalf("window %d: job %s at %d before EST %d", wi, j.ID, inc.slots[i], j.EST)
				}
				a := model.Allocation{Job: j.Index, Start: w.Time + int64(inc.slots[i])*g, Units: map[int]int{}}
				for o, u := range inc.units[i] {
					if u > 0 {
						id := m.Nodes[j.Options[o].Node].ID
						a.Units[id] = u
						a.Nodes = append(a.Nodes, id)
					}
				}
				slices.Sort(a.Nodes)
				allocs = append(allocs, a)
			}
			if err := model.Check(w, allocs); err != nil {
				t.Fatalf("window %d: order %v: %v", wi, order, err)
			}
		}
	}
}

// PoolBound exposes the counting relaxation's bound to the external
// tests: LB + the relaxation's optimum − LB, keeping keep resources (≤ 0:
// all), searched to the end.
func PoolBound(m *cp.Model, keep int) (int64, error) {
	pm := m.Pool(keep)
	_, proven, err := Solver{}.search(context.Background(), pm, nil, 0, nil, &solver.SATSearchStats{}, time.Now())
	return LowerBound(m) + proven, err
}

// BoundsFromJobs makes the solver compute the pool and group bounds on
// windows of more than n jobs (default 1), for the tests; it returns a
// function that restores the default.
func BoundsFromJobs(n int) (restore func()) {
	old := boundsMinJobs
	boundsMinJobs = n
	return func() { boundsMinJobs = old }
}

// TimeIndexedBound exposes the time-indexed relaxation's Lagrangian bound
// to the external tests: LB + its bound on optimum − LB, with a serial
// schedule as the incumbent that sets the start domains, and the starts
// on the grid (grid) or in the compressed time domain.
func TimeIndexedBound(m *cp.Model, grid bool) (int64, error) {
	best := sgsIncumbent(context.Background(), m, 50, rand.New(rand.NewPCG(uint64(len(m.Jobs)), 1)))
	if best == nil {
		return LowerBound(m), nil
	}
	b, _, err := Solver{Grid: grid}.timeIndexedBound(context.Background(), m, best, &solver.SATStats{})
	return LowerBound(m) + b, err
}

// FixedOptimum exposes the time-indexed reduced-cost fixing to the
// external tests. It searches m to the end for its optimum W*; fixes
// starts against an incumbent one worse (W* + 1: every optimal schedule
// must survive) and searches again from no incumbent, the fixing
// applied to every probe; then fixes against a serial schedule of the
// lightest jobs first and searches from it, the fixing applied to the domains as well. It
// returns W*, the two searches' optima and the starts the fixing ruled
// out for W* + 1 (starts on the grid or in the compressed time domain).
func FixedOptimum(m *cp.Model, grid bool) (opt, fromNone, fromSerial int64, ruledOut int, err error) {
	ctx, now := context.Background(), time.Now()
	s := Solver{Grid: grid}
	best, _, err := s.search(ctx, m, nil, 0, nil, &solver.SATSearchStats{}, now)
	if err != nil || best == nil {
		return 0, 0, 0, 0, err
	}
	opt = best.w
	stats := &solver.SATStats{}
	_, fix, err := s.timeIndexedBound(ctx, m, &incumbent{w: opt + 1}, stats)
	if err != nil || fix == nil {
		return opt, opt, opt, 0, err
	}
	got, _, err := s.newSearcher(m, role{fix: fix}, &solver.SATSearchStats{}, now).run(ctx, nil, 0, nil)
	if err != nil || got == nil {
		return opt, 0, 0, 0, err
	}
	fromNone, ruledOut = got.w, stats.TIFixed
	// A poor serial schedule: the lightest jobs first.
	order := make([]int, len(m.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(m.Jobs[a].Weight, m.Jobs[b].Weight) })
	inc := serialSchedule(m, order, SerialHorizon(m))
	if inc == nil {
		return opt, fromNone, opt, ruledOut, nil
	}
	if _, fix, err = s.timeIndexedBound(ctx, m, inc, &solver.SATStats{}); err != nil {
		return opt, fromNone, 0, ruledOut, err
	}
	got, _, err = s.newSearcher(m, role{fix: fix}, &solver.SATSearchStats{}, now).run(ctx, inc, 0, nil)
	if err != nil || got == nil {
		return opt, fromNone, 0, ruledOut, err
	}
	return opt, fromNone, got.w, ruledOut, nil
}

// tiFixture returns the time-indexed relaxation of an Eurora-like
// window (seed, jobs, the running jobs' load) over the search's
// candidates for a serial schedule, and that schedule's W − LB; nil
// when the window needs no bound.
func tiFixture(tb testing.TB, seed uint64, jobs int, load float64) (*timeIndexed, int64) {
	tb.Helper()
	w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: jobs, Load: load})
	if err != nil {
		tb.Fatal(err)
	}
	m, err := cp.Build(w, 60)
	if err != nil {
		tb.Fatal(err)
	}
	best := sgsIncumbent(context.Background(), m, 50, rand.New(rand.NewPCG(seed, 1)))
	if best == nil || best.w == LowerBound(m) {
		return nil, 0
	}
	cands, err := Solver{}.tiCandidates(m, best.w)
	if err != nil || cands == nil {
		tb.Fatalf("seed %d: candidates: %v (nil: too many)", seed, err)
	}
	return newTimeIndexed(m, cands), best.w - LowerBound(m)
}

// TestTimeIndexedPruning: leaving out the start candidates whose delay
// alone settles them (a job's subproblem past its best value, the
// fixing past the incumbent) changes neither the Lagrangian bound nor
// any fixing decision: on loaded Eurora-like windows the pruned and the
// exhaustive subgradient runs give the same bound, and every start
// either both rule out against the incumbent or both bound alike.
func TestTimeIndexedPruning(t *testing.T) {
	runs := 0
	for seed := uint64(1); seed <= 8; seed++ {
		for _, jobs := range []int{8, 12} {
			ti, ub := tiFixture(t, seed, jobs, 0.95)
			if ti == nil {
				continue
			}
			runs++
			b, fix, ok := ti.bound(context.Background(), ub, 150)
			ti.exhaustive = true
			eb, efix, eok := ti.bound(context.Background(), ub, 150)
			if b != eb || ok != eok {
				t.Fatalf("seed %d, %d jobs: pruned bound %d (%v), exhaustive %d (%v)", seed, jobs, b, ok, eb, eok)
			}
			for i := range fix {
				for c := range fix[i] {
					p, e := fix[i][c], efix[i][c]
					if (p >= ub) != (e >= ub) || (e < ub && p != e) {
						t.Fatalf("seed %d, %d jobs: job %d at candidate %d: pruned fixing %d, exhaustive %d (ub %d)", seed, jobs, i, c, p, e, ub)
					}
				}
			}
		}
	}
	if runs < 8 {
		t.Fatalf("only %d windows needed a bound", runs)
	}
}

// BenchmarkTimeIndexed runs 200 subgradient iterations of the
// time-indexed relaxation on loaded Eurora-like windows of 12 jobs,
// pruned (as the solver does) and exhaustive (the baseline):
//
//	go test -run '^$' -bench TimeIndexed -count 5 ./solver/sat
func BenchmarkTimeIndexed(b *testing.B) {
	for _, mode := range []string{"pruned", "exhaustive"} {
		b.Run(mode, func(b *testing.B) {
			var tis []*timeIndexed
			var ubs []int64
			for seed := uint64(1); seed <= 4; seed++ {
				if ti, ub := tiFixture(b, seed, 12, 0.95); ti != nil {
					ti.exhaustive = mode == "exhaustive"
					tis, ubs = append(tis, ti), append(ubs, ub)
				}
			}
			b.ResetTimer()
			for range b.N {
				for k, ti := range tis {
					ti.bound(context.Background(), ubs[k], 200)
				}
			}
		})
	}
}

// TestStrengthenKeepsEveryPoint: on random nodes (cores, memory, GPUs
// free) and jobs of 1–3 units (some exclusive), every integer choice of
// the jobs' units on the node that fits — each job at most its units, an
// exclusive one alone — satisfies every strengthened row
// Σ_j a'_{j,l}·y_j ≤ F_l, with an exclusive job's units counted as the
// original coefficients; on a node with 16 cores and 2 GPUs free, a unit
// of 8 cores and 2 GPUs counts 16 cores when no other job's units fit in
// the 8 cores it leaves (and 8 when they do); and some coefficient rises on most of the random nodes, so
// the check is not vacuous.
func TestStrengthenKeepsEveryPoint(t *testing.T) {
	// The named case.
	gpu := &cp.Model{Jobs: []cp.Job{
		{Units: 4, Req: []int64{8, 2}},
		{Units: 2, Req: []int64{2, 1}},
		{Units: 1, Req: []int64{16, 0}},
	}}
	var st strengthener
	coef := st.strengthen(gpu, []int{0, 1, 2}, []int64{16, 2})
	if coef[0][0] != 16 || coef[0][1] != 2 || !slices.Equal(coef[1], []int64{2, 1}) {
		t.Errorf("node (16 cores, 2 GPUs): coefficients %v, want job 0 at 16 cores and job 1 (two units fit) unchanged", coef)
	}
	// With a job of 8 one-core units beside it, the 8 cores a GPU unit
	// leaves can be used: nothing rises.
	gpu.Jobs[2] = cp.Job{Units: 8, Req: []int64{1, 0}}
	if coef := st.strengthen(gpu, []int{0, 1, 2}, []int64{16, 2}); coef[0][0] != 8 {
		t.Errorf("with one-core units beside: coefficients %v, want job 0 at its 8 cores", coef)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	raised := 0
	const nodes = 300
	for range nodes {
		F := []int64{int64(rng.IntN(17)), int64(rng.IntN(17)), int64(rng.IntN(3))}
		m := &cp.Model{}
		jobs := []int{}
		for i := range 2 + rng.IntN(4) {
			j := cp.Job{Units: 1 + rng.IntN(3), Req: []int64{int64(1 + rng.IntN(12)), int64(rng.IntN(10)), int64(rng.IntN(3))}, Excl: rng.IntN(8) == 0}
			m.Jobs = append(m.Jobs, j)
			jobs = append(jobs, i)
		}
		coef := st.strengthen(m, jobs, F)
		for _, i := range jobs {
			if !slices.Equal(coef[i], m.Jobs[i].Req) {
				raised++
				break
			}
		}
		// Every point y of the node's knapsack.
		y := make([]int, len(jobs))
		var walk func(d int)
		walk = func(d int) {
			if d < len(jobs) {
				for v := 0; v <= m.Jobs[d].Units; v++ {
					y[d] = v
					walk(d + 1)
				}
				return
			}
			use := make([]int64, len(F))
			excl, units := false, 0
			for i, v := range y {
				units += v
				excl = excl || (v > 0 && m.Jobs[i].Excl)
				for l := range use {
					use[l] += int64(v) * m.Jobs[i].Req[l]
				}
			}
			if excl && slices.ContainsFunc(y, func(v int) bool { return v > 0 }) && func() bool {
				n := 0
				for _, v := range y {
					if v > 0 {
						n++
					}
				}
				return n > 1
			}() {
				return // an exclusive job shares the node with no other
			}
			for l := range use {
				if use[l] > F[l] {
					return // does not fit
				}
			}
			for l := range F {
				var lhs int64
				for i, v := range y {
					lhs += int64(v) * coef[i][l]
				}
				if lhs > F[l] {
					t.Fatalf("free %v, jobs %+v: units %v fit but the strengthened row %d gives %d > %d (coefficients %v)", F, m.Jobs, y, l, lhs, F[l], coef)
				}
			}
		}
		walk(0)
	}
	if raised < nodes/4 {
		t.Errorf("a coefficient rose on %d of %d random nodes", raised, nodes)
	}
}

// TestEncodingFits: the encoding guard refuses more than maxEncodeVars,
// and with a deadline more than can be written in the time left.
func TestEncodingFits(t *testing.T) {
	bg := context.Background()
	if !encodingFits(bg, maxEncodeVars) || encodingFits(bg, maxEncodeVars+1) {
		t.Error("the memory bound")
	}
	ctx, cancel := context.WithTimeout(bg, time.Hour)
	defer cancel()
	if !encodingFits(ctx, 1000) || encodingFits(ctx, maxEncodeVars+1) {
		t.Error("an hour left")
	}
	past, cancel2 := context.WithDeadline(bg, time.Now().Add(-time.Second))
	defer cancel2()
	if encodingFits(past, 1) {
		t.Error("past the deadline")
	}
}
