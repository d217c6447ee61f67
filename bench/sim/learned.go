package sim

import (
	"context"
	"fmt"
	"slices"
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
	// Key, User and Kills are set for a JobPicker or Killer (see
	// RunningJob).
	Key   int
	User  string
	Kills int
}

// A HeadChooser picks the next job to start: given the time, the idle
// and total nodes and the waiting jobs in arrival order, it returns an
// index into queue. The job chosen starts as soon as it fits (at once if
// it does) and nothing else starts before it: no backfilling, as
// RLScheduler's "no backfilling" protocol.
type HeadChooser interface {
	ChooseHead(now int64, idle, nodes int, queue []QueuedJob) int
}

// A PrefixChooser is a HeadChooser whose choice depends on the first
// Visible() queued jobs (in arrival order) only: runChooser hands it that
// part of the queue, so that a decision does not grow with a queue of
// 10⁵ jobs. Visible() ≤ 0 means the whole queue.
type PrefixChooser interface {
	HeadChooser
	Visible() int
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
				for _, q := range s.queue[:s.chooserView()] {
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

// chooserView returns how much of the queue Config.Chooser sees: all of
// it, or its Visible() first jobs (PrefixChooser).
func (s *state) chooserView() int {
	if pc, ok := s.cfg.Chooser.(PrefixChooser); ok && pc.Visible() > 0 {
		return min(len(s.queue), pc.Visible())
	}
	return len(s.queue)
}

// A RunningJob is a running job as a JobPicker or Killer sees it.
type RunningJob struct {
	// Key identifies the job within the run (stable across a kill and
	// its restart); User is its trace user ("" when unknown).
	Key  int
	User string
	// Submit and Start (of the current run) in the trace's seconds.
	Submit, Start int64
	// Request is the requested walltime (the run time where the log has
	// none), ≥ 1.
	Request int64
	Nodes   int
	// Kills counts the times the job was killed before this run.
	Kills int
}

// A JobPicker is a work-conserving learned policy (Config.Picker): at
// each event, and again after each start, it picks a waiting job that
// fits in the idle nodes to start now, or −1 to start nothing more until
// the next event (an arrival or an end). queue is in arrival order (a
// requeued job keeps its place by submit time); the QueuedJobs carry Key,
// User and Kills. queue and running are the simulator's: the picker
// reads them during the call only and does not modify them.
type JobPicker interface {
	Pick(now int64, idle, nodes int, queue []QueuedJob, running []RunningJob) int
}

// A Killer (Config.Killer) may stop a running job: at every event (also
// with nothing running, so that it hears of every end), after the ended
// jobs left and the arrivals joined the queue and before the JobPicker
// starts anything, it returns an index into running of a job to kill, or
// −1; it is asked again after each kill, and may kill at most as many
// runs as were running at the event. A killed job's nodes are freed at once and
// it rejoins the queue, to restart later from scratch: its run so far,
// nodes × (now − start) node-seconds, is lost (Result.LostNodeSeconds)
// and only its last run appears in Result.Jobs. queue and running are
// read only, as a JobPicker's.
type Killer interface {
	Kill(now int64, idle, nodes int, queue []QueuedJob, running []RunningJob) int
}

// queuedJob returns a waiting job's view.
func (s *state) queuedJob(job int) QueuedJob {
	j := &s.jobs[job]
	return QueuedJob{Submit: j.Submit, Request: requestOf(j.Walltime, j.Runtime), Nodes: j.Nodes,
		Key: job, User: j.User, Kills: s.kills[job]}
}

// syncView appends to s.view the jobs that joined the queue since the
// last call: only arrivals join it outside runPicker, at its end; its
// starts and kill's requeues edit s.queue and s.view alike. A decision
// thus reads the queue's view instead of rebuilding it, O(queue), at
// every call.
func (s *state) syncView() {
	for _, q := range s.queue[len(s.view):] {
		s.view = append(s.view, s.queuedJob(q.job))
	}
}

// runningView appends the running jobs' view to buf.
func (s *state) runningView(buf []RunningJob) []RunningJob {
	buf = buf[:0]
	for _, r := range s.running {
		j := &s.jobs[r.job]
		buf = append(buf, RunningJob{Key: r.job, User: j.User, Submit: j.Submit, Start: r.end - j.Runtime,
			Request: requestOf(j.Walltime, j.Runtime), Nodes: len(r.nodes), Kills: s.kills[r.job]})
	}
	return buf
}

// requestOf is the walltime, or the run time where it is unknown, ≥ 1.
func requestOf(wall, run int64) int64 {
	if wall <= 0 {
		wall = run
	}
	return max(wall, 1)
}

// runPicker runs Config.Picker (and Config.Killer) event by event.
func (s *state) runPicker(ctx context.Context) error {
	s.kills = make([]int, len(s.jobs))
	s.resOf = make([]int, len(s.jobs))
	var rb []RunningJob
	return s.eachEvent(ctx, func(t int64) error {
		s.syncView()
		if s.cfg.Killer != nil {
			for budget := len(s.running); ; budget-- {
				rb = s.runningView(rb)
				k := s.cfg.Killer.Kill(t, s.nIdle, s.cfg.Nodes, s.view, rb)
				if k < 0 {
					break
				}
				if k >= len(s.running) || budget == 0 {
					return fmt.Errorf("sim: the killer picked %d of %d running jobs (%d kills left at t=%d)", k, len(s.running), budget, t)
				}
				s.kill(k, t)
			}
		}
		for len(s.queue) > 0 {
			rb = s.runningView(rb)
			k := s.cfg.Picker.Pick(t, s.nIdle, s.cfg.Nodes, s.view, rb)
			if k < 0 {
				break
			}
			if k >= len(s.queue) {
				return fmt.Errorf("sim: the picker picked %d of %d waiting jobs", k, len(s.queue))
			}
			job := s.queue[k].job
			if s.jobs[job].Nodes > s.nIdle {
				return fmt.Errorf("sim: the picker picked job %s of %d nodes with %d idle", s.jobs[job].ID, s.jobs[job].Nodes, s.nIdle)
			}
			if err := s.startJob(ctx, job, t); err != nil {
				return err
			}
			s.resOf[job] = len(s.res.Jobs) - 1
			s.queue = append(s.queue[:k], s.queue[k+1:]...)
			s.view = append(s.view[:k], s.view[k+1:]...)
		}
		return nil
	})
}

// kill stops running[k] at t: its nodes become idle, its run so far is
// counted as lost, its result is dropped (finish) and it rejoins the
// queue at its arrival-order place, to restart from scratch.
func (s *state) kill(k int, t int64) {
	r := s.running[k]
	j := &s.jobs[r.job]
	start := r.end - j.Runtime
	s.free(r.nodes)
	s.running = slices.Delete(s.running, k, k+1)
	s.started--
	s.kills[r.job]++
	s.res.Kills++
	s.res.LostNodeSeconds += (t - start) * int64(len(r.nodes))
	s.dead = append(s.dead, s.resOf[r.job])
	at, _ := slices.BinarySearchFunc(s.queue, r.job, func(w waiting, job int) int { return w.job - job })
	s.queue = slices.Insert(s.queue, at, waiting{job: r.job, joined: s.periods})
	s.view = slices.Insert(s.view, at, s.queuedJob(r.job))
}
