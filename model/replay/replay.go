// Package replay is the vocabulary of replaying a workload on a real batch
// server (optsched replay): the jobs submitted, what the server records of
// them, the cluster it reports, and the Backend contract a server adapter
// implements. The driver and the metrics are bench/replay's; the PBS back
// end is pbsched/replay's, the Slurm one slurmsched/replay's. It imports
// model only.
package replay

import (
	"context"
	"time"

	"github.com/optsched/optsched/model"
)

// A Backend is one batch server that Run submits to. Its methods are
// called from one goroutine. Every id it is given is one its Submit
// returned; Delete must refuse any other.
type Backend interface {
	// Cluster reads the server's compute nodes and their topology.
	Cluster(ctx context.Context) (*Cluster, error)
	// Submit submits j and returns the server's id of it.
	Submit(ctx context.Context, j Job) (id string, err error)
	// Records returns the server's records of the jobs ids, in any order;
	// a job the server does not (yet) list is left out.
	Records(ctx context.Context, ids []string) ([]Record, error)
	// Delete deletes the jobs ids that have not finished. Jobs that
	// finished meanwhile are not an error.
	Delete(ctx context.Context, ids []string) error
}

// A Cluster is what a Backend reports of its server.
type Cluster struct {
	// Server names the server (PBS's pbs_server, Slurm's ClusterName).
	Server string
	// Nodes are the compute nodes (vnodes with CPUs), NCPUs their CPUs.
	Nodes []string
	NCPUs []int
	// Topology is the switch tree over Nodes; TopologyNote says where it
	// was read from.
	Topology     *model.Topology
	TopologyNote string
}

// A Job is one job to submit.
type Job struct {
	// K is the job's position in the log (0-based, in submit order).
	K int
	// LogID is the SWF job number; Procs its processors.
	LogID string
	Procs int
	// Name is the job name, "ors-<runid>-<k>"; RunID the run's id.
	Name, RunID string
	// At is when to submit it, after the first job of the run.
	At time.Duration
	// Sleep is the compressed run time and Walltime the limit asked for
	// (compressed request + pad), in seconds.
	Sleep, Walltime int64
	// Chunks of NCPUs CPUs each, each on a vnode of its own (exclusive).
	Chunks, NCPUs int
}

// A Record is a server's account of one job.
type Record struct {
	ID, Name string
	// Done: the job has finished (ran to its end, failed, or was deleted).
	Done bool
	// Queued, Start, End: seconds since 1970; Start is 0 when the job never
	// started, End 0 when it has not ended.
	Queued, Start, End int64
	// Used is the run time the server measured (PBS resources_used.walltime),
	// in seconds; HasUsed says whether it reported one (Slurm does not:
	// the run is End − Start).
	Used    int64
	HasUsed bool
	// Nodes are the distinct nodes the job ran on.
	Nodes []string
	// Exit is the exit status; HasExit says whether there is one.
	Exit    int
	HasExit bool
	// Starts counts the times the job was started (0: unknown).
	Starts int
}
