package sim

import (
	"fmt"
	"sync/atomic"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// A checker runs model.Check on the simulation's allocations — each start
// of a per-job policy, each window's allocations of the window policy —
// in a goroutine of its own, in the order they were made, while the
// simulation goes on: on a machine with a spare core the check then
// takes no wall time. Each allocation, or each window's allocations
// together, is checked against the window of the cluster's state when it
// was made, restricted to its nodes (see state.queueCheck), which the
// simulation takes before it goes on. The first check that fails stops
// the checks; the simulation stops at its next start or window and
// returns that failure, as it would have returned it when the allocation
// was made (later allocations and errors come after it).
//
// Allocations go to the goroutine in batches (a few dozen, or some
// thousands of nodes), so that handing them over costs little next to
// checking them.
type checker struct {
	base   model.Window // Topology, TopologySpec and Cost of every window
	idle   []int        // the idle list of a claimed item's window
	todo   chan *checkBatch
	spare  chan *checkBatch // batches checked, for reuse
	cur    *checkBatch      // the batch being filled
	done   chan struct{}
	failed atomic.Bool
	err    error // set before done is closed
	// decisions counts the cp decisions' checks run (read after done).
	decisions int
}

// A checkBatch is allocations to check, in order: its items' jobs,
// allocations, idle nodes and running jobs one after another.
type checkBatch struct {
	items   []checkItem
	jobs    []model.Job
	allocs  []model.Allocation // allocs[i] is of jobs[i]
	idle    []int
	running []model.RunningJob
	nodes   int
}

// A checkItem is one check: the allocations allocs[a0:a1] of its batch,
// of the jobs jobs[a0:a1] (allocation i of the item is of the item's
// window job i), made at t, in the window whose idle nodes are
// idle[i0:i1] (with claimed, all of the allocations' nodes instead) and
// running jobs running[r0:r1]. who names the window
// solver of a window's allocations, "" for a per-job policy's start
// (the error is then worded as SolveWindow's, or as the per-job check's).
type checkItem struct {
	t              int64
	who            string
	a0, a1, i0, i1 int
	r0, r1         int
	claimed        bool
	// decision, when set, is a cp policy decision's check instead: its
	// seed schedule (see checkDecision).
	decision seedCheck
}

// A seedCheck is a cp decision's seed schedule left to the caller to
// check (a cpolicy.Unchecked): Check runs model.Check on it in its
// window and words a failure as cpolicy.Decide does; Size is the
// window's jobs and running jobs.
type seedCheck interface {
	Check() error
	Size() int
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
	for b := range c.todo {
		for i := range b.items {
			if c.err != nil {
				break
			}
			c.err = c.checkItem(b, &b.items[i])
			if c.err != nil {
				c.failed.Store(true)
			}
		}
		clear(b.allocs) // drop the node lists
		clear(b.running)
		clear(b.items) // and the decisions' windows
		b.items, b.jobs, b.allocs, b.idle, b.running, b.nodes = b.items[:0], b.jobs[:0], b.allocs[:0], b.idle[:0], b.running[:0], 0
		select {
		case c.spare <- b:
		default:
		}
	}
}

// checkItem runs model.Check on it and words its failure as the
// simulation did when it checked at the time: a window's as SolveWindow
// and solveWindow, a start's with its time.
func (c *checker) checkItem(b *checkBatch, it *checkItem) error {
	if d := it.decision; d != nil {
		c.decisions++
		if err := d.Check(); err != nil {
			return cpError(it.t, err)
		}
		return nil
	}
	w := c.base
	w.Time, w.Idle, w.Running, w.Jobs = it.t, b.idle[it.i0:it.i1], b.running[it.r0:it.r1], b.jobs[it.a0:it.a1]
	allocs := b.allocs[it.a0:it.a1]
	if it.claimed {
		c.idle = c.idle[:0]
		for _, a := range allocs {
			c.idle = append(c.idle, a.Nodes...)
		}
		w.Idle = c.idle
	}
	err := model.Check(&w, allocs)
	switch {
	case err == nil:
		return nil
	case it.who != "":
		return fmt.Errorf("window at t=%d: %w", it.t, fmt.Errorf("%w: %s: %w", solver.ErrSolverBug, it.who, err))
	default:
		return fmt.Errorf("t=%d: %w", it.t, err)
	}
}

// check queues job's allocation on nodes at t for the checker (see
// queueCheck). nodes must not change after (the simulation only reads
// node lists).
func (s *state) check(job int, nodes []int, t int64) {
	b := s.checker.cur
	b.jobs = append(b.jobs, s.modelJob(&s.jobs[job], 0))
	b.allocs = append(b.allocs, model.Allocation{Nodes: nodes, Start: t})
	s.queueCheck(t, "", len(b.allocs)-1)
}

// checkWindow queues the allocations of the window at t, which the
// window solver who gave (window jobs: the queue's), for the checker, as
// one check. claimed says that claim found every node of allocs on the
// cluster, idle and used once (and cleared their idle bits): the check's
// window then has them all idle and no running job, in O(allocations)
// here; otherwise the check's window is taken as queueCheck takes it.
// Their node lists must not change after.
func (s *state) checkWindow(allocs []model.Allocation, t int64, who string, claimed bool) {
	c := s.checker
	b := c.cur
	a0 := len(b.allocs)
	for _, a := range allocs {
		b.jobs = append(b.jobs, s.modelJob(&s.jobs[s.queue[a.Job].job], s.nwp(s.queue[a.Job])))
		a.Job = len(b.allocs) - a0
		b.allocs = append(b.allocs, a)
	}
	if !claimed {
		s.queueCheck(t, who, a0)
		return
	}
	for _, a := range allocs {
		b.nodes += len(a.Nodes)
	}
	b.items = append(b.items, checkItem{t: t, who: who, a0: a0, a1: len(b.allocs), i0: len(b.idle), i1: len(b.idle),
		r0: len(b.running), r1: len(b.running), claimed: true})
	c.sendFull()
}

// queueCheck queues the allocations of the batch being filled from a0 on
// (and their jobs), made at t, as one check in the window of the
// cluster's state now restricted to their nodes: its idle nodes are
// those of their nodes that are idle, and its running jobs the running
// jobs on those of their nodes that are busy (none, unless a node is
// busy), restricted to those nodes. model.Check reads nothing of a
// window's idle and running nodes but those the allocations use, so the
// check is the same as the whole window's, with the same error, in
// O(allocated nodes) rather than O(cluster size). (A window job an
// allocation does not start is not in the check's window: SolveWindow's
// verify has checked that each job is allocated at most once.)
func (s *state) queueCheck(t int64, who string, a0 int) {
	c := s.checker
	b := c.cur
	i0, r0 := len(b.idle), len(b.running)
	var busy map[int]bool
	for _, a := range b.allocs[a0:] {
		for _, k := range a.Nodes {
			switch {
			case k < 0 || k >= s.size:
			case s.isIdle(k):
				b.idle = append(b.idle, k)
			default:
				if busy == nil {
					busy = make(map[int]bool)
				}
				busy[k] = true
			}
		}
		b.nodes += len(a.Nodes)
	}
	if busy != nil {
		b.running = s.appendRunningOn(b.running, busy)
	}
	b.items = append(b.items, checkItem{t: t, who: who, a0: a0, a1: len(b.allocs), i0: i0, i1: len(b.idle), r0: r0, r1: len(b.running)})
	c.sendFull()
}

// checkDecision queues the check of the seed schedule u of the cp
// policy's decision at t (cpolicy.Policy.CallerChecks; u must not change
// after). It returns errCheckFailed when a check has failed already.
func (s *state) checkDecision(t int64, u seedCheck) error {
	if s.checkFailed() {
		return errCheckFailed // Run returns the failure instead
	}
	c := s.checker
	b := c.cur
	b.items = append(b.items, checkItem{t: t, decision: u,
		a0: len(b.allocs), a1: len(b.allocs), i0: len(b.idle), i1: len(b.idle), r0: len(b.running), r1: len(b.running)})
	b.nodes += u.Size() // its work, in uses of the pseudo-node
	c.sendFull()
	return nil
}

// sendFull sends the batch being filled when it is full.
func (c *checker) sendFull() {
	if b := c.cur; len(b.allocs) >= checkBatchJobs || b.nodes >= checkBatchNodes {
		c.send()
	}
}

// appendRunningOn appends to out the running jobs on the nodes of busy,
// as a window's, each restricted to those nodes (new lists).
func (s *state) appendRunningOn(out []model.RunningJob, busy map[int]bool) []model.RunningJob {
	for _, r := range s.running {
		var on []int
		for _, k := range r.nodes {
			if busy[k] {
				on = append(on, k)
			}
		}
		if on != nil {
			out = append(out, model.RunningJob{ID: "run-" + s.jobs[r.job].ID, Nodes: on, End: r.end, Comm: s.RunningComm})
		}
	}
	return out
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
