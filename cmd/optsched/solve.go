package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/output"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/free"
)

// solveOptions are the inputs of `optsched solve`.
type solveOptions struct {
	streams     *streams
	window      string
	timeLimit   time.Duration
	maxJobs     int
	cost        string
	solver      string
	heuristic   string
	encoding    string
	formulation string
	verbose     bool
	output      string
	fallback    string
	seed        uint64
	sa          catalog.SAParams
	nsaWeights  string
	nsaSample   bool
	// granularity and solverSet serve the cp encoding (schedule.go).
	granularity time.Duration
	solverSet   bool
	// chWeight is --ch-weight (cp encoding, sat solver).
	chWeight float64
	// deadline is --deadline: the whole command's limit, reading
	// included (0: none); timeLimitSet whether --time-limit was given.
	deadline     time.Duration
	timeLimitSet bool
}

func newSolveCmd(s *streams, runF func(*solveOptions) error) *cobra.Command {
	opts := &solveOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "solve FILE|-",
		Short: "Solve one scheduling window and print the allocation",
		Long: `Solve reads a window (JSON, see docs/formats.md) and decides which waiting jobs
start now and on which idle nodes. Jobs are selected by waiting periods (nwp),
then size, while they fit; the multi-node jobs are placed by the chosen solver
or heuristic and the one-node jobs first-fit after them. Every allocation is
checked (model.Check) before it is printed.

An exact solver runs within the time limit minus a reserve; if it has not
proved optimality by then, the fallback (--fallback sa, warm-started from
the exact solver's incumbent) uses the reserve, and the better answer is
returned with the exact solver's bound and the gap: status "fallback" when
the heuristic supplied or improved it, "feasible" when the exact solver's
incumbent stood.

Solvers and heuristics (--solver, or --heuristic):
` + solverHelp() + `
The default is the exact csp solver. --encoding scas with --solver lpsolve
solves the M_SCAS 0-1 program; --solver clp reports its LP bound with a
rounded allocation. --encoding dcas solves the free problem, in which a job
may take any idle nodes rather than a run of the idle sequence: its optimum
(solver free) is the least total CH cost any allocator can reach, never
above the SCAS optimum it starts from.

--encoding cp reads the window as Bridi et al.'s time-and-resource model:
when and where every waiting job starts, its select's units placed on nodes
with capacities (node_resources), beside the running jobs, outside the
reservations, minimising the weighted queue time sum (start - submit) /
expected_wait. The exact sat solver (the default there) starts from the
best of the pbs-walltime and pbs-fifo list schedules and returns it as
"fallback" when it finds nothing better in time (--fallback pbs, the
default there; none: sat alone, sa and nsa being the whole-node model's); --granularity sets the
grid of the starts; --ch-weight W adds W times the CH cost of every job's
node set (the window's cost model) to that objective.

--deadline D bounds the whole command, reading the window included: when D
passes while the window is read, solve stops with exit 1 and says so,
having written nothing.

Exit codes: 0 solved, 1 error (a --deadline that passed while reading
included), 2 usage, 3 infeasible.`,
		Example: `  optsched solve instances/example-window.json
  optsched solve --max-jobs 5 -o json window.json > result.json
  optsched gen --seed 7 | optsched solve -
  optsched solve --encoding scas --solver lpsolve --formulation paper window.json
  optsched solve --encoding dcas instances/paper-s4-i500.json
  optsched solve -v --time-limit 1s big-window.json
  optsched solve --encoding cp --time-limit 1s instances/eurora-example.json`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.window = args[0]
			if !cmd.Flags().Changed("cost") {
				opts.cost = ""
			}
			if cmd.Flags().Changed("solver") && cmd.Flags().Changed("heuristic") {
				return usageError{fmt.Errorf("give --solver or --heuristic, not both")}
			}
			opts.solverSet = cmd.Flags().Changed("solver")
			opts.timeLimitSet = cmd.Flags().Changed("time-limit")
			if runF != nil {
				return runF(opts)
			}
			return runSolve(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&opts.timeLimit, "time-limit", 10*time.Second, "wall-time limit of the solve (Go duration: 500ms, 2s, 1m)")
	f.DurationVar(&opts.deadline, "deadline", 0, "wall-time limit of the whole command, reading the window and writing the answer included (for hooks); the solve gets what is left, at most --time-limit when that is given; passed while reading: exit 1, nothing written (see docs/limits.md)")
	f.IntVar(&opts.maxJobs, "max-jobs", 0, "cap on the multi-node jobs of the window; 0 = no cap (Lan et al.'s code uses 5)")
	f.StringVar(&opts.cost, "cost", "lan-code", "CH cost model, overriding the window's: lan-code or lan-paper")
	f.StringVar(&opts.solver, "solver", "csp", "solver to run ("+strings.Join(catalog.Names(), ", ")+")")
	f.StringVar(&opts.heuristic, "heuristic", "", "heuristic to run instead of a solver (seq, sa, nsa, slurm, mishra-greedy, mishra-balanced, mishra-adaptive; cp encoding: pbs-fifo, pbs-walltime)")
	f.StringVar(&opts.encoding, "encoding", "", "formulation family: csp or scas (default: the solver's own); dcas for the free problem (any node sets; solver free unless --solver says otherwise); cp for the time-and-resource model (when and where every job starts)")
	f.DurationVar(&opts.granularity, "granularity", 60*time.Second, "cp encoding: time grid of the starts (whole seconds)")
	f.Float64Var(&opts.chWeight, "ch-weight", 0, "cp encoding, sat solver: weight W of the CH cost of the jobs' node sets; the objective becomes weighted queue time + W * sum of CH costs (0: weighted queue time alone)")
	f.StringVar(&opts.formulation, "formulation", "strong", "M_SCAS program form for scas solvers: strong or paper")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "log incumbents and bounds as they improve, and the solver's statistics at the end, on stderr")
	f.StringVar(&opts.fallback, "fallback", "", "what takes over when the exact solver runs out of time: sa (the default) or nsa, warm-started from its incumbent; with --encoding cp, pbs (the default): the best PBS list schedule, also its first incumbent; none: the exact solver alone")
	f.StringVar(&opts.nsaWeights, "nsa-weights", "", "NSA: weights file of the repair policy (optsched train nsa; default: the shipped weights)")
	f.BoolVar(&opts.nsaSample, "nsa-sample", true, "NSA: draw each start from the policy (false: take the most probable start; measured worse, see docs/reproducing.md, \"Neural simulated annealing\")")
	f.Uint64Var(&opts.seed, "seed", 1, "random seed of randomised solvers (sa)")
	d := catalog.Anneal(catalog.Options{}) // [Lan23] Table I
	f.Float64Var(&opts.sa.Tmax, "sa-tmax", d.Tmax, "SA: first temperature")
	f.Float64Var(&opts.sa.Tmin, "sa-tmin", d.Tmin, "SA: last temperature")
	f.IntVar(&opts.sa.Steps, "sa-steps", d.Steps, "SA: number of moves (t_max; SA-1000 is 1000)")
	f.IntVar(&opts.sa.Destroy, "sa-destroy", d.Destroy, "SA: most jobs a move removes (n^D)")
	f.IntVar(&opts.sa.Q, "sa-q", d.Q, "SA: a reinserted job starts among the first Q positions of the idle sequence")
	f.BoolVar(&opts.sa.PaperCompat, "paper-compat", false, "SA: keep rejected moves as the published code does (a random walk remembering the best); for reproductions only")
	f.StringVarP(&opts.output, "output", "o", "", "output format: json or table (default: table on a terminal, json otherwise)")
	return cmd
}

// runSolve is `optsched solve`: the flags checked and the solver built
// before any I/O, then one path for both models (solveWith), which
// branches only on which model it calls.
func runSolve(ctx context.Context, opts *solveOptions) error {
	format, err := outputFormat(opts.output, opts.streams)
	if err != nil {
		return err
	}
	if opts.timeLimit <= 0 {
		return usageError{fmt.Errorf("--time-limit must be positive, got %v", opts.timeLimit)}
	}
	if opts.deadline < 0 {
		return usageError{fmt.Errorf("--deadline must be positive (or 0: none), got %v", opts.deadline)}
	}
	if opts.maxJobs < 0 {
		return usageError{fmt.Errorf("--max-jobs must be at least 0, got %d", opts.maxJobs)}
	}
	var cost model.CostKind
	if opts.cost != "" {
		if cost, err = model.ParseCostKind(opts.cost); err != nil {
			return usageError{fmt.Errorf("--cost: %w", err)}
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.isCP() {
		s, g, err := opts.newScheduler()
		if err != nil {
			return err
		}
		return solveWith(ctx, opts, format, cost, s, solver.Options{Granularity: g})
	}
	s, err := opts.newSolver()
	if err != nil {
		return err
	}
	return solveWith(ctx, opts, format, cost, s, solver.Options{MaxJobs: opts.maxJobs})
}

// solveWith is the path of `optsched solve` for either model: read the
// window (within --deadline), admit it to the model, set the cost model
// (cost, when --cost is given), solve it with s (solver.SolveWindow)
// within the time limit (solveLimit), write the answer and say how the
// solve ended: exit 3 when the selected jobs are proven infeasible, 1
// when no answer was found in time.
func solveWith[O solver.ObjectiveValue](ctx context.Context, opts *solveOptions, format string, cost model.CostKind, s solver.SolverOf[O], opt solver.Options) error {
	w, err := opts.load()
	if err != nil {
		return err
	}
	if err := opts.admit(w); err != nil {
		return err
	}
	if opts.cost != "" {
		w.Cost.Kind = cost
	}
	limit := opts.solveLimit(w)
	opt.TimeLimit = limit
	res, err := solver.SolveWindow(ctx, w, s, opt)
	if err != nil {
		return err
	}
	doc := output.Answer(w, res)
	if format == "json" {
		if err := writeJSON(opts.streams.out, doc); err != nil {
			return err
		}
	} else {
		output.WriteTable(opts.streams.out, w, &doc)
		if res.CHWeight > 0 && res.Status != solver.Unknown {
			fmt.Fprintf(opts.streams.out, "\nobjective = weighted queue time %s + %g x CH cost %d (%s)\n",
				output.Figure(model.WeightedQueueTime(w, res.Allocations)), res.CHWeight, solver.Objective(w, res.Allocations), w.Cost.Kind)
		}
	}
	if opts.verbose {
		output.WriteStats(opts.streams.err, &res.Stats)
	}
	what := "allocation"
	if doc.Scheduled() {
		what = "schedule"
	}
	switch res.Status {
	case solver.Infeasible:
		return infeasibleError{fmt.Errorf("the selected jobs cannot be placed")}
	case solver.Unknown:
		if res.Why != "" {
			return fmt.Errorf("no %s: %s", what, res.Why)
		}
		return fmt.Errorf("no %s found within %v", what, limit)
	}
	return nil
}

// admit checks that the window can be read in the model of the solve:
// the whole-node model cannot honour reservations, and the CH term of
// --ch-weight needs the window's topology.
func (opts *solveOptions) admit(w *model.Window) error {
	if !opts.isCP() && len(w.Reservations) > 0 {
		return usageError{fmt.Errorf("the window has reservations, which only the time-and-resource model honours: use --encoding cp")}
	}
	if opts.chWeight > 0 && w.Topology == nil {
		return fmt.Errorf("--ch-weight: the window has no topology, so its CH cost is undefined")
	}
	return nil
}

// spec returns the catalogue's Spec of the flags for the solver or
// heuristic called name (the model's default when neither flag names
// one), checked by catalog.Validate before anything is read, with the NSA
// policy read when NSA runs (as the heuristic, or as an exact solver's
// fallback). The errors are usage errors in the words of the flags:
// badName words a *catalog.NameError.
func (opts *solveOptions) spec(s catalog.Spec, badName func(*catalog.NameError) error) (catalog.Spec, error) {
	form, err := scas.ParseFormulation(opts.formulation)
	if err != nil {
		return s, usageError{fmt.Errorf("--formulation: %w", err)}
	}
	// The --sa-* flags default to Table I: a 0 is given, not the
	// catalogue's "unset".
	if !(opts.sa.Tmin > 0 && opts.sa.Tmin <= opts.sa.Tmax && !math.IsInf(opts.sa.Tmax, 0)) {
		return s, usageError{fmt.Errorf("--sa-tmin and --sa-tmax must be finite numbers with 0 < tmin <= tmax, got %g and %g", opts.sa.Tmin, opts.sa.Tmax)}
	}
	if opts.sa.Steps < 1 || opts.sa.Destroy < 1 || opts.sa.Q < 1 {
		return s, usageError{fmt.Errorf("--sa-steps, --sa-destroy and --sa-q must be at least 1")}
	}
	s.Options = catalog.Options{Formulation: form, Seed: opts.seed, SA: opts.sa, Fallback: opts.fallback, NSASample: opts.nsaSample, CHWeight: opts.chWeight}
	if opts.verbose {
		s.Progress = opts.streams.err
	}
	if err := catalog.Validate(s); err != nil {
		var ne *catalog.NameError
		if errors.As(err, &ne) {
			return s, badName(ne)
		}
		return s, flagError(err)
	}
	if s.Name == "nsa" || opts.fallback == "nsa" && opts.heuristic == "" {
		if s.NSAPolicy, err = loadPolicy("--nsa-weights", opts.nsaWeights); err != nil {
			return s, err
		}
	}
	return s, nil
}

// optionFlags are the flags of the catalogue's options.
var optionFlags = map[string]string{"Fallback": "--fallback", "CHWeight": "--ch-weight", "Encoding": "--encoding"}

// flagError makes a catalogue error a usage error, naming the flag of the
// option it is about.
func flagError(err error) error {
	var oe *catalog.OptionError
	if errors.As(err, &oe) {
		return usageError{fmt.Errorf("%s %s", optionFlags[oe.Option], oe.Reason)}
	}
	return usageError{err}
}

// name is the solver or heuristic the flags name, and the flag.
func (opts *solveOptions) name(def string) (name, flag string) {
	switch {
	case opts.heuristic != "":
		return opts.heuristic, "--heuristic"
	case opts.solverSet:
		return opts.solver, "--solver"
	}
	return def, "--solver"
}

// newSolver resolves --solver / --heuristic, --encoding and the options of
// the whole-node model, and builds the solver.
func (opts *solveOptions) newSolver() (solver.Solver, error) {
	def := opts.solver
	if opts.encoding == catalog.DCAS {
		def = free.Name // --encoding dcas alone: the exact solver of the free problem
	}
	name, flag := opts.name(def)
	s, err := opts.spec(catalog.Spec{Name: name, Model: catalog.WholeNode, Encoding: opts.encoding, Alone: opts.heuristic != ""}, func(ne *catalog.NameError) error {
		if !ne.Known() {
			return usageError{fmt.Errorf("%s: %w", flag, ne)}
		}
		return usageError{fmt.Errorf("--encoding %s: %s solves the %s encoding", opts.encoding, name, ne.Entry.Encoding)}
	})
	if err != nil {
		return nil, err
	}
	return s.Solver()
}

// newScheduler resolves --solver / --heuristic (sat by default),
// --granularity and the options of the time-and-resource model, and
// builds the scheduler.
func (opts *solveOptions) newScheduler() (solver.Scheduler, int64, error) {
	if opts.maxJobs != 0 {
		return nil, 0, usageError{fmt.Errorf("--max-jobs applies to the whole-node model; the cp encoding schedules every waiting job")}
	}
	g, err := granularity(opts.granularity)
	if err != nil {
		return nil, 0, err
	}
	name, _ := opts.name("sat")
	s, err := opts.spec(catalog.Spec{Name: name, Model: catalog.TimeResource}, func(ne *catalog.NameError) error { return usageError{ne} })
	if err != nil {
		return nil, 0, err
	}
	sc, err := s.Scheduler()
	if err != nil {
		return nil, 0, flagError(err)
	}
	return sc, g, nil
}

// isCP reports whether the solve is of the time-and-resource model:
// --encoding cp, or a solver or heuristic of that encoding.
func (opts *solveOptions) isCP() bool {
	if opts.encoding == "cp" {
		return true
	}
	name := opts.heuristic
	if name == "" && opts.solverSet {
		name = opts.solver
	}
	e, ok := catalog.Lookup(name)
	return ok && e.Encoding == catalog.CP && opts.encoding == ""
}

// load reads the window, within --deadline when it is given.
func (opts *solveOptions) load() (*model.Window, error) {
	if opts.deadline <= 0 {
		return loadWindow(opts.window, opts.streams.in)
	}
	start := opts.streams.start
	if start.IsZero() {
		start = time.Now()
	}
	return loadWindowBy(start.Add(opts.deadline), opts.deadline, start, opts.window, opts.streams.in)
}

// solveLimit is the time limit of the solve: --time-limit, or with
// --deadline what is left of it after reading the window, less a reserve
// for writing the answer (writeReserve), and at most --time-limit when
// that is given. When reading took it all, the solve gets a millisecond
// and stderr says so: an answer, late, rather than none.
func (opts *solveOptions) solveLimit(w *model.Window) time.Duration {
	if opts.deadline <= 0 {
		return opts.timeLimit
	}
	start := opts.streams.start
	if start.IsZero() {
		start = time.Now()
	}
	left := opts.deadline - time.Since(start) - writeReserve(w)
	limit := left
	if opts.timeLimitSet {
		limit = min(limit, opts.timeLimit)
	}
	if limit < time.Millisecond {
		fmt.Fprintf(opts.streams.err, "optsched: reading the window took %v of the --deadline %v, leaving no time to solve: solving within 1ms, the answer will be late\n",
			time.Since(start).Round(time.Millisecond), opts.deadline)
		limit = time.Millisecond
	}
	return limit
}

// writeReserve is the part of a --deadline kept for writing the answer
// after the solve: an entry per job (an allocation or a deferral, about
// 150 bytes of JSON: 151 MB for a million jobs), 1.5 µs each at the
// 100 MB/s encoding/json writes at, and 5 ms for the rest and the exit.
// An estimate, not a measurement of this path.
func writeReserve(w *model.Window) time.Duration {
	return 5*time.Millisecond + time.Duration(len(w.Jobs))*1500*time.Nanosecond
}
