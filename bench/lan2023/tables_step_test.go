package lan2023

import (
	"context"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
)

// refState is the tables' own period stepping as it was before they
// stepped with sim.Cluster, kept as the oracle of TestTablesStepping.
type refState struct {
	topo    *model.Topology
	cost    model.CostModel
	jobs    []trace.Job
	t0      int64
	next    int
	busy    []bool
	running []refRun
	queue   []refWait
	started int
	dropped int
}

type refRun struct {
	job   int
	nodes []int
	end   int64
}

type refWait struct{ job, nwp int }

func (s *refState) release(t int64) {
	kept := s.running[:0]
	for _, r := range s.running {
		if r.end <= t {
			for _, k := range r.nodes {
				s.busy[k] = false
			}
			continue
		}
		kept = append(kept, r)
	}
	s.running = kept
}

func (s *refState) arrive(t int64) int {
	n := 0
	for s.next < len(s.jobs) && s.jobs[s.next].Submit-s.t0 <= t {
		if s.jobs[s.next].Nodes > len(s.busy) {
			s.dropped++
		} else {
			s.queue = append(s.queue, refWait{job: s.next})
			n++
		}
		s.next++
	}
	return n
}

func (s *refState) window(t int64) *model.Window {
	w := &model.Window{Time: t, Topology: s.topo, Cost: s.cost}
	for k, b := range s.busy {
		if !b {
			w.Idle = append(w.Idle, k)
		}
	}
	for _, r := range s.running {
		w.Running = append(w.Running, model.RunningJob{ID: "run-" + s.jobs[r.job].ID, Nodes: r.nodes, End: r.end})
	}
	for _, q := range s.queue {
		j := &s.jobs[q.job]
		w.Jobs = append(w.Jobs, model.Job{ID: j.ID, Nodes: j.Nodes, Walltime: max(1, j.Runtime), Submit: j.Submit - s.t0,
			Queue: model.DefaultQueue, NWP: q.nwp, Comm: true, Pattern: model.PatternRD})
	}
	return w
}

func (s *refState) advance(res *solver.WindowResult, t int64) {
	started := make(map[int]bool, len(res.Allocations))
	for _, a := range res.Allocations {
		q := s.queue[a.Job]
		for _, k := range a.Nodes {
			s.busy[k] = true
		}
		s.running = append(s.running, refRun{job: q.job, nodes: a.Nodes, end: t + max(1, s.jobs[q.job].Runtime)})
		started[a.Job] = true
		s.started++
	}
	kept := s.queue[:0]
	for k, q := range s.queue {
		if !started[k] {
			q.nwp++
			kept = append(kept, q)
		}
	}
	s.queue = kept
}

// TestTablesStepping: the tables' epochs stepped with sim.Cluster show
// the exact solver the same windows, period after period (deep-equal,
// an empty list equal to none), and count the
// same arrivals, starts, drops and waiting jobs, as the tables' former
// stepping (refState) — on synthetic traces with zero run times and jobs
// larger than a small cluster, and on the paper's trace when present.
func TestTablesStepping(t *testing.T) {
	type tc struct {
		name  string
		tr    *trace.Trace
		topo  [3]int
		tau   int64
		epoch int
	}
	zero := tblSynthetic(9, 800)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range zero.Jobs {
		if rng.IntN(5) == 0 {
			zero.Jobs[i].Runtime = 0
		}
	}
	cases := []tc{
		{"synthetic", tblSynthetic(7, 800), [3]int{25, 4, 10}, 60, 4},
		{"zero runtimes", zero, [3]int{25, 4, 10}, 60, 4},
		{"small cluster, drops", tblSynthetic(11, 800), [3]int{2, 2, 5}, 30, 4},
	}
	if tr, err := trace.Open(tblTracePath, "lan", trace.Options{}); err == nil {
		cases = append(cases, tc{"paper trace", tr, [3]int{25, 4, 10}, 60, 3})
	} else if os.IsNotExist(err) {
		t.Logf("the paper's trace is absent (%v): synthetic traces only", err)
	} else {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range cases {
		topo, err := model.NewLayout(c.topo[0], c.topo[1], c.topo[2])
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultTableConfig()
		cfg.Topology, cfg.Tau = topo, c.tau
		if err := cfg.tblCheck(); err != nil {
			t.Fatal(err)
		}
		windows := 0
		for e := range c.epoch {
			start := rng.IntN(len(c.tr.Jobs) / 2)
			s := tblCluster(c.tr, &cfg, start)
			ref := &refState{topo: topo, cost: cfg.Cost, jobs: c.tr.Jobs[start:], t0: c.tr.Jobs[start].Submit, busy: make([]bool, topo.NumNodes())}
			for k := 1; k <= 100; k++ {
				tt := int64(k) * cfg.Tau
				s.Release(tt)
				ref.release(tt)
				if a, b := s.Arrive(tt), ref.arrive(tt); a != b {
					t.Fatalf("%s epoch %d period %d: %d arrivals, reference %d", c.name, e, k, a, b)
				}
				if s.Waiting() != len(ref.queue) {
					t.Fatalf("%s epoch %d period %d: %d waiting, reference %d", c.name, e, k, s.Waiting(), len(ref.queue))
				}
				if s.Waiting() == 0 {
					continue
				}
				w, wr := s.Window(tt), ref.window(tt)
				cw := *w // the reference appends from nil: empty lists are nil there
				if len(cw.Idle) == 0 {
					cw.Idle = nil
				}
				if len(cw.Running) == 0 {
					cw.Running = nil
				}
				if !reflect.DeepEqual(&cw, wr) {
					t.Fatalf("%s epoch %d period %d: windows differ: idle %v / %v, running %+v / %+v, jobs %+v / %+v",
						c.name, e, k, cw.Idle, wr.Idle, cw.Running, wr.Running, cw.Jobs, wr.Jobs)
				}
				res, err := solver.SolveWindow(ctx, w, csp.Solver{}, solver.Options{MaxJobs: cfg.MaxJobs})
				if err != nil {
					t.Fatal(err)
				}
				s.Start(res.Allocations, tt)
				ref.advance(res, tt)
				windows++
			}
			if s.Started() != ref.started || s.Dropped() != ref.dropped || s.Arrived() != ref.next {
				t.Fatalf("%s epoch %d: started %d, dropped %d, arrived %d; reference %d, %d, %d", c.name, e,
					s.Started(), s.Dropped(), s.Arrived(), ref.started, ref.dropped, ref.next)
			}
		}
		if windows == 0 {
			t.Fatalf("%s: no window compared", c.name)
		}
		if c.name == "small cluster, drops" {
			// The case must exercise the drops.
			dropped := 0
			for _, j := range c.tr.Jobs {
				if j.Nodes > topo.NumNodes() {
					dropped++
				}
			}
			if dropped == 0 {
				t.Fatal("no job larger than the small cluster")
			}
		}
	}
}
