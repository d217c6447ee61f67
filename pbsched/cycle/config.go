package cycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/runloop"
)

// A Config is what a cycle reads, what optsched owns, how it decides and
// how it acts: the flags of `optsched pbs plan` and `optsched pbs run`,
// which build it. The zero values are the flags' zero values, not their
// defaults; the command validates the flags before it builds a Config.
type Config struct {
	// QstatFile, NodesFile and QueuesFile are files holding the output of
	// qstat -f -t -F json, pbsnodes -av -F json and qstat -Q -f [-F json]
	// ("-" reads Stdin; at most one of them may). An empty one is read
	// from the Snapshot folder when it is set, else from the command on
	// PATH. Without QueuesFile and Snapshot, the queue list is not read
	// when ExecQueues are given, and is an error when the other documents
	// come from files.
	QstatFile, NodesFile, QueuesFile string
	// Snapshot is a pbs_snapshot folder (job/qstat_f_F_json.out,
	// node/pbsnodes_avFjson.out, server/qstat_Qf.out).
	Snapshot string
	// Stdin is what a "-" file reads.
	Stdin io.Reader
	// Timezone is the time zone of the server's ctime strings: "" or
	// Local, UTC or an IANA name.
	Timezone string

	// ExecQueues, when not empty, are the only queues whose jobs are
	// scheduled (and are then taken to be started execution queues).
	ExecQueues []string
	// Nodes names the vnodes optsched may start jobs on (names and
	// hostlists, see pbsched.Scope.ResolveNodes); "" is every vnode.
	Nodes string
	// Levels are the vnode resources naming switch levels; TopologyConf,
	// when set, is the path of a Slurm-style topology.conf used instead.
	Levels       []string
	TopologyConf string
	// Period is the waiting period counted by NWP (whole seconds).
	Period time.Duration

	// Decide are the options of pbsched.Decide, with the solvers built
	// (catalog.Spec; pbsched's defaults for those left nil); Start is set
	// by each cycle, when it begins.
	Decide pbsched.Options

	// Apply runs the plan's qrun commands (after the server's state is
	// read again from its commands and the plan rechecked against it);
	// otherwise a cycle is a dry run.
	Apply bool
	// RecheckAfter: a state read from the server's commands is read
	// again before qrun only when deciding and checking took longer than
	// this since it was read (0: always). A re-read is fresher than the
	// first read only by the time the cycle spent deciding, and costs as
	// long as the first read: on a busy host that is most of a cycle's
	// reaction time. A state read from files or a snapshot is always
	// read again.
	RecheckAfter time.Duration
	// Qrun is the qrun binary ("": qrun found on PATH); QrunAsync runs
	// it as qrun -a (see pbsched.Qrun.Async).
	Qrun      string
	QrunAsync bool
	// KeepQstatDelay leaves qstat's pacing alone. OpenPBS's qstat sleeps
	// 200 ms when the same user ran qstat earlier in the same second (it
	// keeps the time in /var/tmp/.pbs_last_query_UID; delay_query in
	// src/lib/Libutil/misc_utils.c), which a cycle reading the jobs and
	// the queues at once, and again before qrun, meets on most cycles.
	// Unless it is set, a cycle removes that file before each qstat it
	// runs, as a scheduler talking to the server directly (pbs_sched)
	// is never paced.
	KeepQstatDelay bool
	// LockPath and LogPath are the lock file and the JSON-lines audit log
	// of the cycles that hold the lock (default: pbs.lock in
	// $XDG_STATE_HOME/optsched or ~/.local/state/optsched, and
	// pbs-audit.jsonl beside the lock). A dry run of Plan is logged only
	// to a LogPath that is set.
	LockPath, LogPath string

	// Interval is the time between the starts of two cycles of Loop, and
	// Cycles the number of cycles it runs (0: until stopped).
	Interval time.Duration
	Cycles   int
	// PIDFile, when set, is where Loop writes its pid while it runs, for
	// the PBS hook of WakeHook to find. SIGUSR1 wakes a Loop whether or
	// not it is set: the next cycle starts WakeDelay after the signal
	// (default DefaultWakeDelay; negative: at once) instead of at the
	// interval.
	PIDFile   string
	WakeDelay time.Duration
	// Messages receives the notices of the signal handling (nil: none).
	Messages io.Writer
}

// A ConfigError is a cycle's error that lies in its Config rather than in
// the server's state or in acting on it: a time zone that does not load,
// documents read from files without the queue list, a Nodes list that
// does not parse. optsched reports it as a usage error.
type ConfigError struct{ Err error }

// Error returns Err's message.
func (e ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e ConfigError) Unwrap() error { return e.Err }

// QrunName is the qrun command as written in scripts and documents: Qrun,
// or "qrun".
func (c *Config) QrunName() string {
	if c.Qrun != "" {
		return c.Qrun
	}
	return "qrun"
}

// Plan runs the one cycle of `optsched pbs plan`. With Apply it takes the
// lock, runs the plan's qrun commands and appends the cycle to the audit
// log, and handles SIGINT and SIGTERM while it runs (see Loop). A dry run
// takes no lock and is appended to the audit log only when LogPath is
// set. The plan comes back when the cycle decided one, also with an
// error (an unsafe plan, failed qruns), and apart from it what
// pbsched.Apply did with it (nil when it did not run); nothing runs
// unless the whole plan passed pbsched.Check.
func (c *Config) Plan(ctx context.Context) (*pbsched.Plan, *pbsched.Outcome, error) {
	switch {
	case c.Apply:
		ctx, _, release := runloop.Graceful(ctx, c.Messages)
		defer release()
		return c.locked(ctx, "plan --apply")
	case c.LogPath != "":
		// A dry run is logged only when asked to be.
		p, _, st, err := c.cycle(ctx, false, nil)
		e := AuditEntry{LoggedAt: time.Now().UTC().Format(time.RFC3339Nano), Command: "plan"}
		if st != nil {
			e.InputSHA256 = st.Digest
		}
		if p != nil {
			d := p.Doc(c.QrunName(), true, nil)
			e.Plan = &d
		}
		if err != nil {
			e.Error = err.Error()
		}
		return p, nil, errors.Join(err, runloop.AppendJSONLine(c.LogPath, e))
	default:
		p, _, _, err := c.cycle(ctx, false, nil)
		return p, nil, err
	}
}

// Loop runs the cycles of `optsched pbs run`: every Interval a cycle that
// holds the lock, acts when Apply is set and is appended to the audit
// log. After each cycle, report gets its number (from 1), its plan (nil
// when it failed before deciding), what pbsched.Apply did with it (nil
// when it did not run) and its error; a cycle's error does not
// stop the loop, an error that report returns does, and Loop returns it.
// Loop returns nil after Cycles cycles (when Cycles > 0) or when ctx
// ends. It handles SIGINT and SIGTERM while it runs: the first signal
// stops the loop after the cycle in flight, whose qrun commands all run
// and are logged; a second aborts that cycle (the qrun in flight is
// killed, the others do not run, the cycle is logged with the error).
// SIGUSR1 (sent by the hook of WakeHook when a job is queued or ends)
// starts the next cycle WakeDelay after it rather than at the interval;
// the signals that come during a cycle or its delay make one cycle. A
// Loop that would repeat cycles needs a positive Interval.
func (c *Config) Loop(ctx context.Context, report func(n int, p *pbsched.Plan, o *pbsched.Outcome, err error) error) (err error) {
	if c.Interval <= 0 && c.Cycles != 1 {
		return ConfigError{fmt.Errorf("the time between two cycles must be positive, got %v", c.Interval)}
	}
	delay := c.WakeDelay
	if delay == 0 {
		delay = DefaultWakeDelay
	}
	o := runloop.LoopOptions{Interval: c.Interval, Cycles: c.Cycles, PIDFile: c.PIDFile, WakeDelay: delay, Messages: c.Messages}
	err = runloop.Loop(ctx, o, func(ctx context.Context, n int) error {
		p, out, err := c.locked(ctx, "run")
		return report(n, p, out, err)
	})
	var pe runloop.PIDFileError
	if errors.As(err, &pe) {
		return ConfigError{pe.Err}
	}
	return err
}

// scope returns what the Config says optsched schedules.
func (c *Config) scope() (*pbsched.Scope, error) {
	sc := &pbsched.Scope{Levels: c.Levels, Period: int64(c.Period / time.Second)}
	if len(c.ExecQueues) > 0 {
		sc.ExecQueues = map[string]bool{}
		for _, q := range c.ExecQueues {
			sc.ExecQueues[strings.TrimSpace(q)] = true
		}
	}
	sc.NodeList = c.Nodes
	if c.TopologyConf != "" {
		data, err := windowjson.ReadFileLimited(c.TopologyConf)
		if err != nil {
			return nil, fmt.Errorf("--topology-conf: %w", err)
		}
		sc.TopologyConf = string(data)
	}
	return sc, nil
}

// stateDir is where the lock and the audit log live by default.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "optsched"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home folder for the lock and the audit log (give --lock and --log): %w", err)
	}
	return filepath.Join(home, ".local", "state", "optsched"), nil
}

// paths resolves the lock and log paths.
func (c *Config) paths() (lock, log string, err error) {
	lock, log = c.LockPath, c.LogPath
	if lock == "" || log == "" {
		dir, err := stateDir()
		if err != nil {
			return "", "", err
		}
		if lock == "" {
			lock = filepath.Join(dir, "pbs.lock")
		}
		if log == "" {
			log = filepath.Join(filepath.Dir(lock), "pbs-audit.jsonl")
		}
	}
	return lock, log, nil
}

// qrunPath resolves Qrun.
func (c *Config) qrunPath() (string, error) {
	if c.Qrun != "" {
		return c.Qrun, nil
	}
	p, err := exec.LookPath("qrun")
	if err != nil {
		return "", fmt.Errorf("qrun is not on PATH (give --qrun PATH): %w", err)
	}
	return p, nil
}

// cycle runs one read–decide–check–act cycle. With apply it runs the qrun
// commands and returns what came of them apart from the plan; it never
// runs one unless the whole plan passed pbsched.Check. When ph is not
// nil, it receives the time each phase took.
func (c *Config) cycle(ctx context.Context, apply bool, ph *Phases) (*pbsched.Plan, *pbsched.Outcome, *pbsched.State, error) {
	start := time.Now() // the time limit counts from here
	if ph == nil {
		ph = new(Phases)
	}
	sc, err := c.scope()
	if err != nil {
		return nil, nil, nil, err
	}
	qrun := ""
	if apply {
		// Find qrun before deciding anything.
		if qrun, err = c.qrunPath(); err != nil {
			return nil, nil, nil, err
		}
	}
	st, err := c.readState(ctx)
	if err != nil {
		return nil, nil, st, err
	}
	read := time.Now()
	ph.ReadMS = ms(read.Sub(start))
	live := c.QstatFile == "" && c.NodesFile == "" && c.Snapshot == ""
	if err := sc.ResolveNodes(st.Nodes); err != nil {
		return nil, nil, st, ConfigError{err}
	}
	po := c.Decide
	po.Start = start
	p, err := pbsched.Decide(ctx, st, sc, po)
	if err != nil {
		return nil, nil, st, err
	}
	err = pbsched.Check(st, sc, p)
	ph.DecideMS = ms(time.Since(read))
	if err != nil {
		return p, nil, st, err
	}
	if apply && len(p.Starts) > 0 {
		// The plan applier's re-check: the server's state is read again
		// just before qrun (always when the plan was made from files;
		// from the server's commands, when deciding took longer than
		// RecheckAfter), and only the starts it still allows run.
		if !live || c.RecheckAfter <= 0 || time.Since(read) > c.RecheckAfter {
			t := time.Now()
			fresh, err := c.readFresh(ctx, st)
			ph.RereadMS = ms(time.Since(t))
			if err != nil {
				return p, nil, st, fmt.Errorf("reading the server's state again before qrun (nothing was started): %w", err)
			}
			pbsched.Recheck(fresh, sc, p)
		}
		t := time.Now()
		o, err := pbsched.Apply(ctx, p, pbsched.Qrun{Path: qrun, Async: c.QrunAsync})
		ph.ApplyMS = ms(time.Since(t))
		return p, o, st, err
	}
	return p, nil, st, nil
}

// locked runs a cycle under the lock and appends it to the audit log.
func (c *Config) locked(ctx context.Context, command string) (*pbsched.Plan, *pbsched.Outcome, error) {
	lockPath, logPath, err := c.paths()
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	e := AuditEntry{LoggedAt: start.UTC().Format(time.RFC3339Nano), Command: command, Apply: c.Apply}
	lock, err := TakeLock(lockPath)
	if err != nil {
		e.Error = err.Error()
		return nil, nil, errors.Join(err, runloop.AppendJSONLine(logPath, e))
	}
	defer lock.Unlock()
	var ph Phases
	p, o, st, cerr := c.cycle(ctx, c.Apply, &ph)
	if st != nil {
		e.InputSHA256 = st.Digest
	}
	if p != nil {
		d := p.Doc(c.QrunName(), !c.Apply, o)
		e.Plan = &d
	}
	if cerr != nil {
		e.Error = cerr.Error()
	}
	e.CycleMS = float64(time.Since(start).Microseconds()) / 1000
	if ph != (Phases{}) {
		e.PhasesMS = &ph
	}
	e.LoggedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := runloop.AppendJSONLine(logPath, e); err != nil {
		return p, o, errors.Join(cerr, err)
	}
	return p, o, cerr
}
