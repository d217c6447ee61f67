package model

import (
	"fmt"
	"maps"
	"slices"
)

// A Window is one decision of a window-based batch scheduler ([Lan23]
// §III-C): at Time it holds the idle nodes, the jobs running on the others
// and the jobs waiting to start. Solvers decide which waiting jobs start
// where (and, for the time-and-resource model of [Bridi16], when).
//
// A Window is read from its JSON form by model/windowjson (Parse, Load),
// which validates it; code that builds one by hand must keep the same
// invariants (Idle sorted and distinct, node ids valid, job ids distinct).
type Window struct {
	// Time is the decision time, in seconds.
	Time int64
	// Topology is the cluster's switch tree; TopologySpec says how the
	// window file described it.
	Topology     *Topology
	TopologySpec TopologySpec
	// Idle lists the idle node ids in increasing order: the idle sequence
	// Q of [Lan23].
	Idle []int
	// Running are the jobs occupying the other nodes.
	Running []RunningJob
	// Jobs are the waiting jobs, in the order of the window file.
	Jobs []Job
	// Queues maps a queue name to its parameters. When nil, every queue
	// has an expected wait of 1 s.
	Queues map[string]Queue
	// Resources holds each node's capacities (by node id); nil when the
	// window file has no node_resources.
	Resources []Resources
	// Reservations are node reservations and maintenance intervals: no
	// waiting job may run on their nodes while they last ([Bridi16]'s
	// noOverlap). nil when the window file has none.
	Reservations []Reservation
	// Cost prices a job's node set.
	Cost CostModel
}

// A TopologySpec records how a window file described its topology, so a
// window can be written back in the same form. Exactly one field is set.
type TopologySpec struct {
	Layout    *LayoutSpec  `json:"layout,omitempty"`
	FatTree   *FatTreeSpec `json:"fat_tree,omitempty"`
	Slurm     string       `json:"slurm,omitempty"`
	SlurmFile string       `json:"slurm_file,omitempty"`
}

// LayoutSpec is the pods × leaves × nodes layout of NewLayout.
type LayoutSpec struct {
	Pods         int `json:"pods"`
	LeavesPerPod int `json:"leaves_per_pod"`
	NodesPerLeaf int `json:"nodes_per_leaf"`
}

// FatTreeSpec is the k-ary fat-tree of NewFatTree.
type FatTreeSpec struct {
	K    int `json:"k"`
	Pods int `json:"pods,omitempty"`
}

// A Job is a job waiting in the queue.
type Job struct {
	// ID identifies the job ("1234.pbs01", "17").
	ID string
	// Nodes is the number of whole nodes requested (n_j in [Lan23]).
	Nodes int
	// Walltime is the requested run time, in seconds.
	Walltime int64
	// Submit is the submission time, in seconds; at most the window time.
	Submit int64
	// Queue names the job's queue.
	Queue string
	// NWP is the number of waiting periods the job has already been
	// passed over ([Lan23] §III-C); higher goes first.
	NWP int
	// Select is the PBS select statement, parsed; nil when absent.
	Select Select
	// Comm reports whether the job is communication-intensive, as the
	// allocators of Mishra et al. (heuristics.MishraGreedy and its
	// siblings) use it. The window reader sets it to true when the window
	// file omits "comm"; note that the zero value of a Job built in Go is
	// false (compute-intensive).
	Comm bool
	// Pattern names the job's dominant collective communication pattern
	// for Mishra et al.'s cost model: PatternRD, PatternRHVD or
	// PatternBinomial. The window reader sets PatternRD when the window
	// file omits "pattern"; the empty string of a Job built in Go means
	// PatternRD too.
	Pattern string
	// Place is the PBS place statement (arrangement of the job's units
	// over nodes, exclusivity); the zero value is free and shared.
	Place Place
}

// The communication patterns a Job may name in Pattern.
const (
	// PatternRD is recursive doubling: in step k, rank i exchanges with
	// rank i XOR 2^k.
	PatternRD = "rd"
	// PatternRHVD is recursive halving with vector doubling: the pairs of
	// PatternRD in reverse order, with message sizes halving.
	PatternRHVD = "rhvd"
	// PatternBinomial is a binomial tree: in step k, ranks i < 2^k send to
	// rank i + 2^k.
	PatternBinomial = "binomial"
)

// A RunningJob occupies nodes until End.
type RunningJob struct {
	ID string
	// Nodes are the ids of the nodes the job runs on.
	Nodes []int
	// End is the (estimated) end time, after the window time.
	End int64
	// Select is the per-node usage in PBS select form, nil when absent.
	Select Select
	// Comm reports whether the job is known to be communication-intensive;
	// false (the default, and the zero value) means unknown. Mishra et
	// al.'s allocators count the communication-intensive busy nodes of
	// each leaf switch from it.
	Comm bool
	// Units, when set, gives the number of the job's units (chunks of its
	// one-chunk Select) on each of its nodes; its keys are exactly Nodes.
	// Without it, a job with a Select uses the whole statement on each of
	// its nodes, and a job without one uses its nodes whole.
	Units map[int]int
	// Place is the running job's PBS place statement; Exclusive keeps
	// every other job off its nodes until End.
	Place Place
}

// A Reservation keeps every waiting job off Nodes over [Start, End): a
// PBS reservation or a maintenance interval. Start may lie before the
// window time (a reservation in progress); End lies after it.
type Reservation struct {
	// ID names the reservation (optional).
	ID string
	// Nodes are the reserved node ids.
	Nodes []int
	// Start and End bound the reservation, in seconds.
	Start, End int64
}

// MaxTime bounds the times and durations of a window (about 35,000 years
// in seconds), so that sums of times cannot overflow: the window reader
// holds times, walltimes and ends to it, and Check rejects a start more
// than MaxTime after the window time.
const MaxTime = 1 << 40

// DefaultQueue is the queue of a job whose window entry names none.
const DefaultQueue = "default"

// A Queue holds a queue's parameters.
type Queue struct {
	// ExpectedWait is the queue's expected waiting time in seconds, the
	// weight ewt_q of [Bridi16] Eq. (2).
	ExpectedWait int64
}

// Resources maps a resource name ("ncpus", "ngpus", "mem" in bytes) to an
// amount.
type Resources map[string]int64

// ExpectedWait returns the expected waiting time of queue q: its
// configured value, or 1 when the window has no queues section.
func (w *Window) ExpectedWait(q string) int64 {
	if qq, ok := w.Queues[q]; ok {
		return qq.ExpectedWait
	}
	return 1
}

// IsIdle reports whether node id is idle.
func (w *Window) IsIdle(id int) bool {
	_, ok := slices.BinarySearch(w.Idle, id)
	return ok
}

// JobIndices returns a look-up of waiting jobs' indices in Jobs by id,
// built in one pass: for many look-ups, where JobIndex (a linear search)
// would take time quadratic in the jobs (validating a result of a
// million jobs). It does not follow later changes to Jobs.
func (w *Window) JobIndices() func(id string) (int, bool) {
	m := make(map[string]int, len(w.Jobs))
	for i := range w.Jobs {
		if _, dup := m[w.Jobs[i].ID]; !dup { // the first, as JobIndex
			m[w.Jobs[i].ID] = i
		}
	}
	return func(id string) (int, bool) {
		i, ok := m[id]
		if !ok {
			return -1, false
		}
		return i, true
	}
}

// JobIndex returns the index in Jobs of the waiting job with the given id.
func (w *Window) JobIndex(id string) (int, bool) {
	for i := range w.Jobs {
		if w.Jobs[i].ID == id {
			return i, true
		}
	}
	return -1, false
}

// NodeNames returns the names of the given node ids.
func (w *Window) NodeNames(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = w.Topology.Name(id)
	}
	return out
}

// QueueNames returns the configured queue names in sorted order.
func (w *Window) QueueNames() []string {
	return slices.Sorted(maps.Keys(w.Queues))
}

// Block returns D(i, n) of [Lan23] §IV-A: the n nodes of the idle sequence
// starting at position i, wrapping to the head of the sequence when fewer
// than n remain. It panics if i is not a position of Idle or n is not in
// [1, len(Idle)].
func (w *Window) Block(i, n int) []int {
	q := w.Idle
	if i < 0 || i >= len(q) || n < 1 || n > len(q) {
		panic(fmt.Sprintf("model: Block(%d, %d) on %d idle nodes", i, n, len(q)))
	}
	// Appended, not made then copied: a new slice of n ints would be
	// zeroed first, and blocks of thousands of nodes are decoded in every
	// window at archive scale. Appending to a full slice allocates a new
	// one and zeroes only what is past the copy.
	end := min(i+n, len(q))
	if end-i == n {
		return append([]int(nil), q[i:end]...)
	}
	return append(q[i:end:end], q[:n-(end-i)]...)
}

// ResourceNames returns, sorted, every resource name that a node's
// capacity, a running job's select or a waiting job's select of w
// mentions: the resources the time-and-resource model counts.
func ResourceNames(w *Window) []string {
	names := map[string]bool{}
	for _, r := range w.Resources {
		for k := range r {
			names[k] = true
		}
	}
	for _, r := range w.Running {
		for _, c := range r.Select {
			for k := range c.Amounts {
				names[k] = true
			}
		}
	}
	for _, j := range w.Jobs {
		for _, c := range j.Select {
			for k := range c.Amounts {
				names[k] = true
			}
		}
	}
	out := make([]string, 0, len(names))
	for k := range names {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
