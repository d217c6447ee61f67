package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/trace"
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
	// Server names the server (PBS's pbs_server).
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
	// in seconds; HasUsed says whether it reported one.
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

// A Mapping turns a log's processor counts into chunks on a server:
// chunks = ⌈procs × Nodes / MaxProcs⌉, at least 1 and at most Nodes, each
// NCPUs CPUs.
type Mapping struct {
	Nodes, MaxProcs, NCPUs int
}

// Chunks returns the chunks of a job of procs processors.
func (m Mapping) Chunks(procs int) int {
	if m.MaxProcs <= 0 || m.Nodes <= 0 {
		return 1
	}
	c := (int64(procs)*int64(m.Nodes) + int64(m.MaxProcs) - 1) / int64(m.MaxProcs)
	return int(min(max(c, 1), int64(m.Nodes)))
}

// String states the mapping for people.
func (m Mapping) String() string {
	return fmt.Sprintf("chunks = ⌈processors × %d / %d⌉ (1..%d), select=N:ncpus=%d, place=excl", m.Nodes, m.MaxProcs, m.Nodes, m.NCPUs)
}

// Settings say which part of a log to replay and how.
type Settings struct {
	// From is the first job (0-based, in submit order), N the job count.
	From, N int
	// Speedup divides every time of the log (> 0).
	Speedup float64
	// Pad is added to every compressed walltime request, in seconds.
	Pad int64
	// RunID names the run's jobs: "ors-<RunID>-<k>".
	RunID string
	Mapping
}

// Errors of Plan.
var ErrRange = errors.New("replay: no such jobs in the log")

// Plan builds the jobs K..K+N−1 of a log read by OpenTrace (job Nodes are
// processors there).
func Plan(jobs []trace.Job, s Settings) ([]Job, error) {
	switch {
	case s.Speedup <= 0 || math.IsInf(s.Speedup, 0) || math.IsNaN(s.Speedup):
		return nil, fmt.Errorf("replay: speedup %v must be positive", s.Speedup)
	case s.N < 1:
		return nil, fmt.Errorf("replay: %d jobs: want at least 1", s.N)
	case s.From < 0 || s.From+s.N > len(jobs):
		return nil, fmt.Errorf("%w: jobs %d..%d asked, the log has %d (0..%d)", ErrRange, s.From, s.From+s.N-1, len(jobs), len(jobs)-1)
	case s.Pad < 0:
		return nil, fmt.Errorf("replay: walltime pad %d s is negative", s.Pad)
	case s.Nodes < 1 || s.MaxProcs < 1 || s.NCPUs < 1:
		return nil, fmt.Errorf("replay: mapping %d nodes, %d processors, %d CPUs a chunk: each must be at least 1", s.Nodes, s.MaxProcs, s.NCPUs)
	case !validRunID(s.RunID):
		return nil, fmt.Errorf("replay: run id %q: want 1-32 letters, digits or '-'", s.RunID)
	}
	first := jobs[s.From].Submit
	out := make([]Job, s.N)
	for i := range out {
		tj := jobs[s.From+i]
		k := s.From + i
		at := float64(tj.Submit-first) / s.Speedup
		out[i] = Job{
			K: k, LogID: tj.ID, Procs: tj.Nodes,
			Name: JobName(s.RunID, k), RunID: s.RunID,
			At:       time.Duration(at * float64(time.Second)),
			Sleep:    int64(math.Round(float64(tj.Runtime) / s.Speedup)),
			Walltime: int64(math.Ceil(float64(tj.Walltime)/s.Speedup)) + s.Pad,
			Chunks:   s.Chunks(tj.Nodes),
			NCPUs:    s.NCPUs,
		}
		out[i].Walltime = max(out[i].Walltime, 1)
	}
	return out, nil
}

// JobName is the name of job k of run runID.
func JobName(runID string, k int) string { return "ors-" + runID + "-" + strconv.Itoa(k) }

func validRunID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == ""
}

// OpenTrace reads an SWF log for replay: every job's Nodes is its
// processor count, and maxProcs is the header's MaxProcs (else MaxNodes,
// else the largest job).
func OpenTrace(path string) (tr *trace.Trace, maxProcs int, err error) {
	tr, err = trace.Open(path, "swf", trace.Options{ProcsPerNode: 1})
	if err != nil {
		return nil, 0, err
	}
	for _, key := range []string{"MaxProcs", "MaxNodes"} {
		if n, err := strconv.Atoi(strings.TrimSpace(tr.Header[key])); err == nil && n > 0 {
			return tr, n, nil
		}
	}
	for _, j := range tr.Jobs {
		maxProcs = max(maxProcs, j.Nodes)
	}
	return tr, maxProcs, nil
}
