package sim

import (
	"context"
	"fmt"
)

// Learned is the policy whose heads a learned policy chooses
// (Config.Chooser), without backfilling.
const Learned = "learned"

// A QueuedJob is a waiting job as a HeadChooser sees it.
type QueuedJob struct {
	Submit int64
	// Request is the requested walltime (the run time where the log has
	// none), ≥ 1.
	Request int64
	Nodes   int
}

// A HeadChooser picks the next job to start: given the time, the idle
// and total nodes and the waiting jobs in arrival order, it returns an
// index into queue. The job chosen starts as soon as it fits (at once if
// it does) and nothing else starts before it: no backfilling, as
// RLScheduler's "no backfilling" protocol.
type HeadChooser interface {
	ChooseHead(now int64, idle, nodes int, queue []QueuedJob) int
}

// runChooser runs Config.Chooser event by event: while jobs wait, the
// head (chosen once, kept until it starts) starts if it fits, through
// startJob (placement and model.Check), and the next head is chosen.
func (s *state) runChooser(ctx context.Context) error {
	head := -1 // the committed head's job, −1 for none
	var buf []QueuedJob
	return s.eachEvent(ctx, func(t int64) error {
		for len(s.queue) > 0 {
			k := -1
			if head >= 0 {
				for i, q := range s.queue {
					if q.job == head {
						k = i
						break
					}
				}
				if k < 0 {
					return fmt.Errorf("sim: the chosen head (job %d) left the queue", head)
				}
			} else {
				buf = buf[:0]
				for _, q := range s.queue {
					j := &s.jobs[q.job]
					req := j.Walltime
					if req <= 0 {
						req = j.Runtime
					}
					buf = append(buf, QueuedJob{Submit: j.Submit, Request: max(req, 1), Nodes: j.Nodes})
				}
				k = s.cfg.Chooser.ChooseHead(t, s.nIdle, s.cfg.Nodes, buf)
				if k < 0 || k >= len(s.queue) {
					return fmt.Errorf("sim: the chooser picked %d of %d waiting jobs", k, len(s.queue))
				}
				head = s.queue[k].job
			}
			if s.jobs[head].Nodes > s.nIdle {
				return nil
			}
			if err := s.startJob(ctx, head, t); err != nil {
				return err
			}
			s.queue = append(s.queue[:k], s.queue[k+1:]...)
			head = -1
		}
		return nil
	})
}
