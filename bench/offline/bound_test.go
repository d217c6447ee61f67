package offline

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestBoundBelowHeuristics: on larger random sequences Bound stays below
// the test's own list schedules (FCFS without overtaking, and the serial
// scheme in shortest-job order), each checked feasible, and below its own
// Upper; on a congested sequence it is strictly above the trivial n.
func TestBoundBelowHeuristics(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 5))
	for _, c := range []struct {
		n     int
		load  float64
		above float64 // the bound must exceed n by this factor
	}{{200, 0.7, 1}, {200, 2, 1.05}, {500, 1.2, 1.02}, {1024, 3, 1.05}} {
		jobs := randomJobs(r, c.n, 64, 20000, c.load)
		b, err := Bound(context.Background(), jobs, 64, BoundOptions{MaxIterations: 150})
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(jobs, 64, b.Starts); err != nil {
			t.Fatalf("Bound's schedule: %v", err)
		}
		if v := testValue(jobs, b.Starts); v != b.Upper || b.Value > v {
			t.Fatalf("Upper %v, its schedule %v, bound %v", b.Upper, v, b.Value)
		}
		order := make([]int, c.n)
		for i := range order {
			order[i] = i
		}
		fcfs := listSchedule(jobs, 64, order, true)
		slices.SortStableFunc(order, func(a, b int) int { return int(jobs[a].Run - jobs[b].Run) })
		sjf := listSchedule(jobs, 64, order, false)
		for name, s := range map[string][]int64{"fcfs": fcfs, "sjf": sjf} {
			if err := Check(jobs, 64, s); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if v := testValue(jobs, s); b.Value > v {
				t.Fatalf("n=%d load %v: bound %v above %s's %v", c.n, c.load, b.Value, name, v)
			}
		}
		if b.Value <= c.above*float64(c.n) {
			t.Fatalf("n=%d load %v: bound %v not above %v·n", c.n, c.load, b.Value, c.above)
		}
		t.Logf("n=%d load %.1f: bound %.1f (mean %.3f, %s, %d iterations), upper %.1f (%s), fcfs %.1f, sjf %.1f",
			c.n, c.load, b.Value, b.Value/float64(c.n), b.Method, b.Iterations, b.Upper, b.Heuristic, testValue(jobs, fcfs), testValue(jobs, sjf))
	}
}

// TestBoundContext: a cancelled context still gives a valid bound (the
// trivial one at least).
func TestBoundContext(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 6))
	jobs := randomJobs(r, 300, 32, 5000, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, err := Bound(ctx, jobs, 32, BoundOptions{})
	if err != nil || b.Value != 300 || b.Iterations != 0 {
		t.Fatalf("cancelled: %+v, %v", b, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if b, err = Bound(ctx, jobs, 32, BoundOptions{MaxIterations: 1 << 20}); err != nil || b.Value < 300 || b.Value > b.Upper {
		t.Fatalf("deadline: %+v, %v", b, err)
	}
}

// TestValidation: bad fields are errors naming the job and the field.
func TestValidation(t *testing.T) {
	for _, c := range []struct {
		jobs  []Job
		nodes int
		field string
	}{
		{[]Job{{0, 5, 1}, {0, 5, 0}}, 4, "Nodes"},
		{[]Job{{0, 5, 5}}, 4, "Nodes"},
		{[]Job{{0, 5, 1}, {0, 1, 1}, {0, -1, 1}}, 4, "Run"},
		{[]Job{{1 << 50, 5, 1}}, 4, "Submit"},
		{[]Job{{0, 5, 1}}, 0, ""},
	} {
		_, errB := Bound(context.Background(), c.jobs, c.nodes, BoundOptions{})
		_, errE := Exact(context.Background(), c.jobs, c.nodes, ExactOptions{})
		errC := Check(c.jobs, c.nodes, make([]int64, len(c.jobs)))
		for _, err := range []error{errB, errE, errC} {
			var je *JobError
			switch {
			case c.field == "" && !errors.Is(err, ErrNodes):
				t.Fatalf("%v on %d nodes: %v, want ErrNodes", c.jobs, c.nodes, err)
			case c.field != "" && (!errors.As(err, &je) || je.Field != c.field || je.Index != len(c.jobs)-1):
				t.Fatalf("%v: %v, want job %d's %s", c.jobs, err, len(c.jobs)-1, c.field)
			}
		}
	}
	jobs := make([]Job, 65)
	for i := range jobs {
		jobs[i] = Job{0, 1, 1}
	}
	if _, err := Exact(context.Background(), jobs, 4, ExactOptions{}); !errors.Is(err, ErrTooManyJobs) {
		t.Fatalf("65 jobs: %v", err)
	}
	if _, err := Exact(context.Background(), jobs[:10], 4, ExactOptions{MaxJobs: 8}); !errors.Is(err, ErrTooManyJobs) {
		t.Fatalf("10 jobs, cap 8: %v", err)
	}
	if err := Check([]Job{{5, 3, 1}}, 1, []int64{4}); err == nil {
		t.Fatal("a start before the submit passes Check")
	}
	if err := Check([]Job{{0, 3, 2}, {0, 3, 1}}, 2, []int64{0, 2}); err == nil {
		t.Fatal("an overload passes Check")
	}
	if err := Check([]Job{{0, 3, 2}, {0, 3, 2}}, 2, []int64{0, 3}); err != nil {
		t.Fatalf("an end and a start at the same time: %v", err)
	}
}

// BenchmarkBound1024 bounds a synthetic congested sequence of 1,024 jobs
// on 256 nodes.
func BenchmarkBound1024(b *testing.B) {
	r := rand.New(rand.NewPCG(1024, 1))
	jobs := randomJobs(r, 1024, 256, 20000, 2)
	var v float64
	for b.Loop() {
		res, err := Bound(context.Background(), jobs, 256, BoundOptions{})
		if err != nil {
			b.Fatal(err)
		}
		v = res.Value
	}
	b.ReportMetric(v/1024, "mean-bsld-bound")
}
