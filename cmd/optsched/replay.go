package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	breplay "github.com/optsched/optsched/bench/replay"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/pbsched"
	preplay "github.com/optsched/optsched/pbsched/replay"
	sreplay "github.com/optsched/optsched/slurmsched/replay"
)

// replayOptions are the inputs of `optsched replay`.
type replayOptions struct {
	streams      *streams
	server       string
	trace        string
	from, jobs   int
	speedup      float64
	pad          time.Duration
	nodes        int
	ncpus        int
	maxProcs     int
	timeout      time.Duration
	poll         time.Duration
	testServer   bool
	runID        string
	user         string
	queue        string
	levels       []string
	levelsSet    bool
	topologyConf string
	cost         string
	output       string
	jsonOut      string
	quiet        bool
	// backend replaces the server's back end (tests); clock the real clock.
	backend breplay.Backend
	clock   breplay.Clock
}

// errNotTestServer is the refusal without --test-server.
var errNotTestServer = errors.New("replay submits real jobs (sleep) to the server and waits for them; on a production server they would take nodes from real work and show up in its accounting: run it only on a test server, and say so with --test-server")

func newReplayCmd(s *streams, runF func(*replayOptions) error) *cobra.Command {
	opts := &replayOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "replay --server pbs|slurm --trace FILE --from K --jobs N --speedup S --test-server",
		Short: "Submit a time-compressed slice of an SWF log to a real (test) server and measure its scheduler",
		Long: `Replay submits jobs K..K+N−1 of a Standard Workload Format log (in submit
order, 0-based) to a real batch server as its users would, time-compressed by
--speedup S: job k is submitted (submit_k − submit_K)/S seconds after the
first, as 'sleep round(run_k/S)' asking for a walltime of ⌈request_k/S⌉ +
--walltime-pad (request: the log's requested time, or its run time when
unknown) on C whole nodes. The processors become chunks by
C = ⌈processors × V / MaxProcs⌉ (1..V), V the server's nodes with CPUs (or
--nodes), MaxProcs the log header's (or --max-procs), P the nodes' CPUs (or
--ncpus-per-chunk); the mapping used is printed.

The back ends (--server), which share the schedule, the waiting and the
metrics:
  pbs    OpenPBS / PBS Professional: qsub -l select=C:ncpus=P -l place=excl
         -l walltime=W; records from qstat -fx -F json (qtime, stime,
         obittime, resources_used.walltime, exec_vnode, Exit_status,
         run_count); vnodes and topology from pbsnodes -av -F json (the
         tier0/tier1 resources, as 'optsched pbs' reads them).
  slurm  Slurm: sbatch --nodes=C --exclusive --time=W --wrap '/bin/sleep S'
         (Slurm rounds W up to whole minutes); records from squeue --json,
         which lists finished jobs for slurmctld's MinJobAge (submit_time,
         start_time, end_time, nodes, exit_code, restart_cnt; the run is
         end − start); nodes from sinfo --json and the switch tree from
         scontrol show topology, as 'optsched slurm' reads them.

It waits until every job it submitted has finished, then computes from the
server's own records: per job the wait (start − queued), the run (at least
1 s), the bounded slowdown max(1, (wait + run)/max(run, 10 s)) and the CH
cost of its node set (lan-code, on the server's topology); and the jobs
that ran, failed (exit status not 0, or a Slurm state other than COMPLETED)
or never ran, the mean and largest wait and bounded slowdown, the makespan
(first queued to last end), the utilisation (node-seconds used / (nodes ×
makespan)) and the mean CH cost of the multi-node jobs.

Its jobs are named ors-<run-id>-<k>. It deletes only jobs it submitted (the
ids qsub or sbatch returned): on --timeout, on Ctrl-C or SIGTERM, or when a
submission fails, it qdels (scancels) its unfinished jobs and exits 1. It
refuses to run without --test-server: it loads the server with real jobs.`,
		Example: `  optsched replay --server pbs --test-server --user pbsuser \
    --trace instances/traces/KTH-SP2-1996-2.1-cln.swf.gz --from 4500 --jobs 80 --speedup 588
  optsched replay --server slurm --test-server --user slurmuser \
    --trace instances/traces/KTH-SP2-1996-2.1-cln.swf.gz --from 4500 --jobs 80 --speedup 588
  optsched replay --server pbs --test-server --trace log.swf --jobs 10 --speedup 1000 -o json --json run.json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.levelsSet = cmd.Flags().Changed("topology-levels")
			if runF != nil {
				return runF(opts)
			}
			return runReplay(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.server, "server", "pbs", "server kind: pbs (OpenPBS / PBS Professional) or slurm")
	f.StringVar(&opts.trace, "trace", "", "SWF log, gzip accepted (required)")
	f.IntVar(&opts.from, "from", 0, "first job to replay, K (0-based, in submit order)")
	f.IntVar(&opts.jobs, "jobs", 0, "number of jobs to replay, N (required)")
	f.Float64Var(&opts.speedup, "speedup", 1, "divide the log's times by S")
	f.DurationVar(&opts.pad, "walltime-pad", 10*time.Second, "added to every compressed walltime request (whole seconds)")
	f.IntVar(&opts.nodes, "nodes", 0, "nodes the log's machine maps onto, V (default: the server's (v)nodes with CPUs)")
	f.IntVar(&opts.ncpus, "ncpus-per-chunk", 0, "CPUs of each chunk (default: the nodes' CPUs, the smallest if they differ)")
	f.IntVar(&opts.maxProcs, "max-procs", 0, "processors of the log's machine (default: the header's MaxProcs, else MaxNodes, else the largest job)")
	f.DurationVar(&opts.timeout, "timeout", 0, "give up (deleting this run's jobs) after this long (default: the last submission + every walltime in turn + 2m)")
	f.DurationVar(&opts.poll, "poll", 2*time.Second, "how often the records are read while waiting")
	f.BoolVar(&opts.testServer, "test-server", false, "confirm that the server is a test server (required)")
	f.StringVar(&opts.runID, "run-id", "", "names the jobs ors-<run-id>-<k> (default: from the clock)")
	f.StringVar(&opts.user, "user", "", "submit as this user (runuser -u USER; needs root) instead of oneself")
	f.StringVar(&opts.queue, "queue", "", "submit to this PBS queue or Slurm partition (default: the server's default; with slurm only the partition's nodes count)")
	f.StringSliceVar(&opts.levels, "topology-levels", []string{"tier0", "tier1"}, "pbs: vnode resources naming switch levels, for the CH cost")
	f.StringVar(&opts.topologyConf, "topology-conf", "", "topology.conf mapping node names to switches, for the CH cost (pbs: instead of --topology-levels; slurm: instead of scontrol show topology)")
	f.StringVar(&opts.cost, "cost", "lan-code", "CH cost model: lan-code or lan-paper")
	f.StringVarP(&opts.output, "output", "o", "", "output format: table or json (default: table on a terminal, JSON otherwise)")
	f.StringVar(&opts.jsonOut, "json", "", "also write the JSON report to this file")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no progress lines on stderr")
	return cmd
}

// checkReplayFlags checks what needs no file and no server.
func checkReplayFlags(o *replayOptions) error {
	switch {
	case !o.testServer:
		return usageError{errNotTestServer}
	case o.server != "pbs" && o.server != "slurm":
		return usageError{fmt.Errorf("--server %q: the back ends are pbs and slurm", o.server)}
	case o.server == "slurm" && o.levelsSet:
		return usageError{errors.New("--topology-levels is for pbs: Slurm's tree comes from scontrol show topology, or --topology-conf")}
	case o.trace == "":
		return usageError{errors.New("--trace FILE is required")}
	case o.jobs < 1:
		return usageError{fmt.Errorf("--jobs %d: give the number of jobs to replay (at least 1)", o.jobs)}
	case o.from < 0:
		return usageError{fmt.Errorf("--from %d is negative", o.from)}
	case !(o.speedup > 0) || math.IsInf(o.speedup, 0):
		return usageError{fmt.Errorf("--speedup %v must be positive", o.speedup)}
	case o.pad < 0 || o.pad%time.Second != 0:
		return usageError{fmt.Errorf("--walltime-pad %v must be whole seconds, not negative", o.pad)}
	case o.nodes < 0 || o.ncpus < 0 || o.maxProcs < 0:
		return usageError{errors.New("--nodes, --ncpus-per-chunk and --max-procs must not be negative")}
	case o.timeout < 0 || o.poll <= 0:
		return usageError{errors.New("--timeout must not be negative and --poll must be positive")}
	}
	if _, err := model.ParseCostKind(o.cost); err != nil {
		return usageError{fmt.Errorf("--cost: %w", err)}
	}
	_, err := outputFormat(o.output, o.streams)
	return err
}

func runReplay(ctx context.Context, o *replayOptions) error {
	if err := checkReplayFlags(o); err != nil {
		return err
	}
	format, _ := outputFormat(o.output, o.streams)
	kind, _ := model.ParseCostKind(o.cost)
	cost := model.CostModel{Kind: kind, HopCost: model.DefaultHopCost}
	tr, maxProcs, err := breplay.OpenTrace(o.trace)
	if err != nil {
		return err
	}
	if o.maxProcs > 0 {
		maxProcs = o.maxProcs
	}
	if o.from+o.jobs > len(tr.Jobs) {
		return usageError{fmt.Errorf("--from %d --jobs %d: the log has %d jobs (0..%d)", o.from, o.jobs, len(tr.Jobs), len(tr.Jobs)-1)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := o.backend
	if b == nil {
		switch o.server {
		case "slurm":
			b = &sreplay.Server{User: o.user, Partition: o.queue, TopologyConf: o.topologyConf}
		default:
			b = &preplay.Server{User: o.user, Queue: o.queue, Scope: pbsched.Scope{Levels: o.levels, TopologyConf: o.topologyConf}}
		}
	}
	cl, err := b.Cluster(ctx)
	if err != nil {
		return err
	}
	m := breplay.Mapping{Nodes: o.nodes, MaxProcs: maxProcs, NCPUs: o.ncpus}
	if m.Nodes == 0 {
		m.Nodes = len(cl.Nodes)
	}
	if m.NCPUs == 0 && len(cl.NCPUs) > 0 {
		m.NCPUs = slices.Min(cl.NCPUs)
	}
	if o.runID == "" {
		o.runID = strconv.FormatInt(time.Now().UnixMilli(), 36)
	}
	jobs, err := breplay.Plan(tr.Jobs, breplay.Settings{From: o.from, N: o.jobs, Speedup: o.speedup, Pad: int64(o.pad / time.Second), RunID: o.runID, Mapping: m})
	if err != nil {
		return usageError{err}
	}
	timeout := o.timeout
	if timeout == 0 {
		var sum int64
		for _, j := range jobs {
			sum += j.Walltime
		}
		timeout = jobs[len(jobs)-1].At + time.Duration(sum)*time.Second + 2*time.Minute
	}
	say := func(format string, args ...any) {
		if !o.quiet {
			fmt.Fprintf(o.streams.err, "replay: "+format+"\n", args...)
		}
	}
	say("%d jobs of %s (%d..%d) at speedup %g on %s, %d nodes; run %s, timeout %v", len(jobs), o.trace, o.from, o.from+o.jobs-1, o.speedup, cl.Server, len(cl.Nodes), o.runID, timeout)
	say("mapping: %s", m)
	began := time.Now()
	out, runErr := breplay.Run(ctx, b, jobs, breplay.Options{Clock: o.clock, Poll: o.poll, Timeout: timeout, Progress: say})
	rep := &breplay.Report{Backend: o.server, Server: cl.Server, RunID: o.runID, Trace: o.trace, From: o.from, N: o.jobs,
		Speedup: o.speedup, WalltimePad: int64(o.pad / time.Second), Mapping: m.Doc(), Topology: cl.TopologyNote, Cost: o.cost,
		Elapsed: time.Since(began).Seconds(), Deleted: []string{}}
	if out != nil {
		if out.Deleted != nil {
			rep.Deleted = out.Deleted
		}
		var cerr error
		rep.Jobs, rep.Summary, cerr = breplay.Compute(out.Submitted, out.Records, cl, cost)
		if cerr != nil {
			return errors.Join(runErr, cerr)
		}
	}
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	if o.jsonOut != "" {
		if err := writeJSONFile(o.jsonOut, rep); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if format == "json" {
		err = writeJSON(o.streams.out, rep)
	} else {
		err = rep.WriteTable(o.streams.out)
	}
	return errors.Join(runErr, err)
}
