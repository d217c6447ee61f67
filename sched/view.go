package sched

// Resources are amounts by resource name ("cpus", "mem", a GRES name …),
// in the units the adapter chose for each.
type Resources map[string]int64

// Add adds r's amounts to a, which must not be nil.
func (a Resources) Add(r Resources) {
	for k, v := range r {
		a[k] += v
	}
}

// A View is the cluster as one cycle reads it, in no server's terms.
type View struct {
	Nodes []Node
	// InFlight are allocations that the server will make but that the
	// nodes' InUse does not count yet (a start acted on that has not
	// run): they count as starts already made on their nodes.
	InFlight []Alloc
	// Jobs are the jobs a plan may name: the waiting jobs, with Blocked
	// set on those that may not start.
	Jobs []Job
}

// A Node is one node (or vnode) of the cluster.
type Node struct {
	Name string
	// Capacity is what the node has of each resource, InUse what running
	// jobs hold of it.
	Capacity, InUse Resources
	// Busy says that the node runs something (a job, or any resource in
	// use): a whole-node start may not go there.
	Busy bool
	// Down, when not "", is why the node takes no new job (its state in
	// the server's words); Foreign says the node is not the scope's.
	Down    string
	Foreign bool
	// Pools are the partitions or queues the node serves: a job starts
	// only on nodes that list its Pool, or that take every pool
	// (AnyPool).
	Pools   []string
	AnyPool bool
}

// An Alloc is what one job holds (or will hold) on one node.
type Alloc struct {
	Job  string
	Node string
	// Amounts are what it holds; Whole says it holds the whole node
	// (then it counts as the node's Capacity).
	Amounts Resources
	Whole   bool
}

// A Job is a job a plan may start.
type Job struct {
	ID string
	// Blocked, when not "", is why the job may not start at all (not
	// waiting, not the scope's, …), in the server's words.
	Blocked string
	// Chunks are its demand: one entry a node (or chunk) of a start, what
	// that chunk uses there.
	Chunks []Resources
	// Whole says the job takes its nodes whole: each counts as its full
	// Capacity, and must be free of anything else. WholeOn are nodes it
	// takes whole when it starts there, by the node's own policy (a PBS
	// vnode's sharing).
	Whole   bool
	WholeOn map[string]bool
	// Stack says several chunks of one start may go on one node (PBS's
	// chunks, which a vnode may hold several of): their amounts add up
	// there. Without it, each chunk needs a node of its own.
	Stack bool
	// Pool is the partition or queue whose nodes it runs on; Excluded
	// are nodes it must not run on.
	Pool     string
	Excluded map[string]bool
	// Defect, when not "", is a fault of the job's own documents found
	// while reading it (an unreadable excluded list …), reported once its
	// start has the right chunk count.
	Defect string
}
