package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver/csp"
)

// randomTrace returns n jobs on a cluster of size nodes, submitted in
// bursts so that queues form and heads block.
func randomTrace(rng *rand.Rand, n, size int) []trace.Job {
	var jobs []trace.Job
	t := int64(0)
	for k := range n {
		if rng.IntN(4) == 0 {
			t += int64(rng.IntN(400))
		}
		nodes := 1 + rng.IntN(size)
		if rng.IntN(3) == 0 {
			nodes = 1 + rng.IntN(3)
		}
		rt := int64(1 + rng.IntN(600))
		jobs = append(jobs, trace.Job{ID: strconv.Itoa(k), Submit: t, Runtime: rt, Walltime: rt, Nodes: nodes})
	}
	return jobs
}

// TestReachAsSelectJobs drives a cluster through random arrivals, ends
// and starts, and at every period holds Cluster.reach to
// model.SelectJobs on the window of the whole queue: it reports nothing
// selectable exactly when SelectJobs selects nothing, and the window of
// the queue's first n jobs selects the same jobs (same indices).
func TestReachAsSelectJobs(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 33))
	none, some, short := 0, 0, 0
	for trial := range 300 {
		size := 4 + rng.IntN(topo.NumNodes()-3)
		jobs := randomTrace(rng, 20+rng.IntN(60), size)
		maxMulti := []int{0, 0, 1, 2, 5}[rng.IntN(5)]
		c := NewCluster(topo, size, model.DefaultCostModel, jobs, 0)
		for tm := int64(0); c.Arrived() < len(jobs) || c.Waiting() > 0; tm += 60 {
			c.Release(tm)
			c.Arrive(tm)
			if c.Waiting() == 0 {
				continue
			}
			n, skip := c.reach(maxMulti)
			w := c.Window(tm)
			full := model.SelectJobs(w, maxMulti)
			if skip != (len(full.Multi)+len(full.Single) == 0) {
				t.Fatalf("trial %d t=%d: reach says none %v, SelectJobs selects %v and %v", trial, tm, skip, full.Multi, full.Single)
			}
			part := model.SelectJobs(c.window(tm, n), maxMulti)
			if !slices.Equal(part.Multi, full.Multi) || !slices.Equal(part.Single, full.Single) {
				t.Fatalf("trial %d t=%d: the first %d of %d jobs select %v %v, the whole queue %v %v",
					trial, tm, n, c.Waiting(), part.Multi, part.Single, full.Multi, full.Single)
			}
			if skip {
				none++
			} else {
				some++
			}
			if n < c.Waiting() {
				short++
			}
			// Start the selected jobs first-fit, or a random part of them.
			idle := c.idle()
			var allocs []model.Allocation
			for _, j := range append(full.Multi, full.Single...) {
				if rng.IntN(5) == 0 {
					continue
				}
				k := w.Jobs[j].Nodes
				allocs = append(allocs, model.Allocation{Job: j, Nodes: slices.Clone(idle[:k]), Start: tm})
				idle = idle[k:]
			}
			c.Start(allocs, tm)
		}
	}
	if none == 0 || some == 0 || short == 0 {
		t.Fatalf("windows: %d with nothing to start, %d with, %d of a part of the queue: the cases are not all covered", none, some, short)
	}
}

// TestSkipAsSolveAll runs the window policy on random traces twice, once
// solving every window of the whole queue (as before windows were
// skipped) and once as Run does: the same windows at the same times, a
// window skipped only where the full run started nothing in it, the same
// jobs started in every other, and the same results.
func TestSkipAsSolveAll(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(33, 7))
	skipped := 0
	for trial := range 60 {
		size := 4 + rng.IntN(topo.NumNodes()-3)
		tr := &trace.Trace{Jobs: randomTrace(rng, 20+rng.IntN(60), size)}
		cfg := Config{Topology: topo, Nodes: size, Policy: "window", Tau: int64(30 + rng.IntN(90)), Solver: csp.Solver{},
			MaxJobs: []int{0, 0, 1, 2, 5}[rng.IntN(5)], Check: true}
		type win struct {
			t       int64
			skipped bool
			started int
		}
		run := func(all bool) ([]win, *Result) {
			var ws []win
			c := cfg
			c.solveAll = all
			c.windowHook = func(t int64, skipped bool, started int) { ws = append(ws, win{t, skipped, started}) }
			r, err := Run(context.Background(), tr, c)
			if err != nil {
				t.Fatalf("trial %d (solve all %v): %v", trial, all, err)
			}
			return ws, r
		}
		ref, rr := run(true)
		got, r := run(false)
		if len(ref) != len(got) {
			t.Fatalf("trial %d: %d windows, %d when every window is solved", trial, len(got), len(ref))
		}
		for k := range ref {
			switch {
			case ref[k].t != got[k].t:
				t.Fatalf("trial %d: window %d at t=%d, at t=%d when every window is solved", trial, k, got[k].t, ref[k].t)
			case got[k].skipped && ref[k].started > 0:
				t.Fatalf("trial %d: window at t=%d skipped, where %d jobs start when it is solved", trial, got[k].t, ref[k].started)
			case got[k].started != ref[k].started:
				t.Fatalf("trial %d: window at t=%d started %d jobs, %d when every window is solved", trial, got[k].t, got[k].started, ref[k].started)
			case got[k].skipped:
				skipped++
			}
		}
		if r.Windows+r.Skipped != rr.Windows || rr.Skipped != 0 {
			t.Fatalf("trial %d: %d solved + %d skipped windows, against %d solved (%d skipped)", trial, r.Windows, r.Skipped, rr.Windows, rr.Skipped)
		}
		if fmt.Sprint(r.Jobs) != fmt.Sprint(rr.Jobs) {
			t.Fatalf("trial %d: the results differ:\n%v\n%v", trial, r.Jobs, rr.Jobs)
		}
	}
	if skipped == 0 {
		t.Fatal("no window was skipped: the case is not covered")
	}
}

// TestAgeDropsStarted: Start drops exactly the started queue positions
// (in any order, a position named twice once) and ages the others by one
// period, the jobs that arrive after by none.
func TestAgeDropsStarted(t *testing.T) {
	topo, err := model.NewLayout(1, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	jobs := make([]trace.Job, 7)
	for k := range jobs {
		jobs[k] = trace.Job{ID: strconv.Itoa(k), Submit: int64(k / 6), Runtime: 5, Nodes: 1}
	}
	c := NewCluster(topo, 8, model.DefaultCostModel, jobs, 0)
	c.Arrive(0) // jobs 0–5
	c.Start(nil, 0)
	c.Start([]model.Allocation{{Job: 4, Nodes: []int{0}}, {Job: 1, Nodes: []int{1}}, {Job: 4, Nodes: nil}}, 0)
	c.Arrive(1) // job 6
	var got []string
	for _, q := range c.queue {
		got = append(got, fmt.Sprintf("%s:%d", c.jobs[q.job].ID, c.nwp(q)))
	}
	if want := []string{"0:2", "2:2", "3:2", "5:2", "6:0"}; !slices.Equal(got, want) {
		t.Errorf("queue %v, want %v", got, want)
	}
}
