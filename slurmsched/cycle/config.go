package cycle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/runloop"
	"github.com/optsched/optsched/slurmsched"
	"github.com/optsched/optsched/solver"
)

// ErrLocked is returned, wrapped with the lock's path and holder, when
// another cycle holds the lock.
var ErrLocked = errors.New("another optsched slurm cycle is running")

// A ConfigError lies in the Config rather than in the cluster's state.
type ConfigError struct{ Err error }

// Error returns Err's message.
func (e ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e ConfigError) Unwrap() error { return e.Err }

// A Config is what a cycle reads, what optsched owns, how it decides and
// how it acts: the flags of `optsched slurm plan` and `optsched slurm run`.
type Config struct {
	// SqueueFile and SinfoFile hold squeue --json and sinfo --json output;
	// empty: run the commands. TopologyFile holds scontrol show topology
	// output, TopologyConf a topology.conf; both empty: run scontrol show
	// topology (no switch in its answer: one switch over every node).
	SqueueFile, SinfoFile, TopologyFile, TopologyConf string
	// At, when not zero, is the time the first reading of a cycle is
	// taken to be made at: a snapshot read from files is planned as of
	// when it was taken (squeue --json carries no time of its own), so
	// that the same files give the same plan on any later day. Zero: the
	// time of reading. The read before acting always takes its own time.
	At time.Time
	// Partitions are the partitions whose held jobs optsched schedules
	// (empty: all); Nodes, a hostlist, the nodes it may use ("" all).
	Partitions []string
	Nodes      string
	// Solver is the whole-node window solver, built (catalog.Spec; nil:
	// Slurm's tree best fit alone); TimeLimit bounds the solve.
	Solver    solver.Solver
	TimeLimit time.Duration
	// StarveAfter is slurmsched.Options.StarveAfter.
	StarveAfter time.Duration
	// CompactWait is slurmsched.Options.CompactWait.
	CompactWait heuristics.CompactWait
	// Apply acts (after reading the state again from the commands and
	// rechecking the plan); otherwise a cycle is a dry run.
	Apply bool
	// Scontrol is the scontrol binary ("": scontrol on PATH); Squeue and
	// Sinfo likewise.
	Scontrol, Squeue, Sinfo string
	// LockPath and LogPath are the lock file and the audit log (default
	// slurm.lock and slurm-audit.jsonl in $XDG_STATE_HOME/optsched or
	// ~/.local/state/optsched).
	LockPath, LogPath string
	// Interval, Cycles, PIDFile, WakeDelay and Messages are the loop's
	// (runloop.LoopOptions).
	Interval  time.Duration
	Cycles    int
	PIDFile   string
	WakeDelay time.Duration
	Messages  io.Writer
}

// An AuditEntry is one line of the audit log.
type AuditEntry struct {
	LoggedAt    string `json:"logged_at"`
	Command     string `json:"command"`
	Apply       bool   `json:"apply"`
	Error       string `json:"error,omitempty"`
	InputSHA256 string `json:"input_sha256,omitempty"`
	// Plan is the cycle's plan with what Apply did (absent when the
	// cycle failed before deciding).
	Plan *slurmsched.PlanDoc `json:"plan,omitempty"`
	// CycleMS is the cycle's wall time in milliseconds, from taking the
	// lock to the last scontrol (a daemon whose cycles take longer than
	// its --interval shows it here); PhasesMS splits it (absent for a
	// cycle that failed before reading).
	CycleMS  float64         `json:"cycle_ms,omitempty"`
	PhasesMS *runloop.Phases `json:"phases_ms,omitempty"`
}

// Plan runs one cycle (`optsched slurm plan`): with Apply under the lock,
// logged, with SIGINT/SIGTERM handled; a dry run takes no lock and is
// logged only when LogPath is set. It returns the plan (nil when the
// cycle failed before deciding) and, apart from it, what
// slurmsched.Apply did with it (nil when it did not run).
func (c *Config) Plan(ctx context.Context) (*slurmsched.Plan, *slurmsched.Outcome, error) {
	if c.Apply {
		ctx, _, release := runloop.Graceful(ctx, c.Messages)
		defer release()
		return c.locked(ctx, "plan --apply")
	}
	p, _, st, err := c.cycle(ctx, false, nil)
	if c.LogPath != "" {
		e := AuditEntry{LoggedAt: time.Now().UTC().Format(time.RFC3339Nano), Command: "plan", Plan: doc(p, nil)}
		if st != nil {
			e.InputSHA256 = st.Digest
		}
		if err != nil {
			e.Error = err.Error()
		}
		err = errors.Join(err, runloop.AppendJSONLine(c.LogPath, e))
	}
	return p, nil, err
}

// doc is the audit log's form of p and o (nil when p is).
func doc(p *slurmsched.Plan, o *slurmsched.Outcome) *slurmsched.PlanDoc {
	if p == nil {
		return nil
	}
	d := p.Doc(o)
	return &d
}

// Loop runs the cycles of `optsched slurm run` (see runloop.Loop): after
// each, report gets its number, plan, what slurmsched.Apply did with it
// (nil when it did not run) and error; an error from report stops the
// loop.
func (c *Config) Loop(ctx context.Context, report func(n int, p *slurmsched.Plan, o *slurmsched.Outcome, err error) error) error {
	if c.Interval <= 0 && c.Cycles != 1 {
		return ConfigError{fmt.Errorf("the time between two cycles must be positive, got %v", c.Interval)}
	}
	o := runloop.LoopOptions{Interval: c.Interval, Cycles: c.Cycles, PIDFile: c.PIDFile, WakeDelay: c.WakeDelay, Messages: c.Messages}
	err := runloop.Loop(ctx, o, func(ctx context.Context, n int) error {
		p, o, err := c.locked(ctx, "run")
		return report(n, p, o, err)
	})
	var pe runloop.PIDFileError
	if errors.As(err, &pe) {
		return ConfigError{pe.Err}
	}
	return err
}

func (c *Config) paths() (lock, log string, err error) {
	lock, log = c.LockPath, c.LogPath
	if lock == "" || log == "" {
		dir := os.Getenv("XDG_STATE_HOME")
		if dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", "", fmt.Errorf("no home folder for the lock and the audit log (give --lock and --log): %w", err)
			}
			dir = filepath.Join(home, ".local", "state")
		}
		dir = filepath.Join(dir, "optsched")
		if lock == "" {
			lock = filepath.Join(dir, "slurm.lock")
		}
		if log == "" {
			log = filepath.Join(filepath.Dir(lock), "slurm-audit.jsonl")
		}
	}
	return lock, log, nil
}

// locked runs a cycle under the lock and appends it to the audit log.
func (c *Config) locked(ctx context.Context, command string) (*slurmsched.Plan, *slurmsched.Outcome, error) {
	lockPath, logPath, err := c.paths()
	if err != nil {
		return nil, nil, ConfigError{err}
	}
	start := time.Now()
	e := AuditEntry{LoggedAt: start.UTC().Format(time.RFC3339Nano), Command: command, Apply: c.Apply}
	lock, err := runloop.TakeLock(lockPath, ErrLocked)
	if err != nil {
		e.Error = err.Error()
		return nil, nil, errors.Join(err, runloop.AppendJSONLine(logPath, e))
	}
	defer lock.Unlock()
	var ph runloop.Phases
	p, o, st, cerr := c.cycle(ctx, c.Apply, &ph)
	if st != nil {
		e.InputSHA256 = st.Digest
	}
	if ph != (runloop.Phases{}) {
		e.PhasesMS = &ph
	}
	e.Plan = doc(p, o)
	if cerr != nil {
		e.Error = cerr.Error()
	}
	e.CycleMS = float64(time.Since(start).Microseconds()) / 1000
	e.LoggedAt = time.Now().UTC().Format(time.RFC3339Nano)
	return p, o, errors.Join(cerr, runloop.AppendJSONLine(logPath, e))
}

// scope builds the Scope.
func (c *Config) scope() (*slurmsched.Scope, error) {
	sc := &slurmsched.Scope{}
	for _, p := range c.Partitions {
		if p = strings.TrimSpace(p); p != "" {
			sc.Partitions = append(sc.Partitions, p)
		}
	}
	if c.Nodes != "" {
		names, err := expandNodes(c.Nodes)
		if err != nil {
			return nil, ConfigError{fmt.Errorf("--nodes: %w", err)}
		}
		sc.Nodes = map[string]bool{}
		for _, n := range names {
			sc.Nodes[n] = true
		}
	}
	return sc, nil
}

// cycle runs read, decide, check and, with apply, read again, recheck and
// act; what acting did comes back apart from the plan. ph gets the
// phases' wall times (nil: not kept).
func (c *Config) cycle(ctx context.Context, apply bool, ph *runloop.Phases) (*slurmsched.Plan, *slurmsched.Outcome, *slurmsched.State, error) {
	if ph == nil {
		ph = new(runloop.Phases)
	}
	sc, err := c.scope()
	if err != nil {
		return nil, nil, nil, err
	}
	if apply {
		if _, err := exec.LookPath(orDefault(c.Scontrol, "scontrol")); err != nil {
			return nil, nil, nil, fmt.Errorf("scontrol is not on PATH (give --scontrol PATH): %w", err)
		}
	}
	t := time.Now()
	st, err := c.readState(ctx, nil)
	ph.ReadMS = runloop.MS(time.Since(t))
	if err != nil {
		return nil, nil, st, err
	}
	t = time.Now()
	opt := slurmsched.Options{TimeLimit: c.TimeLimit, StarveAfter: c.StarveAfter, CompactWait: c.CompactWait, Solver: c.Solver}
	p, err := slurmsched.Decide(ctx, st, sc, opt)
	if err != nil {
		return nil, nil, st, err
	}
	err = slurmsched.Check(st, sc, p)
	ph.DecideMS = runloop.MS(time.Since(t))
	if err != nil {
		return p, nil, st, fmt.Errorf("the plan failed the independent check (nothing was started): %w", err)
	}
	if apply && len(p.Starts) > 0 {
		t = time.Now()
		fresh, err := c.readState(ctx, st)
		ph.RereadMS = runloop.MS(time.Since(t))
		if err != nil {
			return p, nil, st, fmt.Errorf("reading the state again before acting (nothing was started): %w", err)
		}
		slurmsched.Recheck(fresh, sc, p)
		t = time.Now()
		o, err := slurmsched.Apply(ctx, p, slurmsched.Scontrol{Path: c.Scontrol})
		ph.ApplyMS = runloop.MS(time.Since(t))
		return p, o, st, err
	}
	return p, nil, st, nil
}

func orDefault(s, d string) string {
	if s != "" {
		return s
	}
	return d
}

// readState reads squeue, sinfo and the topology. The commands run at
// once: on a busy host each takes its own fraction of a second, and the
// cycle's reaction time is their longest, not their sum. With prev (the
// read before acting), squeue and sinfo come from the commands whatever
// the files say, and the topology is prev's. Errors keep the order
// squeue, sinfo, topology.
func (c *Config) readState(ctx context.Context, prev *slurmsched.State) (*slurmsched.State, error) {
	type part struct {
		data []byte
		err  error
	}
	read := func(p *part, flag, file string, command ...string) {
		if file != "" && prev == nil {
			if p.data, p.err = os.ReadFile(file); p.err != nil {
				p.err = fmt.Errorf("%s: %w", flag, p.err)
			}
			return
		}
		p.data, p.err = run(ctx, command...)
	}
	var jobs, nodes part
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		read(&jobs, "--squeue", c.SqueueFile, orDefault(c.Squeue, "squeue"), "--json")
	}()
	go func() {
		defer wg.Done()
		read(&nodes, "--sinfo", c.SinfoFile, orDefault(c.Sinfo, "sinfo"), "--json")
	}()
	topo, topoErr := c.topology(ctx, prev)
	wg.Wait()
	for _, err := range []error{jobs.err, nodes.err, topoErr} {
		if err != nil {
			return nil, err
		}
	}
	h := sha256.New()
	for _, data := range [][]byte{jobs.data, nodes.data} {
		fmt.Fprintf(h, "%d\n", len(data))
		h.Write(data)
	}
	h.Write([]byte(topo))
	now := time.Now()
	if !c.At.IsZero() && prev == nil {
		now = c.At
	}
	st := &slurmsched.State{Topology: topo, Now: now.Unix(), Digest: hex.EncodeToString(h.Sum(nil))}
	var err error
	if st.Jobs, err = slurmsched.ParseJobs(jobs.data); err != nil {
		return st, err
	}
	if st.Nodes, err = slurmsched.ParseNodes(nodes.data); err != nil {
		return st, err
	}
	return st, nil
}

// topology is the topology.conf form of the cluster's topology: prev's
// when given, else --topology-conf, --topology or scontrol show topology.
func (c *Config) topology(ctx context.Context, prev *slurmsched.State) (string, error) {
	switch {
	case prev != nil:
		return prev.Topology, nil
	case c.TopologyConf != "":
		data, err := os.ReadFile(c.TopologyConf)
		if err != nil {
			return "", ConfigError{fmt.Errorf("--topology-conf: %w", err)}
		}
		return string(data), nil
	case c.TopologyFile != "":
		data, err := os.ReadFile(c.TopologyFile)
		if err != nil {
			return "", ConfigError{fmt.Errorf("--topology: %w", err)}
		}
		return slurmsched.TopologyConf(string(data))
	default:
		data, err := run(ctx, orDefault(c.Scontrol, "scontrol"), "show", "topology")
		if err != nil {
			return "", err
		}
		return slurmsched.TopologyConf(string(data))
	}
}

// run runs a command within two minutes and returns its output.
func run(ctx context.Context, command ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", strings.Join(command, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}
