package sim_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// pickerFunc and killerFunc are scripted JobPicker and Killer.
type pickerFunc func(now int64, idle, nodes int, q []sim.QueuedJob, r []sim.RunningJob) int

func (f pickerFunc) Pick(now int64, idle, nodes int, q []sim.QueuedJob, r []sim.RunningJob) int {
	return f(now, idle, nodes, q, r)
}

type killerFunc func(now int64, idle, nodes int, q []sim.QueuedJob, r []sim.RunningJob) int

func (f killerFunc) Kill(now int64, idle, nodes int, q []sim.QueuedJob, r []sim.RunningJob) int {
	return f(now, idle, nodes, q, r)
}

// shortestFit picks the fitting job of the shortest request, or −1.
func shortestFit(_ int64, idle, _ int, q []sim.QueuedJob, _ []sim.RunningJob) int {
	best := -1
	for i, j := range q {
		if j.Nodes <= idle && (best < 0 || j.Request < q[best].Request) {
			best = i
		}
	}
	return best
}

// TestKillRequeueByHand pins a schedule with one kill on the tiny trace
// (4 nodes): A (3 nodes, 10 s) starts at 0; at 1 B arrives and the
// killer stops A (1 s on 3 nodes lost: 3 node-seconds); B starts at 1,
// C at 2; A, requeued, restarts from scratch at 6 when B ends and runs
// its whole 10 s.
func TestKillRequeueByHand(t *testing.T) {
	cfg := config(t, sim.Learned)
	cfg.Picker = pickerFunc(shortestFit)
	cfg.Killer = killerFunc(func(now int64, _, _ int, q []sim.QueuedJob, r []sim.RunningJob) int {
		for i, j := range r {
			if now == 1 && j.Kills == 0 && j.Nodes == 3 {
				if j.Start != 0 || j.Submit != 0 {
					t.Errorf("running A seen as start %d submit %d", j.Start, j.Submit)
				}
				return i
			}
		}
		return -1
	})
	r, err := sim.Run(context.Background(), tiny(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{"A": {6, 16}, "B": {1, 6}, "C": {2, 4}}
	if len(r.Jobs) != 3 {
		t.Fatalf("%d results, want 3 (the killed run must not appear): %+v", len(r.Jobs), r.Jobs)
	}
	for _, j := range r.Jobs {
		if w := want[j.ID]; j.Start != w[0] || j.End != w[1] {
			t.Errorf("job %s ran %d–%d, want %d–%d", j.ID, j.Start, j.End, w[0], w[1])
		}
	}
	if r.Kills != 1 || r.LostNodeSeconds != 3 {
		t.Errorf("kills %d, lost %d node-seconds; want 1 and 3", r.Kills, r.LostNodeSeconds)
	}
	s := r.Summarise()
	if s.Kills != 1 || s.LostNodeSeconds != 3 {
		t.Errorf("summary: kills %d, lost %d", s.Kills, s.LostNodeSeconds)
	}
	// A killer without a picker, or both a chooser and a picker, is a
	// configuration error; so is an out-of-range kill.
	bad := cfg
	bad.Chooser = pickFunc(func(int64, int, int, []sim.QueuedJob) int { return 0 })
	if _, err := sim.Run(context.Background(), tiny(), bad); err == nil {
		t.Error("a chooser and a picker were accepted together")
	}
	bad.Picker = nil
	if _, err := sim.Run(context.Background(), tiny(), bad); err == nil {
		t.Error("a killer without a picker was accepted")
	}
	bad = cfg
	bad.Killer = killerFunc(func(_ int64, _, _ int, _ []sim.QueuedJob, r []sim.RunningJob) int { return len(r) })
	if _, err := sim.Run(context.Background(), tiny(), bad); err == nil {
		t.Error("an out-of-range kill was accepted")
	}
}

// TestKillAccountingRandom: a random picker and a killer stopping random
// jobs (each at most twice) on a loaded random trace, every (re)start
// through model.Check: every job's last run appears once, whole (end −
// start = its run time), never before its submit; the final runs never
// share a node at the same time; and the lost work is exactly what the
// killer saw it kill (nodes × elapsed, summed by the test).
func TestKillAccountingRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 3))
	tr := &trace.Trace{}
	var at int64
	for i := range 300 {
		at += int64(rng.IntN(15))
		run := int64(1 + rng.IntN(200))
		tr.Jobs = append(tr.Jobs, trace.Job{ID: strconv.Itoa(i), Submit: at, Runtime: run, Walltime: run + int64(rng.IntN(100)), Nodes: 1 + rng.IntN(8)})
	}
	topo, err := model.NewLayout(1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	var lost int64
	kills := 0
	cfg := sim.Config{Topology: topo, Policy: sim.Learned, Check: true,
		Picker: pickerFunc(func(_ int64, idle, _ int, q []sim.QueuedJob, r []sim.RunningJob) int {
			var fit []int
			for i, j := range q {
				if j.Nodes <= idle {
					fit = append(fit, i)
				}
			}
			if len(fit) == 0 || len(r) > 0 && rng.IntN(4) == 0 {
				return -1 // idling is allowed while something runs
			}
			return fit[rng.IntN(len(fit))]
		}),
		Killer: killerFunc(func(now int64, _, _ int, _ []sim.QueuedJob, r []sim.RunningJob) int {
			if len(r) == 0 || rng.IntN(3) != 0 {
				return -1
			}
			i := rng.IntN(len(r))
			if r[i].Kills >= 2 {
				return -1
			}
			kills++
			lost += int64(r[i].Nodes) * (now - r[i].Start)
			return i
		})}
	r, err := sim.Run(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if kills < 20 {
		t.Fatalf("only %d kills: the test exercises too little", kills)
	}
	if r.Kills != kills || r.LostNodeSeconds != lost {
		t.Errorf("result: %d kills, %d node-seconds lost; the killer made %d kills losing %d", r.Kills, r.LostNodeSeconds, kills, lost)
	}
	if lost == 0 {
		t.Error("no work lost: the kills all happened at a start")
	}
	runtime := map[string]trace.Job{}
	for _, j := range tr.Jobs {
		runtime[j.ID] = j
	}
	seen := map[string]bool{}
	for _, j := range r.Jobs {
		if seen[j.ID] {
			t.Fatalf("job %s appears twice", j.ID)
		}
		seen[j.ID] = true
		if j.Start < j.Submit || j.End-j.Start != runtime[j.ID].Runtime || len(j.Nodes) != runtime[j.ID].Nodes {
			t.Errorf("job %s: submit %d, ran %d–%d on %d nodes; want its whole %d s on %d", j.ID, j.Submit, j.Start, j.End, len(j.Nodes), runtime[j.ID].Runtime, runtime[j.ID].Nodes)
		}
	}
	if len(seen) != len(tr.Jobs) {
		t.Errorf("%d of %d jobs ran", len(seen), len(tr.Jobs))
	}
	for a := range r.Jobs {
		for b := a + 1; b < len(r.Jobs); b++ {
			x, y := &r.Jobs[a], &r.Jobs[b]
			if x.Start >= y.End || y.Start >= x.End {
				continue
			}
			for _, n := range x.Nodes {
				for _, m := range y.Nodes {
					if n == m {
						t.Fatalf("jobs %s and %s share node %d at once", x.ID, y.ID, n)
					}
				}
			}
		}
	}
}
