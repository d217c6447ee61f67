package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/pbsched/cycle"
	slurmcycle "github.com/optsched/optsched/slurmsched/cycle"
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
	selection string
	order     string
	// reserveAfter is --reserve-after (pbsched.Options.ReserveAfter).
	reserveAfter float64
	starveAfter  time.Duration
	// Acting and recording.
	output string
	apply  bool
	qrun   string
	// recheckAfter is --recheck-after.
	recheckAfter time.Duration
	// qrunAsync is --qrun-async, keepQstatDelay --keep-qstat-delay.
	qrunAsync, keepQstatDelay bool
	lockPath                  string
	logPath                   string
	// run only.
	interval  time.Duration
	once      bool
	cycles    int
	pidFile   string
	wakeDelay time.Duration
	// periodFromInterval: --period was not given and is --interval.
	periodFromInterval bool
	// compact is the compact-or-wait rule (--compact-wait …).
	compact compactFlags
	// built is the window solver --solver and --fallback name, built by
	// validate.
	built solver.Solver
}

// The backfill selection's defaults: no reservation by slowdown, one for
// a job that has waited 24 h — PBS's own default max_starve. Measured on
// the real server (docs/pbs.md): reserving at once (EASY) made the small
// jobs wait behind the widest and doubled the mean wait against
// pbs_sched; reserving only for starving jobs matches it.
const (
	defaultStarveAfter = 24 * time.Hour
	// defaultRecheckAfter: a cycle that decided within this of reading
	// the server acts on what it read (see cycle.Config.RecheckAfter).
	defaultRecheckAfter = 100 * time.Millisecond
)

var defaultReserveAfter = math.Inf(1)

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
                      job or a PBS periodic hook), and at once when the
                      hook of "optsched pbs wake-hook" says a job was
                      queued or ended

See docs/pbs.md for the server set-up.`,
	}
	cmd.AddCommand(newPBSPlanCmd(s, nil), newPBSRunCmd(s, nil), newPBSWakeHookCmd(s))
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
	f.StringVar(&o.fallback, "fallback", "sa", fallbackHelp)
	f.StringVar(&o.selection, "selection", pbsched.SelectionBackfill, "which queued jobs start: backfill (jobs start in order whenever they fit; the first that does not fit gets a reservation once it starves, see --starve-after and --reserve-after, and the jobs behind it then start only when they do not delay it) or lan2023 (the paper's window selection: stop at the first job that does not fit)")
	f.StringVar(&o.order, "order", "", "the order queued jobs are considered in: sjf (the default; shortest requested walltime first, then fifo; a job without a walltime counts a year; lower bounded slowdowns than pbs_sched on every replayed slice, docs/pbs.md) or fifo (more waiting periods first, then fewer chunks, then qstat order; the default under --selection lan2023)")
	f.Float64Var(&o.reserveAfter, "reserve-after", defaultReserveAfter, "backfill: the first job that does not fit gets a reservation once its bounded slowdown so far, (wait + walltime)/max(walltime, 10s), reaches this (1: at once, EASY; +Inf: never by slowdown)")
	f.DurationVar(&o.starveAfter, "starve-after", defaultStarveAfter, "backfill: ... or once it has waited this long (PBS's max_starve; 0: never by wait); until then the jobs behind it start whenever they fit")
	o.compact.add(f, "switch (a tier1 quad on the test server)", "backfill selection only; it holds the cycle's reservation, on that switch's vnodes", pbsCompactDefaults)
	f.StringVar(&o.partial, "partial", pbsched.PartialCP, "placement of the jobs whose chunks share vnodes: cp (CP/SAT time-and-resource schedule, list schedule and first fit as fallbacks) or first-fit")
	f.BoolVar(&o.apply, "apply", false, "run the qrun commands (default: a dry run that only prints them)")
	f.StringVar(&o.qrun, "qrun", "", "qrun binary (default: qrun found on PATH)")
	f.BoolVar(&o.qrunAsync, "qrun-async", false, "with --apply: run qrun -a, as pbs_sched's own run requests: it returns once the request is sent, 20-40 ms sooner per start on a test server, but the server sends no reply, so a start it refuses (a job deleted meanwhile, a vnode gone) is not seen until the next cycle and the audit log records exit 0 (default: plain qrun, whose failures are reported)")
	f.BoolVar(&o.keepQstatDelay, "keep-qstat-delay", false, "leave qstat's pacing alone: OpenPBS's qstat sleeps 200 ms when the same user ran qstat in the same second (/var/tmp/.pbs_last_query_UID), which a cycle meets on most reads; by default the cycle removes that empty file before each qstat")
	f.DurationVar(&o.recheckAfter, "recheck-after", defaultRecheckAfter, "with --apply: read the server's state again before qrun only when deciding took longer than this since it was read (0: always; a state from files is always read again)")
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
  qrun -H "(vnodeA:ncpus=16)+(vnodeB:ncpus=16)" -- JOBID
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
	f.StringVar(&o.pidFile, "pid-file", "", "write the daemon's pid here while it runs, for the wake-up hook (optsched pbs wake-hook); SIGUSR1 starts the next cycle early")
	f.DurationVar(&o.wakeDelay, "wake-delay", cycle.DefaultWakeDelay, "after a SIGUSR1 wake-up, wait this long before the cycle (gathers a burst of submissions into one cycle)")
	f.StringVarP(&o.output, "output", "o", "summary", "per-cycle output on stdout: summary (one line), json (one line per cycle) or script")
	return cmd
}

// wholeNodeSolvers are the solvers of the catalogue that solve the
// whole-node window (not the cp model).
func wholeNodeSolvers() []string { return catalog.WholeNodeNames() }

// validate checks the flags that do not need the state, and builds the
// window solver.
func (o *pbsOptions) validate() error {
	if o.timeLimit <= 0 {
		return usageError{fmt.Errorf("--time-limit must be positive, got %v", o.timeLimit)}
	}
	if o.order != "" && o.order != pbsched.OrderFIFO && o.order != pbsched.OrderSJF {
		return usageError{fmt.Errorf("--order must be fifo or sjf, got %q", o.order)}
	}
	if o.selection != pbsched.SelectionBackfill && o.selection != pbsched.SelectionLan2023 {
		return usageError{fmt.Errorf("--selection must be backfill or lan2023, got %q", o.selection)}
	}
	if !(o.reserveAfter >= 1) {
		return usageError{fmt.Errorf("--reserve-after must be at least 1 (or +Inf), got %v", o.reserveAfter)}
	}
	if o.starveAfter < 0 {
		return usageError{fmt.Errorf("--starve-after must not be negative, got %v", o.starveAfter)}
	}
	if err := o.compact.validate(); err != nil {
		return err
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
	if o.recheckAfter < 0 {
		return usageError{fmt.Errorf("--recheck-after must not be negative, got %v", o.recheckAfter)}
	}
	var err error
	o.built, err = cycleSolver(o.solver, o.fallback, func(ne *catalog.NameError) error {
		if !ne.Known() {
			return usageError{fmt.Errorf("--solver must be one of the whole-node window solvers (%s), got %q", strings.Join(wholeNodeSolvers(), ", "), o.solver)}
		}
		return usageError{fmt.Errorf("--solver %s schedules the time-and-resource (cp) model; the whole-node window takes %s, and the partial-node jobs go to the cp scheduler with --partial cp", o.solver, strings.Join(wholeNodeSolvers(), ", "))}
	})
	if err != nil {
		return err
	}
	if o.qstatFile == "-" && o.nodesFile == "-" {
		return usageError{errors.New("--qstat and --pbsnodes cannot both read stdin")}
	}
	if o.queuesFile == "-" && (o.qstatFile == "-" || o.nodesFile == "-") {
		return usageError{errors.New("only one of --qstat, --pbsnodes and --queues can read stdin")}
	}
	return nil
}

// config builds the cycle's configuration from the flags.
func (o *pbsOptions) config() *cycle.Config {
	c := &cycle.Config{
		QstatFile: o.qstatFile, NodesFile: o.nodesFile, QueuesFile: o.queuesFile, Snapshot: o.snapshot,
		Stdin: o.streams.in, Timezone: o.timezone,
		ExecQueues: o.execQueues, Nodes: o.nodes, Levels: o.levels, TopologyConf: o.topologyConf, Period: o.period,
		Decide: pbsched.Options{TimeLimit: o.timeLimit, MaxJobs: o.maxJobs, Cost: o.cost, Partial: o.partial, Selection: o.selection, Order: o.order, ReserveAfter: o.reserveAfter, StarveAfter: o.starveAfter, CompactWait: o.compact.rule(),
			Solver: o.built, Fallbacks: catalog.WindowFallbacks(), Schedulers: catalog.PartialSchedulers()},
		Apply: o.apply, Qrun: o.qrun, QrunAsync: o.qrunAsync, KeepQstatDelay: o.keepQstatDelay,
		LockPath: o.lockPath, LogPath: o.logPath, RecheckAfter: o.recheckAfter,
		Interval: o.interval, Cycles: o.cycles, Messages: o.streams.err,
		PIDFile: o.pidFile, WakeDelay: o.wakeDelay,
	}
	if o.wakeDelay == 0 {
		c.WakeDelay = -1 // at once
	}
	if o.once {
		c.Cycles = 1
	}
	return c
}

// commandError makes a cycle's configuration errors (PBS's or Slurm's)
// usage errors (exit 2), keeping their messages.
func commandError(err error) error {
	var pe cycle.ConfigError
	var se slurmcycle.ConfigError
	if errors.As(err, &pe) || errors.As(err, &se) {
		return usageError{err}
	}
	return err
}

// runPBSPlan runs plan's one cycle and prints its plan: when the cycle
// decided one and it either passed or was (partly) applied.
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
	c := o.config()
	p, out, err := c.Plan(ctx)
	if p != nil && (err == nil || out.Applied()) {
		if werr := o.writePlan(c, p, out); werr != nil {
			return werr
		}
	}
	return commandError(err)
}

// writePlan prints a plan and what Apply did with it (ao; nil when it
// did not run) in the chosen output.
func (o *pbsOptions) writePlan(c *cycle.Config, p *pbsched.Plan, ao *pbsched.Outcome) error {
	out := o.streams.out
	switch o.output {
	case "json":
		return writeJSON(out, p.Doc(c.QrunName(), !o.apply, ao))
	case "summary":
		_, err := fmt.Fprintln(out, p.Summary(o.apply, ao))
		return err
	}
	return p.WriteScript(out, c.QrunName(), o.apply, ao)
}

// runPBSDaemon repeats cycles every interval until the context ends or a
// signal comes, the cycle count is reached, or (with --once) after one
// cycle, printing each cycle's plan and error.
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
	if o.wakeDelay < 0 || o.wakeDelay > o.interval {
		return usageError{fmt.Errorf("--wake-delay must be between 0 and --interval (%v), got %v", o.interval, o.wakeDelay)}
	}
	if o.pidFile != "" && !filepath.IsAbs(o.pidFile) {
		return usageError{fmt.Errorf("--pid-file must be an absolute path (the hook reads it from the server's folder), got %q", o.pidFile)}
	}
	c := o.config()
	return commandError(c.Loop(ctx, func(n int, p *pbsched.Plan, ao *pbsched.Outcome, err error) error {
		if p != nil {
			if o.output == "json" {
				line, _ := json.Marshal(p.Doc(c.QrunName(), !o.apply, ao))
				fmt.Fprintln(o.streams.out, string(line))
			} else if werr := o.writePlan(c, p, ao); werr != nil {
				return werr
			}
		}
		return cycleFailed(o.once, o.streams.err, n, err)
	}))
}

func newPBSWakeHookCmd(s *streams) *cobra.Command {
	var pidFile string
	cmd := &cobra.Command{
		Use:   "wake-hook",
		Short: "Print a PBS server hook that wakes `optsched pbs run` when a job is queued or ends",
		Long: `wake-hook prints a PBS server hook (Python, events postqueuejob and jobobit)
that sends SIGUSR1 to the "optsched pbs run --pid-file FILE" running on the
server's host, so that a cycle follows each submission and each job's end
within --wake-delay instead of at the next --interval: the reaction time of
pbs_sched, which the server wakes on the same events. The hook checks that
the pid is an optsched process and always accepts the event. Install it as
root on the server host:

  optsched pbs wake-hook --pid-file /run/optsched/pbs.pid > optsched_wake.py
  qmgr -c "create hook optsched_wake"
  qmgr -c "set hook optsched_wake event = 'postqueuejob,jobobit'"
  qmgr -c "import hook optsched_wake application/x-python default optsched_wake.py"
  optsched pbs run --apply --pid-file /run/optsched/pbs.pid ...

and remove it with qmgr -c "delete hook optsched_wake".`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pidFile == "" {
				return usageError{errors.New("--pid-file is required: the path that optsched pbs run --pid-file writes")}
			}
			h, err := cycle.WakeHook(pidFile)
			if err != nil {
				return usageError{fmt.Errorf("--pid-file: %w", err)}
			}
			_, err = io.WriteString(s.out, h)
			return err
		},
	}
	cmd.Flags().StringVar(&pidFile, "pid-file", "", "the pid file of optsched pbs run --pid-file (absolute path)")
	return cmd
}

// fallbackHelp is the --fallback of the schedulers' whole-node window
// (pbs and slurm): the catalogue's list.
var fallbackHelp = "heuristic that takes over when the exact solver runs out of time: " + strings.Join(catalog.Fallbacks, ", ")

// cycleSolver checks and builds the whole-node window solver of the
// schedulers (pbs and slurm) that --solver and --fallback name, before
// any input is read: catalog.Validate, its *catalog.NameError worded by
// badName. A --fallback given empty is refused: the flag's default is
// sa, and "" is no value of it.
func cycleSolver(name, fallback string, badName func(*catalog.NameError) error) (solver.Solver, error) {
	if fallback == "" {
		return nil, usageError{fmt.Errorf("--fallback must be one of %s, got \"\"", strings.Join(catalog.Fallbacks, ", "))}
	}
	spec := catalog.Spec{Name: name, Model: catalog.WholeNode, Options: catalog.Options{Formulation: scas.Strong, Seed: 1, Fallback: fallback}}
	if err := catalog.Validate(spec); err != nil {
		var ne *catalog.NameError
		if errors.As(err, &ne) {
			return nil, badName(ne)
		}
		return nil, flagError(err)
	}
	return spec.Solver()
}

// cycleFailed is what a `run` loop (pbs and slurm) does with a cycle's
// error: with --once it ends the loop with it; otherwise it is written to
// w and the loop goes on.
func cycleFailed(once bool, w io.Writer, n int, err error) error {
	if err == nil || once {
		return err
	}
	fmt.Fprintf(w, "optsched: cycle %d: %v\n", n, err)
	return nil
}
