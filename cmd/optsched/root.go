package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/model"
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
	// start is when the command began (run's call), from which a
	// process-wide --deadline counts; zero: when the deadline is read.
	start time.Time
}

// run executes optsched with args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	s := &streams{in: stdin, out: out, err: stderr, outIsTerminal: isTerminal(stdout), start: time.Now()}
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{plainFlagError(err)} })
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return noNaNFlags(cmd) }
	root.AddCommand(newSolveCmd(s, nil), newGenCmd(s, nil), newValidateCmd(s, nil), newExportCmd(s, nil), newBenchCmd(s), newSimulateCmd(s, nil), newPBSCmd(s), newSlurmCmd(s), newReplayCmd(s, nil), newTrainCmd(s))
	registerCompletions(root)
	return root
}

// noNaNFlags refuses NaN as the value of any number flag given: every
// comparison with NaN is false, so range checks such as "tmax > 0" let it
// through, and no flag means anything by it.
func noNaNFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil || f.Value.Type() != "float64" && f.Value.Type() != "float32" {
			return
		}
		if v, perr := strconv.ParseFloat(f.Value.String(), 64); perr == nil && math.IsNaN(v) {
			err = usageError{fmt.Errorf("--%s: NaN is not a number; give a number", f.Name)}
		}
	})
	return err
}

// strconvMessage matches what pflag passes on from strconv and time when a
// flag's value does not parse: `strconv.ParseInt: parsing "x": invalid
// syntax`, `time: invalid duration "x"`.
var strconvMessage = regexp.MustCompile(`strconv\.Parse(Int|Uint|Float|Bool): parsing "[^"]*": (invalid syntax|value out of range)|time: (invalid duration|unknown unit "[^"]*" in duration) "[^"]*"`)

// plainFlagError rewrites a flag error that quotes a Go function
// (strconv.ParseUint, time.ParseDuration) in the user's words: what the
// flag wants.
func plainFlagError(err error) error {
	msg := err.Error()
	m := strconvMessage.FindStringSubmatch(msg)
	if m == nil {
		return err
	}
	want := map[string]string{"Int": "an integer", "Uint": "a non-negative integer", "Float": "a number", "Bool": "true or false"}[m[1]]
	switch {
	case m[1] == "":
		want = "a duration with a unit, such as 500ms, 2s or 1m"
	case m[2] == "value out of range":
		want += " in range"
	}
	return errors.New(strings.Replace(msg, m[0], "want "+want, 1))
}

// flagValues lists the values shell completion offers for a flag, by the
// command path ("optsched pbs plan") or "*" for every command with it.
func flagValues() map[string]map[string][]string {
	return map[string]map[string][]string{
		"*": {"solver": catalog.Names(), "heuristic": catalog.Names(), "cost": {"lan-code", "lan-paper"},
			"formulation": {"strong", "paper"}, "fallback": catalog.Fallbacks, "partial": {"cp", "first-fit"},
			"policy": append([]string{"window"}, sim.PolicyNames()...), "allocator": sim.AllocatorNames()},
		"optsched solve":      {"output": {"json", "table"}, "encoding": catalog.Encodings(), "fallback": solveFallbacks()},
		"optsched gen":        {"output": {"json"}},
		"optsched export":     {"output": {"lp", "mps", "cnf"}, "format": {"lp", "mps", "cnf"}, "encoding": exportEncodings},
		"optsched pbs plan":   {"output": {"script", "json"}, "solver": wholeNodeSolvers()},
		"optsched pbs run":    {"output": {"summary", "json", "script"}, "solver": wholeNodeSolvers()},
		"optsched simulate":   {"format": {"lan", "swf"}, "solver": wholeNodeSolvers(), "heuristic": wholeNodeSolvers()},
		"optsched slurm plan": {"output": {"text", "json"}, "solver": wholeNodeSolvers()},
		"optsched slurm run":  {"output": {"summary", "json-line", "text"}, "solver": wholeNodeSolvers()},
		"optsched replay":     {"output": {"table", "json"}, "server": {"pbs"}},
	}
}

// solveFallbacks are the values of solve's --fallback: the whole-node
// model's, then the time-and-resource model's not among them.
func solveFallbacks() []string {
	out := slices.Clone(catalog.Fallbacks)
	for _, f := range catalog.CPFallbacks {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
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

// solverHelp lists the registered names with their descriptions.
func solverHelp() string {
	var b strings.Builder
	for _, e := range catalog.Entries() {
		fmt.Fprintf(&b, "  %-16s %s\n", e.Name, e.Help)
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
