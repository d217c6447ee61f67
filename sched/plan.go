package sched

// A Plan is one cycle's decision, a plain value: the jobs that start, in
// the order they are acted on.
type Plan struct {
	Starts []Start
}

// A Start is one job started on the nodes of its chunks.
type Start struct {
	Job string
	// Nodes are the node of each chunk, in chunk order (one a node for a
	// server without chunks).
	Nodes []string
	// Spec is the placement in the server's words (a qrun -H exec_vnode,
	// a Slurm hostlist), what the Runner acts on.
	Spec string
	// Defect, when not "", is a fault the adapter found in the start's own
	// text (a Spec that does not name its Nodes), reported once the start
	// has the right chunk count.
	Defect string
}
