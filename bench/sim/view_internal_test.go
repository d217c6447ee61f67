package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// refQueued is the queue's view as runPicker built it before it kept one
// (rebuilt from the queue at every call): the reference the kept view is
// held to.
func refQueued(s *state) []QueuedJob {
	var buf []QueuedJob
	for _, q := range s.queue {
		j := &s.jobs[q.job]
		buf = append(buf, QueuedJob{Submit: j.Submit, Request: requestOf(j.Walltime, j.Runtime), Nodes: j.Nodes,
			Key: q.job, User: j.User, Kills: s.kills[q.job]})
	}
	return buf
}

// viewChecker is a random JobPicker and Killer that holds every queue it
// is handed to refQueued of the simulation's state.
type viewChecker struct {
	t            *testing.T
	s            *state
	rng          *rand.Rand
	calls, kills int
}

func (v *viewChecker) check(now int64, queue []QueuedJob) {
	v.t.Helper()
	v.calls++
	if want := refQueued(v.s); !slices.Equal(queue, want) {
		v.t.Fatalf("t=%d: the picker sees the queue %+v, rebuilt it is %+v", now, queue, want)
	}
}

// Pick picks a random fitting job, or now and then (while something
// runs) none.
func (v *viewChecker) Pick(now int64, idle, _ int, queue []QueuedJob, running []RunningJob) int {
	v.check(now, queue)
	var fit []int
	for i, q := range queue {
		if q.Nodes <= idle {
			fit = append(fit, i)
		}
	}
	if len(fit) == 0 || (len(running) > 0 && v.rng.IntN(4) == 0) {
		return -1
	}
	return fit[v.rng.IntN(len(fit))]
}

// Kill kills a random running job killed less than twice, now and then.
func (v *viewChecker) Kill(now int64, _, _ int, queue []QueuedJob, running []RunningJob) int {
	v.check(now, queue)
	if len(running) == 0 || v.rng.IntN(3) > 0 {
		return -1
	}
	k := v.rng.IntN(len(running))
	if running[k].Kills >= 2 {
		return -1
	}
	v.kills++
	return k
}

// TestPickerViewAsRebuilt: the queue a JobPicker and a Killer are handed,
// kept in step with the queue by runPicker (arrivals, starts anywhere in
// the queue, kills requeued in the middle with their counts), is the
// view rebuilt from the queue at every call, on random traces (users
// among a few and none, unknown walltimes, bursts that build queues).
func TestPickerViewAsRebuilt(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(34, 1))
	calls, kills := 0, 0
	for trial := range 300 {
		size := 4 + rng.IntN(topo.NumNodes()-3)
		jobs := randomTrace(rng, 10+rng.IntN(80), size+2) // some too large: dropped
		for k := range jobs {
			jobs[k].User = []string{"", "a", "b", "c"}[rng.IntN(4)]
			if rng.IntN(5) == 0 {
				jobs[k].Walltime = -1
			}
		}
		cfg := Config{Topology: topo, Nodes: size, Cost: model.DefaultCostModel, Policy: Learned}
		s := &state{cfg: cfg, res: &Result{}}
		var kept []trace.Job
		for _, j := range jobs {
			if j.Nodes <= size {
				kept = append(kept, j)
			}
		}
		s.Cluster = NewCluster(topo, size, cfg.Cost, kept, 0)
		v := &viewChecker{t: t, s: s, rng: rand.New(rand.NewPCG(uint64(trial), 2))}
		s.cfg.Picker, s.cfg.Killer = v, v
		if err := s.runPicker(context.Background()); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if len(s.res.Jobs)-len(s.dead) != len(kept) {
			t.Fatalf("trial %d: %d runs, %d killed, of %d jobs", trial, len(s.res.Jobs), len(s.dead), len(kept))
		}
		calls, kills = calls+v.calls, kills+v.kills
	}
	if kills < 300 {
		t.Fatalf("%d kills in %d calls: too few to exercise the requeue", kills, calls)
	}
	t.Logf("%d calls, %d kills", calls, kills)
}
