package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/slurmsched"
	"github.com/optsched/optsched/slurmsched/cycle"
	"github.com/optsched/optsched/solver"
)

// slurmOptions are the inputs of `optsched slurm plan` and `optsched
// slurm run`.
type slurmOptions struct {
	streams                                    *streams
	squeueFile, sinfoFile, topoFile, topoConf  string
	partitions                                 []string
	nodes                                      string
	solver, fallback                           string
	timeLimit, starveAfter                     time.Duration
	compact                                    compactFlags
	output                                     string
	apply                                      bool
	scontrol, squeue, sinfo, lockPath, logPath string
	interval                                   time.Duration
	once                                       bool
	cycles                                     int
	pidFile                                    string
	wakeDelay                                  time.Duration
	// now is plan's --now, at its parsed value (zero: the time of
	// reading).
	now string
	at  time.Time
	// built is the window solver --solver and --fallback name, built by
	// validate.
	built solver.Solver
}

func newSlurmCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slurm",
		Short: "Schedule a Slurm cluster: read squeue/sinfo, solve the window, place and release held jobs",
		Long: `optsched slurm acts as an external scheduler for a Slurm cluster whose jobs
are all held at submission by optsched's job_submit/lua hold guard
(optsched slurm hold-guard prints it). It reads the cluster (squeue --json,
sinfo --json, scontrol show topology), decides which held jobs start now and
where, checks the plan independently, and starts each job by
  scontrol update JobId=J ReqNodeList=NODES NumNodes=k-k
then reads the job back and releases the jobs placed right with one
scontrol release.

  optsched slurm plan        one cycle; prints the plan (a dry run) or,
                             with --apply, acts
  optsched slurm run         repeats the cycle every --interval
  optsched slurm hold-guard  prints the job_submit.lua hold guard

See docs/slurm.md for the set-up.`,
	}
	cmd.AddCommand(newSlurmPlanCmd(s, nil), newSlurmRunCmd(s, nil), newSlurmGuardCmd(s))
	return cmd
}

func (o *slurmOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.squeueFile, "squeue", "", "file with `squeue --json` output (default: run squeue --json)")
	f.StringVar(&o.sinfoFile, "sinfo", "", "file with `sinfo --json` output (default: run sinfo --json)")
	f.StringVar(&o.topoFile, "topology", "", "file with `scontrol show topology` output (default: run it)")
	f.StringVar(&o.topoConf, "topology-conf", "", "a topology.conf to use instead of scontrol show topology")
	f.StringSliceVar(&o.partitions, "partitions", nil, "schedule only the held jobs of these partitions (default: every partition)")
	f.StringVar(&o.nodes, "nodes", "", "nodes optsched may start jobs on, a hostlist such as 'n[01-16]' (default: every node)")
	f.StringVar(&o.solver, "solver", "csp", "whole-node window solver ("+strings.Join(catalog.WholeNodeNames(), ", ")+"); Slurm's tree best fit takes over when it fails")
	f.StringVar(&o.fallback, "fallback", "sa", fallbackHelp)
	f.DurationVar(&o.timeLimit, "time-limit", 5*time.Second, "time limit of the whole-node window solve")
	o.compact.add(f, "leaf switch", "its idle nodes there go to no other job that cycle", slurmCompactDefaults)
	f.DurationVar(&o.starveAfter, "starve-after", 24*time.Hour, "once the first job that does not fit now has waited this long, the jobs behind it wait too, so that its nodes drain (0: never)")
	f.BoolVar(&o.apply, "apply", false, "act: place and release the jobs (default: a dry run that only prints the plan)")
	f.StringVar(&o.scontrol, "scontrol", "", "scontrol binary (default: scontrol on PATH)")
	f.StringVar(&o.squeue, "squeue-cmd", "", "squeue binary (default: squeue on PATH)")
	f.StringVar(&o.sinfo, "sinfo-cmd", "", "sinfo binary (default: sinfo on PATH)")
	f.StringVar(&o.lockPath, "lock", "", "lock file that keeps cycles one at a time (default: $XDG_STATE_HOME/optsched/slurm.lock, or ~/.local/state/optsched/slurm.lock)")
	f.StringVar(&o.logPath, "log", "", "JSON-lines audit log, one line per cycle (default: slurm-audit.jsonl beside the lock)")
}

func (o *slurmOptions) validate() error {
	if o.timeLimit <= 0 {
		return usageError{fmt.Errorf("--time-limit must be positive, got %v", o.timeLimit)}
	}
	if o.starveAfter < 0 {
		return usageError{fmt.Errorf("--starve-after must not be negative, got %v", o.starveAfter)}
	}
	if err := o.compact.validate(); err != nil {
		return err
	}
	var err error
	o.built, err = cycleSolver(o.solver, o.fallback, func(*catalog.NameError) error {
		return usageError{fmt.Errorf("--solver must be one of the whole-node window solvers (%s), got %q", strings.Join(catalog.WholeNodeNames(), ", "), o.solver)}
	})
	if err != nil {
		return err
	}
	if o.topoFile != "" && o.topoConf != "" {
		return usageError{errors.New("give --topology or --topology-conf, not both")}
	}
	if o.now != "" {
		if o.apply {
			return usageError{errors.New("--now plans a snapshot as of its time; it cannot be used with --apply, which acts on the cluster as it is now")}
		}
		at, err := parseNow(o.now)
		if err != nil {
			return usageError{fmt.Errorf("--now: %w", err)}
		}
		o.at = at
	}
	return nil
}

// parseNow reads --now: RFC 3339, or Unix seconds (what squeue --json's
// times are).
func parseNow(s string) (time.Time, error) {
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
		if secs <= 0 {
			return time.Time{}, fmt.Errorf("Unix seconds must be positive, got %d", secs)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want RFC 3339 (2026-11-26T20:00:00Z) or Unix seconds, got %q", s)
	}
	return t, nil
}

func (o *slurmOptions) config() *cycle.Config {
	c := &cycle.Config{
		SqueueFile: o.squeueFile, SinfoFile: o.sinfoFile, TopologyFile: o.topoFile, TopologyConf: o.topoConf, At: o.at,
		Partitions: o.partitions, Nodes: o.nodes, Solver: o.built, TimeLimit: o.timeLimit, StarveAfter: o.starveAfter, CompactWait: o.compact.rule(),
		Apply: o.apply, Scontrol: o.scontrol, Squeue: o.squeue, Sinfo: o.sinfo, LockPath: o.lockPath, LogPath: o.logPath,
		Interval: o.interval, Cycles: o.cycles, PIDFile: o.pidFile, WakeDelay: o.wakeDelay, Messages: o.streams.err,
	}
	if o.once {
		c.Cycles = 1
	}
	return c
}

// writePlan prints a plan and what Apply did with it (ao; nil when it
// did not run) in the chosen output.
func (o *slurmOptions) writePlan(p *slurmsched.Plan, ao *slurmsched.Outcome) error {
	switch o.output {
	case "json":
		return p.WriteJSON(o.streams.out, false, ao)
	case "json-line":
		return p.WriteJSON(o.streams.out, true, ao)
	case "summary":
		_, err := fmt.Fprintln(o.streams.out, p.Summary(ao))
		return err
	}
	return p.WriteText(o.streams.out, o.apply, ao)
}

func newSlurmPlanCmd(s *streams, runF func(*slurmOptions) error) *cobra.Command {
	o := &slurmOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Decide one cycle and print the plan (or act on it with --apply)",
		Long: `plan reads the cluster once and decides which held jobs start now and where.

Whole-node jobs (--exclusive, or jobs that need every CPU of a node) go
through the topology-aware window solve on the idle nodes; jobs that share
nodes are placed by a first fit on the free CPUs and memory. The plan is
checked against the state by rules that share no code with the planner
before anything acts. Without --apply nothing changes: the text output is a
list of decisions, not commands. --apply reads the state again, drops the
starts that no longer hold, places and releases the others, takes the lock
and appends the cycle to the audit log.

Exit codes: 0 planned (or applied), 1 bad input, unsafe plan or a failed
scontrol, 2 usage.`,
		Example: `  optsched slurm plan --squeue squeue.json --sinfo sinfo.json --topology-conf topology.conf
  optsched slurm plan --apply --partitions batch`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return runSlurmPlan(cmd.Context(), o)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output: text or json")
	cmd.Flags().StringVar(&o.now, "now", "", "plan as of this time, for a snapshot read from files (--squeue, --sinfo): RFC 3339 (2026-11-26T20:00:00Z) or Unix seconds; squeue --json carries no time of its own, so waits and predicted ends are otherwise counted to the time of reading (not with --apply)")
	return cmd
}

func newSlurmRunCmd(s *streams, runF func(*slurmOptions) error) *cobra.Command {
	o := &slurmOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Repeat the cycle as an external scheduler daemon (--once for one cycle)",
		Long: `run repeats plan's cycle every --interval, each under the lock and logged.
A cycle that fails is logged and reported on stderr and the next one runs;
with --once the failure is the exit status. SIGUSR1 starts the next cycle
--wake-delay after it. SIGINT or SIGTERM stops the daemon after the cycle in
flight; a second signal aborts that cycle (nothing more is placed and
nothing is released: the jobs stay held).`,
		Example: `  optsched slurm run --apply --interval 5s --partitions batch`,
		Args:    argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return runSlurmDaemon(cmd.Context(), o)
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.DurationVar(&o.interval, "interval", 5*time.Second, "time between the starts of two cycles")
	f.BoolVar(&o.once, "once", false, "run one cycle and exit with its status")
	f.IntVar(&o.cycles, "cycles", 0, "stop after this many cycles; 0 = until signalled")
	f.StringVar(&o.pidFile, "pid-file", "", "write the daemon's pid here while it runs; SIGUSR1 starts the next cycle early")
	f.DurationVar(&o.wakeDelay, "wake-delay", 200*time.Millisecond, "after a SIGUSR1 wake-up, wait this long before the cycle")
	f.StringVarP(&o.output, "output", "o", "summary", "per-cycle output on stdout: summary, json-line or text")
	return cmd
}

// runSlurmPlan is `optsched slurm plan`: the flags checked and the
// window solver built before anything is read, one cycle, its plan
// printed.
func runSlurmPlan(ctx context.Context, o *slurmOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	switch o.output {
	case "text", "json":
	default:
		return usageError{fmt.Errorf("-o must be text or json, got %q", o.output)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	p, ao, err := o.config().Plan(ctx)
	if p != nil {
		if werr := o.writePlan(p, ao); werr != nil {
			return werr
		}
	}
	return commandError(err)
}

// runSlurmDaemon is `optsched slurm run`: the flags checked and the
// window solver built before anything is read, then the cycles, each
// plan printed and each failure reported (with --once, the exit status).
func runSlurmDaemon(ctx context.Context, o *slurmOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	switch o.output {
	case "summary", "json-line", "text":
	default:
		return usageError{fmt.Errorf("-o must be summary, json-line or text, got %q", o.output)}
	}
	if o.interval < 100*time.Millisecond && !o.once {
		return usageError{fmt.Errorf("--interval must be at least 100ms, got %v", o.interval)}
	}
	if o.cycles < 0 {
		return usageError{fmt.Errorf("--cycles must be at least 0, got %d", o.cycles)}
	}
	if o.pidFile != "" && !filepath.IsAbs(o.pidFile) {
		return usageError{fmt.Errorf("--pid-file must be an absolute path, got %q", o.pidFile)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return commandError(o.config().Loop(ctx, func(n int, p *slurmsched.Plan, ao *slurmsched.Outcome, err error) error {
		if p != nil {
			if werr := o.writePlan(p, ao); werr != nil {
				return werr
			}
		}
		return cycleFailed(o.once, o.streams.err, n, err)
	}))
}

func newSlurmGuardCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "hold-guard",
		Short: "Print the job_submit.lua that holds every new job for optsched",
		Long: `hold-guard prints optsched's job_submit/lua plug-in: every new job is held
(priority 0) so that only optsched starts jobs, and a user's release,
priority or nice change is refused. Install it beside slurm.conf:

  optsched slurm hold-guard > /etc/slurm/job_submit.lua
  # slurm.conf: JobSubmitPlugins=lua
  scontrol reconfigure`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := io.WriteString(s.out, slurmsched.HoldGuard)
			return err
		},
	}
}
