package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
	"github.com/optsched/optsched/solver/clp"
	"github.com/optsched/optsched/solver/csp"
	"github.com/optsched/optsched/solver/lpsolve"
)

// Exit codes of optsched; a contract with scripts and scheduler hooks.
const (
	exitOK         = 0 // solved, or valid
	exitError      = 1 // bad input, failed solve, I/O error
	exitUsage      = 2 // bad flags or arguments
	exitInfeasible = 3 // proven infeasible, or an allocation that fails the check
)

// usageError marks errors in flags or arguments.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// infeasibleError carries exit code 3.
type infeasibleError struct{ err error }

func (e infeasibleError) Error() string { return e.err.Error() }
func (e infeasibleError) Unwrap() error { return e.err }

// streams are the command's standard streams, injected for tests.
type streams struct {
	in       io.Reader
	out, err io.Writer
	// outIsTerminal selects human tables over JSON by default.
	outIsTerminal bool
}

// run executes optsched with args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	s := &streams{in: stdin, out: out, err: stderr, outIsTerminal: isTerminal(stdout)}
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil && out.err != nil {
		err = fmt.Errorf("writing the output: %w", out.err)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "optsched:", err)
	var ue usageError
	var ie infeasibleError
	switch {
	case errors.As(err, &ue), isCobraUsage(err):
		fmt.Fprintln(stderr, "Run 'optsched help' or add --help for usage.")
		return exitUsage
	case errors.As(err, &ie), errors.Is(err, model.ErrInfeasible):
		return exitInfeasible
	}
	return exitError
}

// checkedWriter remembers the first write error (a full disk, a closed
// pipe), so that the exit status reports it.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// isCobraUsage reports the errors cobra itself returns for a command line
// it cannot take (an unknown command or flag, a wrong number of
// arguments): usage errors, exit 2.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag: ", "unknown shorthand flag: ", "requires at least ", "requires at most ",
		"accepts ", "invalid argument ", "flag needs an argument", "required flag(s) "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// commit is the VCS commit the binary was built from, when the build
// sets it (make build: -ldflags "-X main.commit=…"); otherwise the Go
// toolchain's VCS stamp is used when present.
var commit string

// version is the module version and VCS commit the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty, at string
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.modified":
			if st.Value == "true" {
				dirty = "+modified"
			}
		case "vcs.time":
			at = st.Value
		}
	}
	if commit != "" {
		return v + ", commit " + commit + ", " + bi.GoVersion
	}
	if rev != "" {
		v += fmt.Sprintf(", commit %.12s%s", rev, dirty)
		if at != "" {
			v += " of " + at
		}
	}
	return v + ", " + bi.GoVersion
}

func newRootCmd(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "optsched",
		Short: "Optimal and heuristic job allocation for HPC scheduling windows",
		Long: `optsched solves one scheduling window at a time: which waiting jobs start
now, and on which idle nodes, minimising the communication-hop (CH) cost of
each job's node set on a fat-tree cluster (Lan et al., CLUSTER 2023).

Windows are JSON files (see docs/formats.md, "Window JSON v1").`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("optsched {{.Version}}\n")
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.SetIn(s.in)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newSolveCmd(s, nil), newGenCmd(s, nil), newValidateCmd(s, nil), newExportCmd(s, nil), newBenchCmd(s), newSimulateCmd(s, nil), newPBSCmd(s), newTrainCmd(s))
	registerCompletions(root)
	return root
}

// flagValues lists the values shell completion offers for a flag, by the
// command path ("optsched pbs plan") or "*" for every command with it.
func flagValues() map[string]map[string][]string {
	reg := registry()
	return map[string]map[string][]string{
		"*": {"solver": reg.Names(), "heuristic": reg.Names(), "cost": {"lan-code", "lan-paper"},
			"formulation": {"strong", "paper"}, "fallback": {"sa", "nsa", "none"}, "partial": {"cp", "first-fit"},
			"policy": append([]string{"window"}, sim.PolicyNames()...), "allocator": sim.AllocatorNames()},
		"optsched solve":    {"output": {"json", "table"}, "encoding": {"csp", "scas", "cp"}},
		"optsched gen":      {"output": {"json"}},
		"optsched export":   {"output": {"lp", "mps", "cnf"}, "format": {"lp", "mps", "cnf"}, "encoding": {"csp", "scas", "cp"}},
		"optsched pbs plan": {"output": {"script", "json"}, "solver": wholeNodeSolvers()},
		"optsched pbs run":  {"output": {"summary", "json", "script"}, "solver": wholeNodeSolvers()},
		"optsched simulate": {"format": {"lan", "swf"}},
	}
}

// registerCompletions gives every flag of flagValues its values in shell
// completion (optsched completion bash|zsh|fish).
func registerCompletions(root *cobra.Command) {
	vals := flagValues()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			v, ok := vals[c.CommandPath()][f.Name]
			if !ok {
				v, ok = vals["*"][f.Name]
			}
			if ok {
				c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(v, cobra.ShellCompDirectiveNoFileComp))
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// registry lists the solvers and heuristics `optsched solve` can run.
func registry() *solver.Registry {
	r := &solver.Registry{}
	r.Register("csp", "csp", "exact: the constrained-shortest-path graph (DP; Lagrangian bound for large windows); pure Go",
		func(c solver.Config) (solver.Solver, error) { return csp.Solver{Progress: c.Progress}, nil })
	r.Register("lpsolve", "scas", "exact: the M_SCAS 0-1 program on lp_solve (cgo)",
		func(c solver.Config) (solver.Solver, error) {
			if !lpsolve.Available {
				return nil, lpsolve.ErrUnavailable
			}
			return lpsolve.Solver{Formulation: c.Formulation, Verbose: c.Progress}, nil
		})
	r.Register("clp", "scas", "bound: the LP relaxation of the M_SCAS program on COIN-OR CLP, with a rounded allocation (cgo)",
		func(c solver.Config) (solver.Solver, error) {
			if !clp.Available {
				return nil, clp.ErrUnavailable
			}
			return clp.Solver{Formulation: c.Formulation}, nil
		})
	r.Register("brute", "scas", "exact: enumerates every placement (tiny windows only; the tests' yardstick)",
		func(solver.Config) (solver.Solver, error) { return brute.Solver{}, nil })
	r.Register("sa", "dcas", "heuristic: simulated annealing on DCAS (Lan et al. Algorithm 1, Table I defaults; --sa-* flags)",
		func(c solver.Config) (solver.Solver, error) { return newAnneal(c), nil })
	r.Register("nsa", "dcas", "heuristic: neural simulated annealing — SA with a PPO-trained repair policy (Lan et al. §V; shipped weights, --nsa-weights, --nsa-sample)",
		func(c solver.Config) (solver.Solver, error) { return newNSA(c), nil })
	r.Register("seq", "scas", `heuristic: the "Seq." allocation of Lan et al., jobs in order along the idle sequence`,
		func(solver.Config) (solver.Solver, error) { return heuristics.Seq{}, nil })
	r.Register("slurm", "tree", "heuristic: Slurm's topology/tree best fit — the lowest switch that holds the job, then best-fit leaves",
		func(solver.Config) (solver.Solver, error) { return heuristics.Slurm{}, nil })
	r.Register("mishra-greedy", "tree", "heuristic: Mishra et al.'s greedy allocation — whole leaves by communication ratio",
		func(solver.Config) (solver.Solver, error) { return heuristics.MishraGreedy{}, nil })
	r.Register("mishra-balanced", "tree", "heuristic: Mishra et al.'s balanced allocation — power-of-two shares of leaves by communication ratio",
		func(solver.Config) (solver.Solver, error) { return heuristics.MishraBalanced{}, nil })
	r.Register("sat", "cp", "exact: Bridi et al.'s CP model (alternative, cumulative, noOverlap) on gini, bound tightening from the PBS list schedules (--encoding cp)",
		func(solver.Config) (solver.Solver, error) { return notWholeNode{"sat"}, nil })
	r.Register("bnb", "cp", "exact: a branch and bound over start-ordered schedules of the same CP model, sharing no code with sat; slower, for cross-checks (--encoding cp)",
		func(solver.Config) (solver.Solver, error) { return notWholeNode{"bnb"}, nil })
	r.Register("pbs-fifo", "cp", "heuristic: PBSFifo list schedule — submission order, backfilling limited to 10 (--encoding cp)",
		func(solver.Config) (solver.Solver, error) { return notWholeNode{"pbs-fifo"}, nil })
	r.Register("pbs-walltime", "cp", "heuristic: PBSWalltime list schedule — increasing walltime, backfilling limited to 400 (--encoding cp)",
		func(solver.Config) (solver.Solver, error) { return notWholeNode{"pbs-walltime"}, nil })
	r.Register("mishra-adaptive", "tree", "heuristic: Mishra et al.'s adaptive allocation — per job, the cheaper of greedy and balanced under their pattern cost",
		func(solver.Config) (solver.Solver, error) { return heuristics.MishraAdaptive{}, nil })
	return r
}

// newAnneal makes the SA heuristic from c, defaults for zero fields.
func newAnneal(c solver.Config) heuristics.Anneal {
	a := heuristics.DefaultAnneal()
	a.Seed = c.Seed
	if c.SA.Tmax > 0 {
		a.Tmax = c.SA.Tmax
	}
	if c.SA.Tmin > 0 {
		a.Tmin = c.SA.Tmin
	}
	if c.SA.Steps > 0 {
		a.Steps = c.SA.Steps
	}
	if c.SA.Destroy > 0 {
		a.Destroy = c.SA.Destroy
	}
	if c.SA.Q > 0 {
		a.Q = c.SA.Q
	}
	a.PaperCompat = c.SA.PaperCompat
	return a
}

// solverHelp lists the registered names with their descriptions.
func solverHelp() string {
	r := registry()
	var b strings.Builder
	for _, n := range r.Names() {
		fmt.Fprintf(&b, "  %-16s %s\n", n, r.Help(n))
	}
	return b.String()
}

// exactArgs is cobra.ExactArgs returning a usage error.
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			if lo == hi {
				return usageError{fmt.Errorf("want %d argument(s), got %d", lo, len(args))}
			}
			return usageError{fmt.Errorf("want %d to %d arguments, got %d", lo, hi, len(args))}
		}
		return nil
	}
}
