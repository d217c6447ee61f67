package replay

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"os/user"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/pbs"
	breplay "github.com/optsched/optsched/model/replay"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/runloop"
)

// Commands runs one PBS command to its end (runloop.Commands).
type Commands = runloop.Commands

// Exec runs the commands as processes, each killed with its children
// after Timeout (default 60 s): runloop.Exec.
type Exec = runloop.Exec

// Server is a PBS server as a replay back end (model/replay.Backend,
// driven by bench/replay).
type Server struct {
	// Cmd runs the commands (nil: Exec{}).
	Cmd Commands
	// User, when set, owns the jobs: qsub runs as `runuser -u User --`
	// from User's home folder (root only; PBS refuses jobs of root by
	// default).
	User string
	// Queue is qsub's -q ("" the server's default queue).
	Queue string
	// Scope gives the topology's Levels (or TopologyConf), as for
	// `optsched pbs`.
	Scope pbsched.Scope
	// Bin is the folder of qsub, qstat, qdel and pbsnodes ("" : PATH).
	Bin string

	mine   map[string]bool
	home   string
	server string
}

var _ breplay.Backend = (*Server)(nil)

// ErrNotOwn is Delete's error for an id this Server did not submit.
var ErrNotOwn = errors.New("pbs replay: not a job of this replay")

func (s *Server) cmd() Commands {
	if s.Cmd == nil {
		return Exec{}
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

// Cluster implements breplay.Backend: the vnodes with CPUs (the natural
// vnode of a multi-vnode host has none) and their topology.
func (s *Server) Cluster(ctx context.Context) (*breplay.Cluster, error) {
	out, stderr, err := s.cmd().Run(ctx, "", s.bin("pbsnodes"), "-av", "-F", "json")
	if err != nil {
		return nil, fail("pbsnodes", err, stderr)
	}
	nodes, err := pbs.ParseNodes(out)
	if err != nil {
		return nil, err
	}
	var owned []*pbs.Node
	for i := range nodes.Nodes {
		if n := &nodes.Nodes[i]; n.Available["ncpus"] > 0 {
			owned = append(owned, n)
		}
	}
	if len(owned) == 0 {
		return nil, fmt.Errorf("pbsnodes: none of the %d vnodes has CPUs", len(nodes.Nodes))
	}
	sc := s.Scope
	if len(sc.Levels) == 0 && sc.TopologyConf == "" {
		sc.Levels = []string{"tier0", "tier1"}
	}
	t, note, _, err := sc.Topology(owned)
	if err != nil {
		return nil, err
	}
	c := &breplay.Cluster{Server: nodes.Server, Topology: t, TopologyNote: note}
	for _, n := range owned {
		if _, ok := t.Lookup(n.Name); !ok {
			continue
		}
		c.Nodes = append(c.Nodes, n.Name)
		c.NCPUs = append(c.NCPUs, int(n.Available["ncpus"]))
	}
	s.server = nodes.Server
	return c, nil
}

// QsubArgs returns the qsub arguments of j.
func (s *Server) QsubArgs(j breplay.Job) []string {
	args := []string{"-N", j.Name}
	if s.Queue != "" {
		args = append(args, "-q", s.Queue)
	}
	args = append(args, "-o", "/dev/null", "-e", "/dev/null",
		"-l", fmt.Sprintf("select=%d:ncpus=%d", j.Chunks, j.NCPUs),
		"-l", "place=excl",
		"-l", "walltime="+hms(j.Walltime),
		"--", "/bin/sleep", strconv.FormatInt(j.Sleep, 10))
	return args
}

func hms(s int64) string {
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// Submit implements breplay.Backend.
func (s *Server) Submit(ctx context.Context, j breplay.Job) (string, error) {
	name, args, dir := s.bin("qsub"), s.QsubArgs(j), ""
	if s.User != "" {
		if s.home == "" {
			u, err := user.Lookup(s.User)
			if err != nil {
				return "", fmt.Errorf("pbs replay: job owner: %w", err)
			}
			s.home = u.HomeDir
		}
		q := name
		if p, err := exec.LookPath(name); err == nil {
			q = p
		}
		name, args, dir = "runuser", append([]string{"-u", s.User, "--", q}, args...), s.home
	}
	out, stderr, err := s.cmd().Run(ctx, dir, name, args...)
	if err != nil {
		return "", fail("qsub", err, stderr)
	}
	id := strings.TrimSpace(string(out))
	if id == "" || strings.ContainsAny(id, "\n") || !pbs.ValidName(id) {
		return "", fmt.Errorf("qsub: %q is not a job id", cutText(id))
	}
	if s.mine == nil {
		s.mine = map[string]bool{}
	}
	s.mine[id] = true
	return id, nil
}

func cutText(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// batch is how many job ids one qstat or qdel is given.
const batch = 100

// Records implements breplay.Backend from `qstat -fx -F json`, every job
// of the server (finished ones included), keeping the ids asked for.
// OpenPBS 23.06 prints only the first job when qstat -F json is given
// several ids, so they are not passed.
func (s *Server) Records(ctx context.Context, ids []string) ([]breplay.Record, error) {
	stdout, stderr, err := s.cmd().Run(ctx, "", s.bin("qstat"), "-fx", "-F", "json")
	if err != nil {
		return nil, fail("qstat", err, stderr)
	}
	recs, err := ParseRecords(stdout)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := recs[:0]
	for _, r := range recs {
		if want[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseRecords reads the jobs of a `qstat -fx -F json` document as
// records: done when finished (state F, or X for a subjob), the end at
// obittime (else mtime for a finished job that started), the nodes of
// exec_vnode.
func ParseRecords(data []byte) ([]breplay.Record, error) {
	jobs, err := pbs.ParseJobs(data, nil)
	if err != nil {
		return nil, err
	}
	out := make([]breplay.Record, 0, len(jobs.Jobs))
	for _, j := range jobs.Jobs {
		r := breplay.Record{ID: j.ID, Name: j.Name, Done: j.State == "F" || j.State == "X",
			Queued: j.QTime, Start: j.STime, End: j.ObitTime,
			Used: j.UsedWalltime, HasUsed: j.HasUsedWalltime,
			Exit: j.ExitStatus, HasExit: j.HasExitStatus, Starts: j.RunCount}
		if r.End == 0 && r.Done && r.Start > 0 {
			r.End = j.MTime
		}
		if j.ExecVnodeText != "" {
			ch, err := pbs.ParseExecVnode(j.ExecVnodeText)
			if err != nil {
				return nil, &pbs.Error{Source: "qstat", Object: "job " + j.ID, Field: "exec_vnode", Reason: err.Error()}
			}
			r.Nodes = pbs.Vnodes(ch)
		}
		if r.Start == 0 {
			r.Nodes = nil // a job deleted before it started keeps no vnodes
		}
		out = append(out, r)
	}
	return out, nil
}

// Delete implements breplay.Backend: qdel of the ids, every one of them
// submitted by this Server (otherwise nothing is deleted and the error is
// ErrNotOwn). "Job has finished" answers are not errors.
func (s *Server) Delete(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if !s.mine[id] {
			return fmt.Errorf("%w: %s (qdel not run)", ErrNotOwn, id)
		}
	}
	return runloop.CancelJobs(ctx, s.cmd(), s.bin("qdel"), ids, batch, "Job has finished")
}
