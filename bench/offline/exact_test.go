package offline

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// smallJobs draws n jobs with submits in [0, maxSubmit], run times in
// [1, maxRun] and nodes in [1, nodes].
func smallJobs(r *rand.Rand, n, nodes int, maxSubmit, maxRun int64) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{Submit: r.Int64N(maxSubmit + 1), Run: 1 + r.Int64N(maxRun), Nodes: 1 + r.IntN(nodes)}
	}
	return jobs
}

// bruteGrid is the minimum over every vector of integer start times in
// [submit, max submit + Σ run] that Check accepts. It shares no code with
// Exact: an active schedule (one optimal schedule is) starts every job at a
// submit time or at another job's end, an integer in that range.
func bruteGrid(jobs []Job, nodes int) float64 {
	h := int64(0)
	for _, j := range jobs {
		h = max(h, j.Submit)
	}
	for _, j := range jobs {
		h += j.Run
	}
	starts := make([]int64, len(jobs))
	best := math.Inf(1)
	var rec func(i int)
	rec = func(i int) {
		if i == len(jobs) {
			if Check(jobs, nodes, starts) == nil {
				best = math.Min(best, testValue(jobs, starts))
			}
			return
		}
		for s := jobs[i].Submit; s <= h; s++ {
			starts[i] = s
			rec(i + 1)
		}
	}
	rec(0)
	return best
}

// testValue recomputes Σ bsld without the package's helpers.
func testValue(jobs []Job, starts []int64) float64 {
	v := 0.0
	for i, j := range jobs {
		v += math.Max(1, float64(starts[i]-j.Submit+j.Run)/math.Max(float64(j.Run), 10))
	}
	return v
}

// brutePerm is the minimum over all job orders of the test's own serial
// schedule-generation scheme (listSchedule).
func brutePerm(jobs []Job, nodes int) (float64, []int64) {
	n := len(jobs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	best := math.Inf(1)
	var bestS []int64
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			s := listSchedule(jobs, nodes, order, false)
			if v := testValue(jobs, s); v < best {
				best, bestS = v, s
			}
			return
		}
		for i := k; i < n; i++ {
			order[k], order[i] = order[i], order[k]
			rec(k + 1)
			order[k], order[i] = order[i], order[k]
		}
	}
	rec(0)
	return best, bestS
}

// TestBruteForcesAgree holds the two brute forces to each other: the grid
// one knows nothing of list schedules.
func TestBruteForcesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	for it := range 60 {
		n, maxRun := 3, int64(12)
		if it%10 == 0 {
			n, maxRun = 4, 5
		}
		nodes := 1 + r.IntN(4)
		jobs := smallJobs(r, n, nodes, 6, maxRun)
		g := bruteGrid(jobs, nodes)
		p, s := brutePerm(jobs, nodes)
		if err := Check(jobs, nodes, s); err != nil {
			t.Fatalf("%v: permutation schedule infeasible: %v", jobs, err)
		}
		if math.Abs(g-p) > 1e-9 {
			t.Fatalf("%v on %d nodes: grid %v, permutations %v", jobs, nodes, g, p)
		}
	}
}

// TestExactAndBoundSmall: on a thousand small sequences Exact proves the
// brute-force optimum, its schedule passes Check, and Bound never exceeds
// the optimum. It also asserts that the Lagrangian bound and the search's
// pruning actually ran.
func TestExactAndBoundSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2))
	lagr, above, searched := 0, 0, 0
	for it := range 1000 {
		n := 1 + r.IntN(7)
		nodes := 1 + r.IntN(4)
		maxRun := int64(6)
		if it%2 == 1 {
			maxRun = 25
		}
		jobs := smallJobs(r, n, nodes, int64(r.IntN(3)*5), maxRun)
		opt, _ := brutePerm(jobs, nodes)
		if it < 60 && n <= 3 {
			if g := bruteGrid(jobs, nodes); math.Abs(g-opt) > 1e-9 {
				t.Fatalf("%v: grid %v, permutations %v", jobs, g, opt)
			}
		}
		b, err := Bound(context.Background(), jobs, nodes, BoundOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if b.Value > opt+1e-9 {
			t.Fatalf("%v on %d nodes: bound %v above the optimum %v", jobs, nodes, b.Value, opt)
		}
		if b.Method == Lagrangian {
			lagr++
		}
		if b.Value > float64(n)+1e-6 {
			above++
		}
		e, err := Exact(context.Background(), jobs, nodes, ExactOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(jobs, nodes, e.Starts); err != nil {
			t.Fatalf("%v: Exact's schedule: %v", jobs, err)
		}
		if v := testValue(jobs, e.Starts); math.Abs(v-e.Value) > 1e-9*v {
			t.Fatalf("%v: Exact says %v, its schedule is worth %v", jobs, e.Value, v)
		}
		if !e.Proven || math.Abs(e.Value-opt) > 1e-9*opt || e.Bound > opt+1e-9 || e.Bound < e.Value*(1-2e-9) {
			t.Fatalf("%v on %d nodes: Exact %+v, optimum %v", jobs, nodes, e, opt)
		}
		if e.Nodes > 1 {
			searched++
		}
	}
	t.Logf("Lagrangian bound in %d of 1000, above n in %d, search beyond the root in %d", lagr, above, searched)
	if lagr < 100 || above < 50 || searched < 100 {
		t.Fatalf("too few interesting cases: Lagrangian %d, above n %d, searched %d", lagr, above, searched)
	}
}

// TestExactTinyBudget: stopped after a handful of nodes, Exact still
// returns a feasible schedule and a bound no higher than its value.
func TestExactTinyBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	for range 20 {
		jobs := randomJobs(r, 40, 8, 2000, 1.5)
		for _, m := range []int64{1, 3, 50} {
			e, err := Exact(context.Background(), jobs, 8, ExactOptions{MaxNodes: m})
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(jobs, 8, e.Starts); err != nil {
				t.Fatalf("MaxNodes %d: %v", m, err)
			}
			if e.Bound > e.Value || e.Bound < 40 || e.Nodes > m+1 || math.Abs(testValue(jobs, e.Starts)-e.Value) > 1e-9*e.Value {
				t.Fatalf("MaxNodes %d: %+v", m, e)
			}
		}
	}
}
