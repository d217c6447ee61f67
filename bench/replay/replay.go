package replay

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/trace"
	mreplay "github.com/optsched/optsched/model/replay"
)

// The vocabulary of a replay is model/replay's, shared with the server
// back ends (pbsched/replay), which import no bench package.
type (
	// Backend is model/replay.Backend: one batch server Run submits to.
	Backend = mreplay.Backend
	// Cluster is model/replay.Cluster: what a Backend reports of its server.
	Cluster = mreplay.Cluster
	// Job is model/replay.Job: one job to submit.
	Job = mreplay.Job
	// Record is model/replay.Record: a server's account of one job.
	Record = mreplay.Record
)

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
	return fmt.Sprintf("chunks = ⌈processors × %d / %d⌉ (1..%d), each a whole node of ncpus=%d (PBS select=N:ncpus=%d, place=excl; Slurm --nodes=N --exclusive)", m.Nodes, m.MaxProcs, m.Nodes, m.NCPUs, m.NCPUs)
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
