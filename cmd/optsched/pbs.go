package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/solver"
)

// pbsOptions are the inputs of `optsched pbs plan` and `optsched pbs run`.
type pbsOptions struct {
	streams *streams
	// Where the state comes from.
	qstatFile, nodesFile, queuesFile, snapshot string
	execQueues                                 []string
	timezone                                   string
	// What optsched owns, and the topology.
	nodes, topologyConf string
	levels              []string
	period              time.Duration
	// Deciding.
	timeLimit time.Duration
	maxJobs   int
	cost      string
	solver    string
	fallback  string
	partial   string
	// Acting and recording.
	output   string
	apply    bool
	qrun     string
	lockPath string
	logPath  string
	// run only.
	interval time.Duration
	once     bool
	cycles   int
	// periodFromInterval: --period was not given and is --interval.
	periodFromInterval bool

	// Hooks for tests: the window solver and the fallback heuristics.
	newSolver func() (solver.Solver, error)
	fallbacks []solver.Solver
	// newSchedulers replaces the partial-node cp schedulers.
	newSchedulers func() []solver.Scheduler
}

func newPBSCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pbs",
		Short: "Schedule an OpenPBS / PBS Professional cluster: read its state, solve the window, start jobs with qrun -H",
		Long: `optsched pbs acts as an external scheduler for the vnodes of a PBS server it
is given: it reads the server's state (qstat -f -F json, pbsnodes -av -F json,
qstat -Q -f -F json), decides which queued jobs start now and where, and
starts them with qrun -H.

  optsched pbs plan   one cycle; prints the qrun commands (a dry run) or,
                      with --apply, runs them
  optsched pbs run    repeats the cycle every --interval (--once for a cron
                      job or a PBS periodic hook)

See docs/pbs.md for the server set-up.`,
	}
	cmd.AddCommand(newPBSPlanCmd(s, nil), newPBSRunCmd(s, nil))
	return cmd
}

// addFlags adds the flags shared by plan and run.
func (o *pbsOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.qstatFile, "qstat", "", "file with `qstat -f -F json` output ('-' for stdin); default: run qstat")
	f.StringVar(&o.nodesFile, "pbsnodes", "", "file with `pbsnodes -av -F json` output ('-' for stdin); default: run pbsnodes")
	f.StringVar(&o.queuesFile, "queues", "", "file with `qstat -Q -f -F json` (or plain qstat -Q -f) output; default: run qstat -Q")
	f.StringVar(&o.snapshot, "snapshot", "", "pbs_snapshot folder: reads job/qstat_f_F_json.out, node/pbsnodes_avFjson.out, server/qstat_Qf.out")
	f.StringSliceVar(&o.execQueues, "exec-queues", nil, "schedule only jobs of these execution queues; without a queue list they are taken to be started execution queues")
	f.StringVar(&o.timezone, "timezone", "Local", "time zone of the server's ctime strings (qtime, stime): Local, UTC or an IANA name")
	f.StringVar(&o.nodes, "nodes", "", "vnodes optsched may start jobs on: names ('pbshost[0],pbshost[1]') and hostlists ('cn[00-07]'; 'pbshost[0-7]' also names pbshost[0]…pbshost[7]) (default: every vnode of pbsnodes)")
	f.StringSliceVar(&o.levels, "topology-levels", []string{"tier0", "tier1"}, "vnode resources naming switch levels (any order: nesting decides)")
	f.StringVar(&o.topologyConf, "topology-conf", "", "Slurm-style topology.conf mapping vnode names to switches (instead of --topology-levels)")
	f.DurationVar(&o.period, "period", 0, "waiting period counted by NWP (default: --interval for run, 60s for plan)")
	f.DurationVar(&o.timeLimit, "time-limit", 5*time.Second, "wall-time limit of the cycle, from reading the state to writing the plan (the solves share it)")
	f.IntVar(&o.maxJobs, "max-jobs", 0, "cap on the multi-node whole-node jobs of a cycle; 0 = no cap")
	f.StringVar(&o.cost, "cost", "lan-code", "CH cost model: lan-code or lan-paper")
	f.StringVar(&o.solver, "solver", "csp", "whole-node window solver ("+strings.Join(wholeNodeSolvers(), ", ")+")")
	f.StringVar(&o.fallback, "fallback", "sa", "heuristic that takes over when the exact solver runs out of time: sa or none")
	f.StringVar(&o.partial, "partial", pbsched.PartialCP, "placement of the jobs whose chunks share vnodes: cp (CP/SAT time-and-resource schedule, list schedule and first fit as fallbacks) or first-fit")
	f.BoolVar(&o.apply, "apply", false, "run the qrun commands (default: a dry run that only prints them)")
	f.StringVar(&o.qrun, "qrun", "", "qrun binary (default: qrun found on PATH)")
	f.StringVar(&o.lockPath, "lock", "", "lock file that keeps cycles one at a time (default: $XDG_STATE_HOME/optsched/pbs.lock, or ~/.local/state/optsched/pbs.lock)")
	f.StringVar(&o.logPath, "log", "", "JSON-lines audit log, one line per cycle (default: pbs-audit.jsonl beside the lock)")
}

func newPBSPlanCmd(s *streams, runF func(*pbsOptions) error) *cobra.Command {
	o := &pbsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Decide one cycle and print its qrun commands (or run them with --apply)",
		Long: `plan reads the server's state once and decides which queued jobs start now.

Whole-node jobs (place=excl or exclhost, vnodes whose sharing forces
exclusive use, chunks that take all the CPUs of a vnode, or no select) go
through the topology-aware window solve (csp within --time-limit, SA in the
reserve, the Slurm and Seq heuristics if the solver fails). Jobs whose
chunks share vnodes are scheduled by the CP/SAT time-and-resource solver
(--partial cp, the default: jobs that start now are started, later starts
are listed as planned; the PBS FIFO list schedule and a first fit are its
fallbacks) or placed by a first fit on the free resources (--partial
first-fit, and the jobs cp cannot express). Every decision is checked against the
PBS state (model.Check for the whole-node window, a resource check for all)
before anything runs.

By default the plan is printed as a shell script: one
  qrun -H "(vnodeA:ncpus=16)+(vnodeB:ncpus=16)" JOBID
per job that starts, with comments on why each other job waits. -o json
prints the same as JSON. --apply runs the commands itself, takes the lock
and appends the cycle to the audit log.

Exit codes: 0 planned (or applied), 1 bad input, unsafe plan or a failed
qrun, 2 usage.`,
		Example: `  optsched pbs plan --qstat qstat.json --pbsnodes nodes.json --queues queues.json
  optsched pbs plan --snapshot snapshot_20240101 -o json
  optsched pbs plan --apply --nodes 'x1000c0s[0-7]b0n0' --exec-queues opt`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.period == 0 {
				o.period = 60 * time.Second
			}
			if runF != nil {
				return runF(o)
			}
			return runPBSPlan(cmd.Context(), o)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "script", "output: script (a shell script of qrun commands) or json")
	return cmd
}

func newPBSRunCmd(s *streams, runF func(*pbsOptions) error) *cobra.Command {
	o := &pbsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Repeat the cycle as an external scheduler daemon (--once for one cycle)",
		Long: `run repeats plan's cycle every --interval: read the state, decide, check,
run qrun (with --apply), append the cycle to the audit log. A cycle that
fails (bad input, a failed qrun) is logged and reported on stderr, and the
next cycle runs as planned; with --once the failure is the exit status.
Each cycle holds the lock file, so two runs never act at once. SIGINT or
SIGTERM stops the daemon after the cycle in flight, whose qrun commands
all run and are logged; a second signal aborts that cycle (the qrun in
flight is killed, the others do not run).`,
		Example: `  optsched pbs run --apply --interval 60s --nodes 'n[001-128]' --exec-queues opt
  optsched pbs run --apply --once     # from cron or a PBS periodic hook`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.period == 0 {
				o.period, o.periodFromInterval = o.interval, true
			}
			if runF != nil {
				return runF(o)
			}
			return runPBSDaemon(cmd.Context(), o)
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.DurationVar(&o.interval, "interval", 60*time.Second, "time between the starts of two cycles")
	f.BoolVar(&o.once, "once", false, "run one cycle and exit with its status")
	f.IntVar(&o.cycles, "cycles", 0, "stop after this many cycles; 0 = until signalled")
	f.StringVarP(&o.output, "output", "o", "summary", "per-cycle output on stdout: summary (one line), json (one line per cycle) or script")
	return cmd
}

// wholeNodeSolvers are the solvers of the catalogue that solve the
// whole-node window (not the cp model).
func wholeNodeSolvers() []string { return catalog.WholeNode() }

// validate checks the flags that do not need the state.
func (o *pbsOptions) validate() error {
	if o.timeLimit <= 0 {
		return usageError{fmt.Errorf("--time-limit must be positive, got %v", o.timeLimit)}
	}
	if o.partial != "" && o.partial != pbsched.PartialCP && o.partial != pbsched.PartialFirstFit {
		return usageError{fmt.Errorf("--partial must be cp or first-fit, got %q", o.partial)}
	}
	if o.maxJobs < 0 {
		return usageError{fmt.Errorf("--max-jobs must be at least 0, got %d", o.maxJobs)}
	}
	if o.period < time.Second {
		flag := "--period"
		if o.periodFromInterval {
			flag = "--interval (the default --period)"
		}
		return usageError{fmt.Errorf("%s must be at least 1s, got %v", flag, o.period)}
	}
	if _, err := model.ParseCostKind(o.cost); err != nil {
		return usageError{fmt.Errorf("--cost: %w", err)}
	}
	if o.newSolver == nil {
		e, ok := catalog.Lookup(o.solver)
		switch {
		case !ok:
			return usageError{fmt.Errorf("--solver must be one of the whole-node window solvers (%s), got %q", strings.Join(wholeNodeSolvers(), ", "), o.solver)}
		case e.Encoding == catalog.CP:
			return usageError{fmt.Errorf("--solver %s schedules the time-and-resource (cp) model; the whole-node window takes %s, and the partial-node jobs go to the cp scheduler with --partial cp", o.solver, strings.Join(wholeNodeSolvers(), ", "))}
		}
	}
	if o.qstatFile == "-" && o.nodesFile == "-" {
		return usageError{errors.New("--qstat and --pbsnodes cannot both read stdin")}
	}
	if o.queuesFile == "-" && (o.qstatFile == "-" || o.nodesFile == "-") {
		return usageError{errors.New("only one of --qstat, --pbsnodes and --queues can read stdin")}
	}
	return nil
}

// scope returns what the flags say optsched schedules.
func (o *pbsOptions) scope() (*pbsched.Scope, error) {
	sc := &pbsched.Scope{Levels: o.levels, Period: int64(o.period / time.Second)}
	if len(o.execQueues) > 0 {
		sc.ExecQueues = map[string]bool{}
		for _, q := range o.execQueues {
			sc.ExecQueues[strings.TrimSpace(q)] = true
		}
	}
	sc.NodeList = o.nodes
	if o.topologyConf != "" {
		data, err := windowjson.ReadFileLimited(o.topologyConf)
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
func (o *pbsOptions) paths() (lock, log string, err error) {
	lock, log = o.lockPath, o.logPath
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

// qrunPath resolves --qrun.
func (o *pbsOptions) qrunPath() (string, error) {
	if o.qrun != "" {
		return o.qrun, nil
	}
	p, err := exec.LookPath("qrun")
	if err != nil {
		return "", fmt.Errorf("qrun is not on PATH (give --qrun PATH): %w", err)
	}
	return p, nil
}

// commandTimeout bounds each qstat or pbsnodes call.
const commandTimeout = 2 * time.Minute

// readDoc reads one input document: the file flag ("-" is stdin), else
// the pbs_snapshot file, else the output of the command.
func (o *pbsOptions) readDoc(ctx context.Context, flag, file, snapshotPath string, command []string) ([]byte, string, error) {
	if file != "" {
		if file == "-" {
			data, err := io.ReadAll(io.LimitReader(o.streams.in, maxInput+1))
			if err != nil {
				return nil, "", fmt.Errorf("%s -: %w", flag, err)
			}
			if len(data) > maxInput {
				return nil, "", fmt.Errorf("%s -: stdin larger than %d bytes", flag, maxInput)
			}
			return data, "stdin", nil
		}
		data, err := readFileLimited(file)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", flag, err)
		}
		return data, file, nil
	}
	if o.snapshot != "" {
		p := filepath.Join(o.snapshot, snapshotPath)
		data, err := readFileLimited(p)
		if err != nil {
			return nil, "", fmt.Errorf("--snapshot: %w", err)
		}
		return data, p, nil
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, "", fmt.Errorf("%s is not on PATH (give %s FILE or --snapshot DIR): %w", command[0], flag, err)
	}
	cctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, path, command[1:]...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitedWriter{w: &out, n: maxInput}, &limitedWriter{w: &errb, n: 4096}
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("%s: %w: %s", strings.Join(command, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), strings.Join(command, " "), nil
}

// readFileLimited reads a file of at most maxInput bytes.
func readFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxInput)
	}
	return data, nil
}

// limitedWriter keeps the first n bytes written to it and fails after.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.n {
		return 0, fmt.Errorf("output larger than the limit")
	}
	l.n -= len(p)
	return l.w.Write(p)
}

// readState reads and parses the three documents.
func (o *pbsOptions) readState(ctx context.Context) (*pbsched.State, error) {
	loc, err := loadLocation(o.timezone)
	if err != nil {
		return nil, usageError{fmt.Errorf("--timezone: %w", err)}
	}
	h := sha256.New()
	jobsData, jobsSrc, err := o.readDoc(ctx, "--qstat", o.qstatFile, "job/qstat_f_F_json.out", []string{"qstat", "-f", "-t", "-F", "json"})
	if err != nil {
		return nil, err
	}
	nodesData, nodesSrc, err := o.readDoc(ctx, "--pbsnodes", o.nodesFile, "node/pbsnodes_avFjson.out", []string{"pbsnodes", "-av", "-F", "json"})
	if err != nil {
		return nil, err
	}
	var queuesData []byte
	queuesSrc := ""
	switch {
	case o.queuesFile != "" || o.snapshot != "":
		queuesData, queuesSrc, err = o.readDoc(ctx, "--queues", o.queuesFile, "server/qstat_Qf.out", nil)
	case len(o.execQueues) > 0:
		// The operator named the execution queues.
	case o.qstatFile != "" || o.nodesFile != "":
		err = usageError{errors.New("reading the state from files needs the queue list too: give --queues FILE (qstat -Q -f -F json) or --exec-queues")}
	default:
		queuesData, queuesSrc, err = o.readDoc(ctx, "--queues", "", "", []string{"qstat", "-Q", "-f", "-F", "json"})
	}
	if err != nil {
		return nil, err
	}
	for _, part := range [][]byte{jobsData, nodesData, queuesData} {
		fmt.Fprintf(h, "%d\n", len(part))
		h.Write(part)
	}
	st := &pbsched.State{Digest: hex.EncodeToString(h.Sum(nil))}
	if st.Jobs, err = pbs.ParseJobs(jobsData, loc); err != nil {
		return st, fmt.Errorf("%s: %w", jobsSrc, err)
	}
	if st.Nodes, err = pbs.ParseNodes(nodesData); err != nil {
		return st, fmt.Errorf("%s: %w", nodesSrc, err)
	}
	if queuesData != nil {
		if st.Queues, err = pbs.ParseQueues(queuesData); err != nil {
			return st, fmt.Errorf("%s: %w", queuesSrc, err)
		}
	}
	switch {
	case st.Jobs.Timestamp > 0:
		st.Now = st.Jobs.Timestamp
	case st.Nodes.Timestamp > 0:
		st.Now = st.Nodes.Timestamp
	default:
		st.Now = time.Now().Unix()
	}
	return st, nil
}

func loadLocation(name string) (*time.Location, error) {
	switch name {
	case "", "Local":
		return time.Local, nil
	case "UTC":
		return time.UTC, nil
	}
	return time.LoadLocation(name)
}

// cycle runs one read–decide–check–act cycle. With apply it runs the qrun
// commands; it never runs one unless the whole plan passed pbsched.Check.
func (o *pbsOptions) cycle(ctx context.Context, apply bool) (*pbsched.Plan, *pbsched.State, error) {
	start := time.Now() // the time limit counts from here
	sc, err := o.scope()
	if err != nil {
		return nil, nil, err
	}
	qrun := ""
	if apply {
		// Find qrun before deciding anything.
		if qrun, err = o.qrunPath(); err != nil {
			return nil, nil, err
		}
	}
	st, err := o.readState(ctx)
	if err != nil {
		return nil, st, err
	}
	if err := sc.ResolveNodes(st.Nodes); err != nil {
		return nil, st, usageError{err}
	}
	po := pbsched.Options{TimeLimit: o.timeLimit, MaxJobs: o.maxJobs, Cost: o.cost, NewSolver: o.newSolver, Fallbacks: o.fallbacks,
		Partial: o.partial, NewSchedulers: o.newSchedulers, Start: start}
	if po.NewSolver == nil {
		name, fallback := o.solver, o.fallback
		po.NewSolver = func() (solver.Solver, error) {
			return catalog.Solver(name, catalog.Options{Formulation: scas.Strong, Seed: 1, Fallback: fallback})
		}
	}
	p, err := pbsched.Decide(ctx, st, sc, po)
	if err != nil {
		return nil, st, err
	}
	if err := pbsched.Check(st, sc, p); err != nil {
		return p, st, err
	}
	if apply && len(p.Starts) > 0 {
		// The plan applier's re-check: the server's state is read again
		// just before qrun (also when the plan was made from files), and
		// only the starts it still allows run.
		fresh, err := o.readFresh(ctx, st)
		if err != nil {
			return p, st, fmt.Errorf("reading the server's state again before qrun (nothing was started): %w", err)
		}
		pbsched.Recheck(fresh, sc, p)
		if err := pbsched.Apply(ctx, p, pbsched.Qrun{Path: qrun}); err != nil {
			return p, st, err
		}
	}
	return p, st, nil
}

// readFresh reads the jobs and vnodes from the server's commands (qstat
// -f -t, pbsnodes -av), whatever the cycle's state was read from; the
// queue list is the one the cycle read.
func (o *pbsOptions) readFresh(ctx context.Context, prev *pbsched.State) (*pbsched.State, error) {
	live := *o
	live.snapshot = ""
	jobsData, _, err := live.readDoc(ctx, "--qstat", "", "", []string{"qstat", "-f", "-t", "-F", "json"})
	if err != nil {
		return nil, err
	}
	nodesData, _, err := live.readDoc(ctx, "--pbsnodes", "", "", []string{"pbsnodes", "-av", "-F", "json"})
	if err != nil {
		return nil, err
	}
	loc, err := loadLocation(o.timezone)
	if err != nil {
		return nil, err
	}
	fresh := &pbsched.State{Queues: prev.Queues, Digest: prev.Digest}
	if fresh.Jobs, err = pbs.ParseJobs(jobsData, loc); err != nil {
		return nil, fmt.Errorf("qstat: %w", err)
	}
	if fresh.Nodes, err = pbs.ParseNodes(nodesData); err != nil {
		return nil, fmt.Errorf("pbsnodes: %w", err)
	}
	fresh.Now = max(fresh.Jobs.Timestamp, prev.Now)
	return fresh, nil
}

// lockedCycle runs a cycle under the lock and appends it to the audit log.
func (o *pbsOptions) lockedCycle(ctx context.Context, command string) (*pbsched.Plan, error) {
	lockPath, logPath, err := o.paths()
	if err != nil {
		return nil, err
	}
	e := auditEntry{LoggedAt: time.Now().UTC().Format(time.RFC3339Nano), Command: command, Apply: o.apply}
	lock, err := lockCycle(lockPath)
	if err != nil {
		e.Error = err.Error()
		return nil, errors.Join(err, appendAudit(logPath, e))
	}
	defer lock.unlock()
	p, st, cerr := o.cycle(ctx, o.apply)
	if st != nil {
		e.InputSHA256 = st.Digest
	}
	if p != nil {
		d := p.Doc(o.qrunName(), !o.apply)
		e.Plan = &d
	}
	if cerr != nil {
		e.Error = cerr.Error()
	}
	if err := appendAudit(logPath, e); err != nil {
		return p, errors.Join(cerr, err)
	}
	return p, cerr
}

// qrunName is the qrun command as written in scripts and documents.
func (o *pbsOptions) qrunName() string {
	if o.qrun != "" {
		return o.qrun
	}
	return "qrun"
}

func runPBSPlan(ctx context.Context, o *pbsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.validate(); err != nil {
		return err
	}
	switch o.output {
	case "script", "json":
	default:
		return usageError{fmt.Errorf("-o must be script or json, got %q", o.output)}
	}
	var p *pbsched.Plan
	var err error
	switch {
	case o.apply:
		var release func()
		ctx, _, release = gracefulSignals(ctx, o.streams.err)
		defer release()
		p, err = o.lockedCycle(ctx, "plan --apply")
	case o.logPath != "":
		// A dry run is logged only when asked to be.
		var st *pbsched.State
		p, st, err = o.cycle(ctx, false)
		e := auditEntry{LoggedAt: time.Now().UTC().Format(time.RFC3339Nano), Command: "plan"}
		if st != nil {
			e.InputSHA256 = st.Digest
		}
		if p != nil {
			d := p.Doc(o.qrunName(), true)
			e.Plan = &d
		}
		if err != nil {
			e.Error = err.Error()
		}
		err = errors.Join(err, appendAudit(o.logPath, e))
	default:
		p, _, err = o.cycle(ctx, false)
	}
	if p != nil && (err == nil || p.Applied()) {
		if werr := o.writePlan(p); werr != nil {
			return werr
		}
	}
	return err
}

// writePlan prints a plan in the chosen output.
func (o *pbsOptions) writePlan(p *pbsched.Plan) error {
	out := o.streams.out
	switch o.output {
	case "json":
		return writeJSON(out, p.Doc(o.qrunName(), !o.apply))
	case "summary":
		_, err := fmt.Fprintln(out, p.Summary(o.apply))
		return err
	}
	return p.WriteScript(out, o.qrunName(), o.apply)
}

// gracefulSignals handles SIGINT and SIGTERM for cycles that act: the
// first signal closes stopping (the daemon stops after the cycle in
// flight, whose qrun commands all run and are logged), the second ends
// the returned context (the qrun in flight is killed, the rest are not
// run, the cycle is logged as interrupted). release restores the default
// handling.
func gracefulSignals(parent context.Context, errOut io.Writer) (ctx context.Context, stopping <-chan struct{}, release func()) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				n++
				if n == 1 {
					fmt.Fprintf(errOut, "optsched: %v: finishing the cycle in flight, then stopping (again to abort it)\n", s)
					close(stop)
					continue
				}
				fmt.Fprintf(errOut, "optsched: %v again: aborting the cycle\n", s)
				cancel(fmt.Errorf("aborted by a second %v", s))
				return
			}
		}
	}()
	return ctx, stop, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// runPBSDaemon repeats cycles every interval until the context ends, the
// cycle count is reached, or (with --once) after one cycle.
func runPBSDaemon(ctx context.Context, o *pbsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.interval < time.Second && !o.once {
		return usageError{fmt.Errorf("--interval must be at least 1s, got %v", o.interval)}
	}
	switch o.output {
	case "summary", "json", "script":
	default:
		return usageError{fmt.Errorf("-o must be summary, json or script, got %q", o.output)}
	}
	if o.cycles < 0 {
		return usageError{fmt.Errorf("--cycles must be at least 0, got %d", o.cycles)}
	}
	ctx, stopping, release := gracefulSignals(ctx, o.streams.err)
	defer release()
	for n := 1; ; n++ {
		start := time.Now()
		p, err := o.lockedCycle(ctx, "run")
		if p != nil {
			if o.output == "json" {
				line, _ := json.Marshal(p.Doc(o.qrunName(), !o.apply))
				fmt.Fprintln(o.streams.out, string(line))
			} else if werr := o.writePlan(p); werr != nil {
				return werr
			}
		}
		if err != nil {
			if o.once {
				return err
			}
			fmt.Fprintf(o.streams.err, "optsched: cycle %d: %v\n", n, err)
		}
		if o.once || (o.cycles > 0 && n >= o.cycles) {
			return nil
		}
		select {
		case <-stopping:
			return nil
		default:
		}
		select {
		case <-stopping:
			return nil
		case <-ctx.Done():
			return nil
		case <-time.After(max(0, o.interval-time.Since(start))):
		}
	}
}
