package sim

import (
	"math"
	"math/bits"
	"slices"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// A Cluster is the state window-based scheduling steps through ([Lan23]
// §III-C): the trace's jobs in submit order, the busy nodes, the running
// jobs and the queue with each job's waiting periods (NWP). A period at
// time t is Release(t), Arrive(t), then, with a queue, Window(t), a
// solve, and Start of the solve's allocations. Run's window policy steps
// with it, and so does bench/lan2023's Tables III–IV runner.
//
// Times are relative to the cluster's origin (NewCluster): a job
// submitted at s arrives at s − origin.
type Cluster struct {
	// Topology, TopologySpec and Cost go into every window.
	Topology     *model.Topology
	TopologySpec model.TopologySpec
	Cost         model.CostModel
	// RunningComm marks the running jobs of a window as
	// communication-intensive (the simulator's convention for every job).
	RunningComm bool
	// ReuseWindows lets Window write its lists (Idle, Running, Jobs) over
	// those of the window it returned before, which the caller must then
	// no longer use — nor node lists a solver returned for it, which may
	// share the window's (copy them before Start) — and no allocation per
	// period: with a long queue, building windows is the simulator's main
	// cost.
	ReuseWindows bool

	jobs    []trace.Job // by submit
	origin  int64
	next    int      // next job to arrive
	size    int      // nodes
	idleSet []uint64 // bit k: node k is idle
	nIdle   int      // number of idle nodes
	running []run
	queue   []waiting
	freed   bool // a job ended in the last Release
	// periods counts the periods so far (Start): every queued job ages
	// with it, so a period with no start costs nothing per queued job.
	periods int
	started int
	dropped int
	// released, when set, hears of the nodes of every job that ends.
	released func(nodes []int)
	// tree, when set, keeps per-leaf idle counts (leaves.track).
	tree *leaves
	// idleBuf, runBuf and jobBuf are the lists of the last window, for
	// ReuseWindows.
	idleBuf []int
	runBuf  []model.RunningJob
	jobBuf  []model.Job
}

type run struct {
	job   int // index into jobs
	nodes []int
	end   int64
}

type waiting struct {
	job int
	// joined is the cluster's periods when the job joined the queue: it
	// has waited periods − joined periods since (Cluster.nwp).
	joined int
}

// NewCluster returns an idle cluster of nodes nodes (the first nodes ids
// of topo) with an empty queue, to which jobs (sorted by submit time)
// arrive relative to origin.
func NewCluster(topo *model.Topology, nodes int, cost model.CostModel, jobs []trace.Job, origin int64) *Cluster {
	c := &Cluster{Topology: topo, Cost: cost, jobs: jobs, origin: origin, size: nodes, idleSet: make([]uint64, (nodes+63)/64), nIdle: nodes}
	for k := range nodes {
		c.idleSet[k/64] |= 1 << (k % 64)
	}
	return c
}

// Release ends the running jobs with end ≤ t; it reports whether any
// ended.
func (c *Cluster) Release(t int64) bool {
	c.freed = false
	kept := c.running[:0]
	for _, r := range c.running {
		if r.end <= t {
			c.free(r.nodes)
			c.freed = true
			continue
		}
		kept = append(kept, r)
	}
	c.running = kept
	return c.freed
}

// free makes nodes (those of a job that ended or was stopped) idle.
func (c *Cluster) free(nodes []int) {
	setBits(c.idleSet, nodes)
	c.nIdle += len(nodes)
	if c.tree != nil {
		c.tree.add(nodes, 1)
	}
	if c.released != nil {
		c.released(nodes)
	}
}

// Arrive queues the jobs submitted at or before t and returns how many
// it queued; a job larger than the cluster is dropped (counted by
// Dropped), never queued.
func (c *Cluster) Arrive(t int64) int {
	n := 0
	for c.next < len(c.jobs) && c.jobs[c.next].Submit-c.origin <= t {
		if c.jobs[c.next].Nodes > c.size {
			c.dropped++
		} else {
			c.queue = append(c.queue, waiting{job: c.next, joined: c.periods})
			n++
		}
		c.next++
	}
	return n
}

// idle returns the idle node ids, ascending, in a new list.
func (c *Cluster) idle() []int { return c.appendIdle(make([]int, 0, c.nIdle)) }

// appendIdle appends the idle node ids, ascending, to out.
func (c *Cluster) appendIdle(out []int) []int { return c.appendLowestIdle(out, c.nIdle) }

// appendLowestIdle appends the n lowest idle node ids (at most all),
// ascending, to out, in O(n + nodes/64); a word of 64 idle nodes is
// written in one stretch.
func (c *Cluster) appendLowestIdle(out []int, n int) []int {
	for i, word := range c.idleSet {
		if word == math.MaxUint64 && n >= 64 {
			at := len(out)
			out = slices.Grow(out, 64)[:at+64]
			for b := range 64 {
				out[at+b] = i*64 + b
			}
			n -= 64
			continue
		}
		for ; word != 0 && n > 0; n-- {
			out = append(out, i*64+bits.TrailingZeros64(word))
			word &= word - 1
		}
		if n == 0 {
			break
		}
	}
	return out
}

// setBits sets the bits of nodes (ids from 0) in set, a run of
// consecutive ids in one word at a time (wordRun).
func setBits(set []uint64, nodes []int) {
	for i := 0; i < len(nodes); {
		w, m, r := wordRun(nodes[i:])
		set[w] |= m
		i += r
	}
}

// clearBits clears the bits of nodes (ids from 0) in set, as setBits.
func clearBits(set []uint64, nodes []int) {
	for i := 0; i < len(nodes); {
		w, m, r := wordRun(nodes[i:])
		set[w] &^= m
		i += r
	}
}

// wordRun returns the run of consecutive ids nodes begins with (at least
// its first, a valid id), up to the end of the first one's 64-node word:
// the word w, the run's bits m in it, and its length r.
func wordRun(nodes []int) (w int, m uint64, r int) {
	k := nodes[0]
	b := k % 64
	r = 1
	for lim := min(len(nodes), 64-b); r < lim && nodes[r] == k+r; r++ {
	}
	return k / 64, math.MaxUint64 >> (64 - r) << b, r
}

// countIdle returns the number of idle nodes among lo … hi−1.
func (c *Cluster) countIdle(lo, hi int) int {
	n := 0
	for lo < hi {
		w := c.idleSet[lo/64] >> (lo % 64)
		if span := hi - lo; span < 64-lo%64 {
			w &= 1<<span - 1
			n += bits.OnesCount64(w)
			break
		}
		n += bits.OnesCount64(w)
		lo += 64 - lo%64
	}
	return n
}

// isIdle reports whether node k is idle.
func (c *Cluster) isIdle(k int) bool { return c.idleSet[k/64]&(1<<(k%64)) != 0 }

// runningJobs returns the running jobs as a window's, in a new list.
func (c *Cluster) runningJobs() []model.RunningJob {
	return c.appendRunning(make([]model.RunningJob, 0, len(c.running)))
}

// appendRunning appends the running jobs as a window's to out.
func (c *Cluster) appendRunning(out []model.RunningJob) []model.RunningJob {
	for _, r := range c.running {
		out = append(out, model.RunningJob{ID: "run-" + c.jobs[r.job].ID, Nodes: r.nodes, End: r.end, Comm: c.RunningComm})
	}
	return out
}

// modelJob returns trace job j as a window's waiting job that has waited
// nwp periods: its walltime is its run time (at least 1 s), its submit
// time relative to the origin, its queue the default one, and it is
// communication-intensive with recursive doubling.
func (c *Cluster) modelJob(j *trace.Job, nwp int) model.Job {
	return model.Job{ID: j.ID, Nodes: j.Nodes, Walltime: max(1, j.Runtime), Submit: j.Submit - c.origin,
		Queue: model.DefaultQueue, NWP: nwp, Comm: true, Pattern: model.PatternRD}
}

// Window returns the model.Window of the cluster at t: its idle nodes,
// its running jobs, and the queue, in arrival order, as the waiting jobs
// (window job k is the k-th queued job).
func (c *Cluster) Window(t int64) *model.Window { return c.window(t, len(c.queue)) }

// window returns Window(t) with the first jobs queued jobs only as its
// waiting jobs.
func (c *Cluster) window(t int64, jobs int) *model.Window {
	w := &model.Window{Time: t, Topology: c.Topology, TopologySpec: c.TopologySpec, Cost: c.Cost}
	if c.ReuseWindows {
		w.Idle, w.Running, w.Jobs = c.idleBuf[:0], c.runBuf[:0], c.jobBuf[:0]
	} else {
		w.Idle = make([]int, 0, c.nIdle)
		w.Running = make([]model.RunningJob, 0, len(c.running))
		w.Jobs = make([]model.Job, 0, jobs)
	}
	w.Idle = c.appendIdle(w.Idle)
	w.Running = c.appendRunning(w.Running)
	for _, q := range c.queue[:jobs] {
		w.Jobs = append(w.Jobs, c.modelJob(&c.jobs[q.job], c.nwp(q)))
	}
	if c.ReuseWindows {
		c.idleBuf, c.runBuf, c.jobBuf = w.Idle, w.Running, w.Jobs
	}
	return w
}

// reach returns how far into the queue model.SelectJobs(Window(t),
// maxMulti) can select — the queued jobs up to the end of the first run of
// equal waiting periods at which it stops, or all — and whether it selects
// nothing: the first job of its order (model.Order: most waiting periods,
// then fewest nodes) needs more nodes than are idle. It reads only that
// prefix of the queue, not the idle nodes or the running jobs.
//
// It rests on the queue's waiting periods never growing along the queue:
// jobs join it at the end with none (Arrive) and every job left waiting
// ages by one together (Start). model.Order is then, run by run of equal
// periods in queue order, each run sorted by nodes, stably; selection
// takes the jobs in that order while they fit in the idle nodes (and the
// multi-node jobs up to maxMulti when positive), so it can pass a run
// only if the run's jobs all fit, and the window of the queue's first n
// jobs selects exactly the jobs the window of the whole queue does, with
// the same window indices.
func (c *Cluster) reach(maxMulti int) (n int, none bool) {
	free, sum, multi := c.nIdle, 0, 0
	for i := 0; i < len(c.queue); {
		joined, least := c.queue[i].joined, math.MaxInt
		j := i
		for ; j < len(c.queue) && c.queue[j].joined == joined; j++ {
			nodes := c.jobs[c.queue[j].job].Nodes
			sum += nodes
			if nodes >= 2 {
				multi++
			}
			least = min(least, nodes)
		}
		if i == 0 && least > free {
			return j, true // the head of the order does not fit
		}
		if j < len(c.queue) && c.queue[j].joined < joined { // waited longer
			return len(c.queue), false // not ordered so (never by Arrive and Start): all of it
		}
		if sum > free || maxMulti > 0 && multi > maxMulti {
			return j, false // selection stops in this run
		}
		i = j
	}
	return len(c.queue), false
}

// forgetWindow makes the next Window allocate new lists instead of
// writing over those of the window it returned last (ReuseWindows): a
// solver still reading that window keeps its lists.
func (c *Cluster) forgetWindow() { c.idleBuf, c.runBuf, c.jobBuf = nil, nil, nil }

// occupy runs job (an index into the jobs) on nodes from t.
func (c *Cluster) occupy(job int, nodes []int, t int64) {
	clearBits(c.idleSet, nodes)
	c.runOn(job, nodes, t)
}

// runOn runs job on nodes from t, whose idle bits are cleared already.
func (c *Cluster) runOn(job int, nodes []int, t int64) {
	c.nIdle -= len(nodes)
	if c.tree != nil {
		c.tree.add(nodes, -1)
	}
	c.running = append(c.running, run{job: job, nodes: nodes, end: t + c.jobs[job].Runtime})
	c.started++
}

// Start starts at t the allocations of a solve of Window(t) (their Job
// is a window job: a position in the queue) and ages the jobs left
// waiting by one period.
func (c *Cluster) Start(allocs []model.Allocation, t int64) { c.startWindow(allocs, t, false) }

// startWindow is Start; with claimed, the idle bits of the allocations'
// nodes are cleared already (state.claim).
func (c *Cluster) startWindow(allocs []model.Allocation, t int64, claimed bool) {
	for _, a := range allocs {
		if claimed {
			c.runOn(c.queue[a.Job].job, a.Nodes, t)
		} else {
			c.occupy(c.queue[a.Job].job, a.Nodes, t)
		}
	}
	c.age(allocs)
}

// age drops the started window jobs (allocs' Job: queue positions, each
// once) from the queue and adds a waiting period to the others: one to
// the period count, so that a period in which nothing starts costs
// nothing per queued job, and a start moves only the queue after its
// first started job.
func (c *Cluster) age(allocs []model.Allocation) {
	c.periods++
	if len(allocs) == 0 {
		return
	}
	gone := make([]int, len(allocs))
	for i, a := range allocs {
		gone[i] = a.Job
	}
	c.queue = withoutPositions(c.queue, gone)
}

// withoutPositions removes the positions gone (any order, sorted in
// place; a position named twice is removed once) from q, a run between
// two removed positions at a time, moving whichever part moves less: the
// part after the first removed position (left), or the part before the
// last (right; the result then starts len(gone) positions into q's
// array). Windows start jobs near the front of a long queue, so this is
// O(front), not O(queue).
func withoutPositions(q []waiting, gone []int) []waiting {
	if len(gone) == 0 {
		return q
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	k, first, last := len(gone), gone[0], gone[len(gone)-1]
	if last+1-k < len(q)-first-k { // fewer kept before the last than after the first
		dst := last + 1
		for i := k - 1; i >= 0; i-- {
			prev := -1
			if i > 0 {
				prev = gone[i-1]
			}
			dst -= copy(q[dst-(gone[i]-prev-1):dst], q[prev+1:gone[i]])
		}
		return q[k:]
	}
	out := first
	for i, g := range gone {
		next := len(q)
		if i+1 < len(gone) {
			next = gone[i+1]
		}
		out += copy(q[out:], q[g+1:next])
	}
	return q[:out]
}

// nwp returns the periods queued job q has waited.
func (c *Cluster) nwp(q waiting) int { return c.periods - q.joined }

// Waiting returns the number of queued jobs.
func (c *Cluster) Waiting() int { return len(c.queue) }

// Arrived returns the number of jobs that have arrived (queued or
// dropped): the index of the next job to arrive.
func (c *Cluster) Arrived() int { return c.next }

// Started returns the number of jobs started.
func (c *Cluster) Started() int { return c.started }

// Dropped returns the number of arrived jobs larger than the cluster.
func (c *Cluster) Dropped() int { return c.dropped }
