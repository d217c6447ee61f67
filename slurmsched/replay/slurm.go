package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/hostlist"
	breplay "github.com/optsched/optsched/model/replay"
	"github.com/optsched/optsched/runloop"
	"github.com/optsched/optsched/slurmsched"
)

// Server is a Slurm cluster as a replay back end (model/replay.Backend,
// driven by bench/replay).
type Server struct {
	// Cmd runs the commands (nil: runloop.Exec{}).
	Cmd runloop.Commands
	// User, when set, owns the jobs: sbatch runs as `runuser -u User --`
	// (root only).
	User string
	// Partition is sbatch's -p ("" the default partition); when set, only
	// its nodes count.
	Partition string
	// TopologyConf, when set, is a topology.conf file read instead of
	// scontrol show topology.
	TopologyConf string
	// Bin is the folder of sbatch, squeue, scancel, sinfo and scontrol
	// ("" : PATH).
	Bin string

	mine map[string]bool
	// last keeps the last record read of each finished job of this
	// Server: slurmctld forgets a finished job MinJobAge after its end.
	last map[string]breplay.Record
}

var _ breplay.Backend = (*Server)(nil)

// ErrNotOwn is Delete's error for an id this Server did not submit.
var ErrNotOwn = errors.New("slurm replay: not a job of this replay")

func (s *Server) cmd() runloop.Commands {
	if s.Cmd == nil {
		return runloop.Exec{}
	}
	return s.Cmd
}

func (s *Server) bin(name string) string {
	if s.Bin == "" {
		return name
	}
	return s.Bin + "/" + name
}

func fail(name string, err error, stderr []byte) error {
	return runloop.CommandError(name, err, stderr)
}

// Cluster implements breplay.Backend: the nodes with CPUs (of Partition
// when set) from sinfo --json, the switch tree from scontrol show
// topology (or TopologyConf; one switch over every node without the
// topology/tree plugin), and the cluster's name.
func (s *Server) Cluster(ctx context.Context) (*breplay.Cluster, error) {
	out, stderr, err := s.cmd().Run(ctx, "", s.bin("sinfo"), "--json")
	if err != nil {
		return nil, fail("sinfo", err, stderr)
	}
	nodes, err := slurmsched.ParseNodes(out)
	if err != nil {
		return nil, err
	}
	var owned []slurmsched.Node
	for _, n := range nodes {
		if n.CPUs > 0 && (s.Partition == "" || slices.Contains(n.Partitions, s.Partition)) {
			owned = append(owned, n)
		}
	}
	if len(owned) == 0 {
		return nil, fmt.Errorf("sinfo --json: none of the %d nodes has CPUs%s", len(nodes), inPartition(s.Partition))
	}
	st := &slurmsched.State{Nodes: owned}
	note := "scontrol show topology"
	if s.TopologyConf != "" {
		data, err := os.ReadFile(s.TopologyConf)
		if err != nil {
			return nil, fmt.Errorf("topology.conf: %w", err)
		}
		st.Topology, note = string(data), s.TopologyConf
	} else {
		out, stderr, err := s.cmd().Run(ctx, "", s.bin("scontrol"), "show", "topology")
		if err != nil {
			return nil, fail("scontrol show topology", err, stderr)
		}
		if st.Topology, err = slurmsched.TopologyConf(string(out)); err != nil {
			return nil, err
		}
		if strings.TrimSpace(st.Topology) == "" {
			note = "one switch over every node (scontrol show topology lists no switch)"
		}
	}
	t, err := st.Tree()
	if err != nil {
		return nil, err
	}
	out, stderr, err = s.cmd().Run(ctx, "", s.bin("scontrol"), "show", "config")
	if err != nil {
		return nil, fail("scontrol show config", err, stderr)
	}
	name := ConfigValue(string(out), "ClusterName")
	if name == "" {
		name = "slurm"
	}
	c := &breplay.Cluster{Server: name, Topology: t, TopologyNote: note}
	for _, n := range owned {
		if _, ok := t.Lookup(n.Name); !ok {
			continue
		}
		c.Nodes = append(c.Nodes, n.Name)
		c.NCPUs = append(c.NCPUs, int(n.CPUs))
	}
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("none of the %d nodes with CPUs%s is in the topology (%s)", len(owned), inPartition(s.Partition), note)
	}
	return c, nil
}

func inPartition(p string) string {
	if p == "" {
		return ""
	}
	return " in partition " + p
}

// ConfigValue returns the value of key in the output of scontrol show
// config ("Key = value" lines), "" when it is absent or "(null)".
func ConfigValue(show, key string) string {
	for _, line := range strings.Split(show, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		if v = strings.TrimSpace(v); v == "(null)" {
			return ""
		}
		return v
	}
	return ""
}

// SbatchArgs returns the sbatch arguments of j: C whole nodes
// (--nodes=C --exclusive), the time limit in seconds (Slurm rounds it up
// to whole minutes) and `/bin/sleep S` as the script.
func (s *Server) SbatchArgs(j breplay.Job) []string {
	args := []string{"--parsable", "--job-name=" + j.Name}
	if s.Partition != "" {
		args = append(args, "--partition="+s.Partition)
	}
	return append(args, "--output=/dev/null", "--error=/dev/null", "--chdir=/tmp",
		fmt.Sprintf("--nodes=%d", j.Chunks), "--exclusive",
		"--time="+hms(j.Walltime),
		"--wrap=/bin/sleep "+strconv.FormatInt(j.Sleep, 10))
}

func hms(s int64) string {
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// Submit implements breplay.Backend.
func (s *Server) Submit(ctx context.Context, j breplay.Job) (string, error) {
	name, args, dir := s.bin("sbatch"), s.SbatchArgs(j), ""
	if s.User != "" {
		q := name
		if p, err := exec.LookPath(name); err == nil {
			q = p
		}
		name, args, dir = "runuser", append([]string{"-u", s.User, "--", q}, args...), "/tmp"
	}
	out, stderr, err := s.cmd().Run(ctx, dir, name, args...)
	if err != nil {
		return "", fail("sbatch", err, stderr)
	}
	id, err := ParseSbatch(string(out))
	if err != nil {
		return "", err
	}
	if s.mine == nil {
		s.mine = map[string]bool{}
	}
	s.mine[id] = true
	return id, nil
}

// ParseSbatch reads the job id of `sbatch --parsable` ("ID" or
// "ID;CLUSTER").
func ParseSbatch(out string) (string, error) {
	text := strings.TrimSpace(out)
	id, _, _ := strings.Cut(text, ";")
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 || strings.ContainsAny(text, "\n") {
		if len(text) > 80 {
			text = text[:77] + "..."
		}
		return "", fmt.Errorf("sbatch --parsable: %q is not a job id", text)
	}
	return id, nil
}

// Records implements breplay.Backend from `squeue --json`, which lists
// every job slurmctld knows, finished ones included, whatever its
// filters; it keeps the ids asked for. A finished job of this Server
// that slurmctld has since forgotten (MinJobAge) keeps the last record
// read of it.
func (s *Server) Records(ctx context.Context, ids []string) ([]breplay.Record, error) {
	stdout, stderr, err := s.cmd().Run(ctx, "", s.bin("squeue"), "--json")
	if err != nil {
		return nil, fail("squeue", err, stderr)
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	recs, err := ParseRecords(stdout, func(id string) bool { return want[id] })
	if err != nil {
		return nil, err
	}
	var out []breplay.Record
	for _, r := range recs {
		if want[r.ID] {
			out = append(out, r)
			delete(want, r.ID)
			if r.Done && s.mine[r.ID] {
				if s.last == nil {
					s.last = map[string]breplay.Record{}
				}
				s.last[r.ID] = r
			}
		}
	}
	for _, id := range ids {
		if r, ok := s.last[id]; ok && want[id] {
			out = append(out, r)
			delete(want, id)
		}
	}
	return out, nil
}

// Finished reports whether a job_state is final: the job will not run
// (again). COMPLETING is not: its nodes are still being released.
func Finished(state string) bool {
	switch state {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT":
		return true
	}
	return false
}

// ParseRecords reads the jobs of a `squeue --json` document (Slurm
// 22.05) as records:
//   - done when the job_state is final (Finished);
//   - queued at submit_time; started at start_time when the job has
//     nodes (a job cancelled while pending has a start_time and none);
//     ended at end_time once done;
//   - the nodes of nodes (a hostlist), started once plus restart_cnt;
//   - the exit status decoded from exit_code, the raw wait status: the
//     exit code, or 128 + the signal that killed the job. A job whose
//     state is final but not COMPLETED with a status of 0 (a TIMEOUT
//     killed by Slurm, say) gets no exit status, so that it counts as
//     failed.
//
// keep, when not nil, selects the jobs to read by id (the others are
// left out unread). The node lists of the records read may expand to at
// most MaxNodeNames names in all.
func ParseRecords(data []byte, keep func(id string) bool) ([]breplay.Record, error) {
	jobs, err := slurmsched.ParseJobs(data)
	if err != nil {
		return nil, err
	}
	out := make([]breplay.Record, 0, len(jobs))
	names := 0
	for _, j := range jobs {
		r := breplay.Record{ID: strconv.FormatInt(j.ID, 10), Name: j.Name, Done: Finished(j.State), Queued: j.SubmitTime}
		if keep != nil && !keep(r.ID) {
			continue
		}
		if j.SubmitTime < 0 || j.StartTime < 0 || j.EndTime < 0 || j.RestartCount < 0 {
			return nil, fmt.Errorf("squeue --json: job %d: negative time or restart_cnt", j.ID)
		}
		if j.State != "PENDING" && j.Nodes != "" && j.Nodes != "(null)" {
			if names >= MaxNodeNames {
				return nil, fmt.Errorf("squeue --json: the jobs' node lists expand to more than %d names", MaxNodeNames)
			}
			if r.Nodes, err = hostlist.Expand(j.Nodes); err != nil {
				return nil, fmt.Errorf("squeue --json: job %d: nodes %q: %w", j.ID, cut(j.Nodes), err)
			}
			if names += len(r.Nodes); names > MaxNodeNames {
				return nil, fmt.Errorf("squeue --json: the jobs' node lists expand to more than %d names", MaxNodeNames)
			}
			slices.Sort(r.Nodes)
			r.Nodes = slices.Compact(r.Nodes)
		}
		if len(r.Nodes) > 0 {
			r.Start = j.StartTime
			r.Starts = int(min(j.RestartCount, 1<<20)) + 1
		}
		if r.Done {
			if r.Start > 0 {
				r.End = j.EndTime
			}
			r.Exit, r.HasExit = exitStatus(j.ExitCode), true
			if r.Exit == 0 && j.State != "COMPLETED" {
				r.HasExit = false
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// MaxNodeNames bounds the node names ParseRecords expands from one
// document, so that its work stays bounded on any input: far more than
// the jobs of a replay hold (150 jobs on 16 nodes hold at most 2,400).
const MaxNodeNames = 1 << 18

func cut(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// exitStatus decodes a raw wait status: the exit code, or 128 + the
// signal.
func exitStatus(raw int64) int {
	if raw < 0 || raw > 0xffff {
		return int(min(max(raw, -1<<30), 1<<30))
	}
	if sig := raw & 0x7f; sig != 0 {
		return 128 + int(sig)
	}
	return int(raw >> 8 & 0xff)
}

// batch is how many job ids one scancel is given.
const batch = 100

// Delete implements breplay.Backend: scancel of the ids, every one of
// them submitted by this Server (otherwise nothing is cancelled and the
// error is ErrNotOwn). Jobs that finished meanwhile are not an error.
func (s *Server) Delete(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if !s.mine[id] {
			return fmt.Errorf("%w: %s (scancel not run)", ErrNotOwn, id)
		}
	}
	return runloop.CancelJobs(ctx, s.cmd(), s.bin("scancel"), ids, batch, "already completing or completed")
}
