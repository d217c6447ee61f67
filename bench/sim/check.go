package sim

import (
	"fmt"
	"sync/atomic"

	"github.com/optsched/optsched/model"
)

// A checker runs model.Check on the per-job policies' allocations in a
// goroutine of its own, in the order they were made, while the
// simulation goes on: on a machine with a spare core the check then
// takes no wall time. Each allocation is checked against the window of
// the cluster's state when it was made, restricted to its nodes (see
// state.check), which the simulation takes before it goes on. The
// first allocation that fails stops the checks; the simulation stops at
// its next start and returns that failure, as it would have returned it
// when the allocation was made (later allocations and errors come after
// it).
type checker struct {
	base   model.Window // Topology, TopologySpec and Cost of every window
	todo   chan checkItem
	spare  chan []int // idle lists checked, for reuse
	done   chan struct{}
	failed atomic.Bool
	err    error // set before done is closed
}

// A checkItem is one allocation to check: job's nodes at t, and which of
// them were idle then.
type checkItem struct {
	t           int64
	job         model.Job
	nodes, idle []int
}

// checkAhead bounds the allocations made but not yet checked.
const checkAhead = 64

// startChecks makes s check its allocations with a checker.
func (s *state) startChecks() {
	c := &checker{todo: make(chan checkItem, checkAhead), spare: make(chan []int, checkAhead+1), done: make(chan struct{}),
		base: model.Window{Topology: s.cfg.Topology, TopologySpec: s.cfg.TopologySpec, Cost: s.cfg.Cost}}
	s.checker = c
	go c.run()
}

func (c *checker) run() {
	defer close(c.done)
	jobs := make([]model.Job, 1)
	for it := range c.todo {
		if c.err == nil {
			w := c.base
			jobs[0] = it.job
			w.Time, w.Idle, w.Jobs = it.t, it.idle, jobs
			if err := model.Check(&w, []model.Allocation{{Job: 0, Nodes: it.nodes, Start: it.t}}); err != nil {
				c.err = fmt.Errorf("t=%d: %w", it.t, err)
				c.failed.Store(true)
			}
		}
		select {
		case c.spare <- it.idle:
		default:
		}
	}
}

// check queues job's allocation on nodes at t for the checker, with the
// window of the cluster's state now restricted to nodes: its idle nodes
// are those of nodes that are idle, and it has no running jobs. Every
// running job ends after t (Release ran), so a busy node of nodes fails
// model.Check in this window as in the whole one (there "busy until" its
// end, here "neither idle nor freed"). model.Check reads nothing of a
// window's idle and running nodes but those the allocation uses, so the
// check is the same, in O(job size) rather than O(cluster size). nodes
// must not change after (the simulation only reads node lists).
func (s *state) check(job int, nodes []int, t int64) {
	c := s.checker
	var idle []int
	select {
	case idle = <-c.spare:
	default:
	}
	idle = idle[:0]
	for _, k := range nodes {
		if k >= 0 && k < s.size && s.isIdle(k) {
			idle = append(idle, k)
		}
	}
	c.todo <- checkItem{t: t, job: s.modelJob(&s.jobs[job], 0), nodes: nodes, idle: idle}
}

// checkFailed reports whether an allocation checked so far failed.
func (s *state) checkFailed() bool { return s.checker != nil && s.checker.failed.Load() }

// stopChecks waits for the checks queued so far and returns the first
// failure, if any.
func (s *state) stopChecks() error {
	c := s.checker
	if c == nil {
		return nil
	}
	s.checker = nil
	close(c.todo)
	<-c.done
	return c.err
}
