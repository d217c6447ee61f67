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
// state.check), which the simulation takes before it goes on. The first
// allocation that fails stops the checks; the simulation stops at its
// next start and returns that failure, as it would have returned it when
// the allocation was made (later allocations and errors come after it).
//
// Allocations go to the goroutine in batches (a few dozen, or some
// thousands of nodes), so that handing them over costs little next to
// checking them.
type checker struct {
	base   model.Window // Topology, TopologySpec and Cost of every window
	todo   chan *checkBatch
	spare  chan *checkBatch // batches checked, for reuse
	cur    *checkBatch      // the batch being filled
	done   chan struct{}
	failed atomic.Bool
	err    error // set before done is closed
}

// A checkBatch is allocations to check, in order.
type checkBatch struct {
	items []checkItem
	// idle holds the items' idle lists one after another.
	idle  []int
	nodes int
}

// A checkItem is one allocation to check: job's nodes at t, and which of
// them were idle then (idle[from:to] of its batch).
type checkItem struct {
	t        int64
	job      model.Job
	nodes    []int
	from, to int
}

const (
	// checkBatchJobs and checkBatchNodes: a batch goes to the checker
	// when it holds this many allocations or nodes.
	checkBatchJobs  = 64
	checkBatchNodes = 1 << 16
	// checkAhead bounds the batches filled but not yet checked.
	checkAhead = 2
)

// startChecks makes s check its allocations with a checker.
func (s *state) startChecks() {
	c := &checker{todo: make(chan *checkBatch, checkAhead), spare: make(chan *checkBatch, checkAhead+2), done: make(chan struct{}),
		base: model.Window{Topology: s.cfg.Topology, TopologySpec: s.cfg.TopologySpec, Cost: s.cfg.Cost}, cur: new(checkBatch)}
	s.checker = c
	go c.run()
}

func (c *checker) run() {
	defer close(c.done)
	jobs := make([]model.Job, 1)
	for b := range c.todo {
		for i := range b.items {
			if c.err != nil {
				break
			}
			it := &b.items[i]
			w := c.base
			jobs[0] = it.job
			w.Time, w.Idle, w.Jobs = it.t, b.idle[it.from:it.to], jobs
			if err := model.Check(&w, []model.Allocation{{Job: 0, Nodes: it.nodes, Start: it.t}}); err != nil {
				c.err = fmt.Errorf("t=%d: %w", it.t, err)
				c.failed.Store(true)
			}
		}
		clear(b.items) // drop the node lists
		b.items, b.idle, b.nodes = b.items[:0], b.idle[:0], 0
		select {
		case c.spare <- b:
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
	b := c.cur
	from := len(b.idle)
	for _, k := range nodes {
		if k >= 0 && k < s.size && s.isIdle(k) {
			b.idle = append(b.idle, k)
		}
	}
	b.items = append(b.items, checkItem{t: t, job: s.modelJob(&s.jobs[job], 0), nodes: nodes, from: from, to: len(b.idle)})
	if b.nodes += len(nodes); len(b.items) >= checkBatchJobs || b.nodes >= checkBatchNodes {
		c.send()
	}
}

// send hands the batch being filled to the checker and starts another.
func (c *checker) send() {
	c.todo <- c.cur
	select {
	case c.cur = <-c.spare:
	default:
		c.cur = new(checkBatch)
	}
}

// checkFailed reports whether an allocation checked so far failed.
func (s *state) checkFailed() bool { return s.checker != nil && s.checker.failed.Load() }

// stopChecks checks the allocations queued so far and returns the first
// failure, if any.
func (s *state) stopChecks() error {
	c := s.checker
	if c == nil {
		return nil
	}
	s.checker = nil
	if len(c.cur.items) > 0 {
		c.send()
	}
	close(c.todo)
	<-c.done
	return c.err
}
