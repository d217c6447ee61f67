package sim

import (
	"context"
	"fmt"
	"slices"

	"github.com/optsched/optsched/bench/cpolicy"
)

// CP is the name of the cp policy: bench/cpolicy's CP/SAT scheduler,
// deciding at every arrival and end.
const CP = "cp"

// runCP runs the cp policy: at every arrival and end, Decide on the queue
// (its first Config.CP.K jobs by arrival) and the running jobs, whose
// estimated ends are their starts plus their requested walltimes; the
// chosen jobs start on the nodes the allocator picks (startJob, through
// model.Check).
func (s *state) runCP(ctx context.Context) error {
	pol := s.cfg.CP
	// Decide's check of its seed goes to the checker goroutine.
	pol.CallerChecks = s.checker != nil
	var running []cpolicy.Running
	var waiting []cpolicy.Job
	return s.eachEvent(ctx, func(t int64) error {
		if len(s.queue) == 0 {
			return nil
		}
		running, waiting = running[:0], waiting[:0]
		for _, r := range s.running {
			j := &s.jobs[r.job]
			running = append(running, cpolicy.Running{End: r.end - j.Runtime + j.Walltime, Nodes: len(r.nodes)})
		}
		waiting = s.cpWaiting(waiting)
		start, st, err := pol.Decide(ctx, t, s.cfg.Nodes, s.nIdle, running, waiting)
		if err != nil {
			return cpError(t, err)
		}
		if st.Unchecked != nil {
			if err := s.checkDecision(t, st.Unchecked); err != nil {
				return err
			}
		}
		s.res.Windows++
		s.res.SolveTimes = append(s.res.SolveTimes, st.Elapsed)
		for _, k := range start {
			if k < 0 || k >= len(waiting) {
				return fmt.Errorf("t=%d: cp policy: started job %d of %d", t, k, len(waiting))
			}
			if err := s.startJob(ctx, s.queue[k].job, t); err != nil {
				return err
			}
		}
		s.queue = withoutPositions(s.queue, slices.Clone(start))
		if len(s.running) == 0 && len(s.queue) > 0 && s.next == len(s.jobs) {
			return fmt.Errorf("sim: at t=%d the cp policy started none of %d waiting jobs on an empty cluster", t, len(s.queue))
		}
		return nil
	})
}

// cpError is the cp policy's error at t.
func cpError(t int64, err error) error { return fmt.Errorf("t=%d: cp policy: %w", t, err) }

// cpWaiting appends to out the queued jobs Decide may look at: its window
// is the first Config.CP.K jobs by arrival that fit in the cluster (free
// and running nodes; every queued job does, larger ones are dropped on
// arrival), and the next CP.Backfill such jobs may be backfilled; the
// queue is in arrival order (Arrive appends jobs sorted by submit time),
// so the queue up to the (K + Backfill)-th such job is all it needs. A
// decision is then O(K), not O(queue), on a log whose queue grows to tens
// of thousands.
func (s *state) cpWaiting(out []cpolicy.Job) []cpolicy.Job {
	k, b := s.cfg.CP.Sizes()
	k += b // the window and the jobs it may backfill
	capacity := s.nIdle
	for _, r := range s.running {
		capacity += len(r.nodes)
	}
	fit := 0
	for _, q := range s.queue {
		if fit == k && !s.cfg.cpWholeQueue {
			break
		}
		j := &s.jobs[q.job]
		out = append(out, cpolicy.Job{ID: j.ID, Submit: j.Submit, Request: j.Walltime, Nodes: j.Nodes})
		if j.Nodes <= capacity {
			fit++
		}
	}
	return out
}
