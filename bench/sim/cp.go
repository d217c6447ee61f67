package sim

import (
	"context"
	"fmt"

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
		for _, q := range s.queue {
			j := &s.jobs[q.job]
			waiting = append(waiting, cpolicy.Job{ID: j.ID, Submit: j.Submit, Request: j.Walltime, Nodes: j.Nodes})
		}
		start, st, err := pol.Decide(ctx, t, s.cfg.Nodes, s.nIdle, running, waiting)
		if err != nil {
			return fmt.Errorf("t=%d: cp policy: %w", t, err)
		}
		s.res.Windows++
		s.res.SolveTimes = append(s.res.SolveTimes, st.Elapsed)
		chosen := make(map[int]bool, len(start))
		for _, k := range start {
			if err := s.startJob(ctx, s.queue[k].job, t); err != nil {
				return err
			}
			chosen[k] = true
		}
		kept := s.queue[:0]
		for k, q := range s.queue {
			if !chosen[k] {
				kept = append(kept, q)
			}
		}
		s.queue = kept
		if len(s.running) == 0 && len(s.queue) > 0 && s.next == len(s.jobs) {
			return fmt.Errorf("sim: at t=%d the cp policy started none of %d waiting jobs on an empty cluster", t, len(s.queue))
		}
		return nil
	})
}
