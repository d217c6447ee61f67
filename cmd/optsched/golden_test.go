package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/solver/clp"
	"github.com/optsched/optsched/solver/lpsolve"
)

var updateGolden = flag.Bool("golden.update", false, "rewrite testdata/golden/*.golden from the current outputs")

// cpSmall is the first five jobs of the Eurora example: small enough for
// bnb to prove its optimum in milliseconds, so that its answer does not
// depend on the machine's load.
const cpSmall = "testdata/golden/cp-small.json"

// goldenCase is one command whose whole output is kept: exit code, stdout
// and stderr, timing masked. validate, when set, pipes the JSON on stdout
// into `optsched validate` with these arguments and keeps its output too.
type goldenCase struct {
	name     string
	args     []string
	validate []string
	// figuresOnly keeps stdout up to the allocations (the status,
	// objective, bound and the rest of the head), for an answer whose
	// figures are stable but whose placement is not.
	figuresOnly bool
}

// goldenCases cover `optsched solve` over every solver, heuristic and
// encoding of both models, in JSON and table, with the usage errors of
// the flags the two models share.
func goldenCases() []goldenCase {
	var cs []goldenCase
	add := func(name string, args ...string) {
		cs = append(cs, goldenCase{name: name, args: append([]string{"solve"}, args...)})
	}
	addV := func(name string, args ...string) {
		c := goldenCase{name: name, args: append([]string{"solve", "-o", "json"}, args...)}
		w := args[len(args)-1]
		c.validate = []string{"validate", "-o", "json", w, "-"}
		cs = append(cs, c)
	}
	for _, s := range []string{"csp", "lpsolve", "clp", "free", "brute"} {
		addV("solve-"+s+"-json", "--solver", s, example)
		add("solve-"+s+"-table", "-o", "table", "--solver", s, example)
	}
	for _, h := range []string{"seq", "sa", "nsa", "slurm", "mishra-greedy", "mishra-balanced", "mishra-adaptive"} {
		addV("solve-"+h+"-json", "--heuristic", h, example)
		add("solve-"+h+"-table", "-o", "table", "--heuristic", h, example)
	}
	addV("solve-scas-lpsolve-paper-json", "--encoding", "scas", "--solver", "lpsolve", "--formulation", "paper", "../../instances/paper-s1-i50.json")
	addV("solve-clp-paper-json", "--solver", "clp", "--formulation", "paper", example)
	addV("solve-dcas-json", "--encoding", "dcas", example)
	add("solve-dcas-table", "-o", "table", "--encoding", "dcas", example)
	addV("solve-csp-lan-paper-json", "--cost", "lan-paper", example)
	addV("solve-csp-max-jobs-json", "--max-jobs", "2", example)
	addV("solve-csp-fallback-none-json", "--fallback", "none", example)
	addV("solve-csp-fallback-nsa-json", "--fallback", "nsa", example)
	addV("solve-paper-s1-json", "../../instances/paper-s1-i50.json")
	add("solve-paper-s1-table", "-o", "table", "../../instances/paper-s1-i50.json")

	for _, s := range []string{"sat", "bnb"} {
		addV("cp-"+s+"-json", "--encoding", "cp", "--solver", s, cpSmall)
		add("cp-"+s+"-table", "-o", "table", "--encoding", "cp", "--solver", s, cpSmall)
	}
	for _, h := range []string{"pbs-fifo", "pbs-walltime"} {
		addV("cp-"+h+"-json", "--encoding", "cp", "--heuristic", h, cpSmall)
		add("cp-"+h+"-table", "-o", "table", "--encoding", "cp", "--heuristic", h, cpSmall)
	}
	// The default cp path on the full Eurora example proves its optimum,
	// but its LNS interludes run on the clock, so which of the equal-cost
	// placements it ends on depends on the machine's load: figures only.
	addV("cp-default-eurora-json", "--encoding", "cp", euroraExample)
	cs[len(cs)-1].figuresOnly = true
	add("cp-default-eurora-table", "-o", "table", "--encoding", "cp", euroraExample)
	cs[len(cs)-1].figuresOnly = true
	addV("cp-sat-implicit-json", "--solver", "sat", cpSmall)
	addV("cp-granularity-json", "--encoding", "cp", "--granularity", "5m", cpSmall)
	addV("cp-ch-weight-json", "--encoding", "cp", "--ch-weight", "0.001", cpSmall)
	add("cp-ch-weight-table", "-o", "table", "--encoding", "cp", "--ch-weight", "0.001", cpSmall)
	// sat without the list schedules' incumbent finds the same optimum
	// but not always on the same nodes: its figures only.
	addV("cp-fallback-none-json", "--encoding", "cp", "--fallback", "none", cpSmall)
	cs[len(cs)-1].figuresOnly = true
	addV("cp-fallback-pbs-json", "--encoding", "cp", "--fallback", "pbs", cpSmall)

	// Usage errors of the flags both models read.
	add("err-fallback-bad", "--fallback", "bogus", example)
	add("err-fallback-pbs-whole-node", "--fallback", "pbs", example)
	add("err-fallback-nsa-cp", "--encoding", "cp", "--fallback", "nsa", cpSmall)
	add("err-fallback-bad-cp", "--encoding", "cp", "--fallback", "bogus", cpSmall)
	add("err-encoding-bad", "--encoding", "bogus", example)
	add("err-encoding-mismatch", "--encoding", "scas", "--solver", "csp", example)
	add("err-solver-bad", "--solver", "bogus", example)
	add("err-cp-solver-whole-node", "--encoding", "csp", "--solver", "sat", example)
	add("err-whole-node-solver-cp", "--encoding", "cp", "--solver", "csp", cpSmall)
	add("err-ch-weight-whole-node", "--ch-weight", "1", example)
	add("err-ch-weight-bnb", "--encoding", "cp", "--solver", "bnb", "--ch-weight", "1", cpSmall)
	add("err-ch-weight-negative", "--encoding", "cp", "--ch-weight", "-1", cpSmall)
	add("err-max-jobs-cp", "--encoding", "cp", "--max-jobs", "2", cpSmall)
	add("err-granularity", "--encoding", "cp", "--granularity", "1500ms", cpSmall)
	add("err-reservations-whole-node", euroraExample)
	add("err-time-limit", "--time-limit", "0s", example)
	add("err-sa-tmin", "--sa-tmin", "0", example)
	add("err-missing-file", "does-not-exist.json")
	add("err-solver-and-heuristic", "--solver", "csp", "--heuristic", "sa", example)
	add("err-heuristic-bad", "--heuristic", "bogus", example)
	add("err-heuristic-cp-whole-node", "--encoding", "cp", "--heuristic", "sa", cpSmall)
	return append(cs, flagErrorCases()...)
}

// missing is a file that does not exist: the commands below would fail
// reading it (exit 1), so an exit 2 about a flag shows that the flags were
// checked before any input was read.
const missing = "does-not-exist.json"

// flagErrorCases are the usage errors of the flags that name solvers and
// their options (--solver, --heuristic, --fallback, --encoding) in every
// command that takes them, each given with inputs that do not exist: the
// flag is refused (exit 2) before anything is read. A case with good
// flags (the -read ones) shows the exit 1 that reading them gives.
func flagErrorCases() []goldenCase {
	var cs []goldenCase
	add := func(name string, args ...string) { cs = append(cs, goldenCase{name: name, args: args}) }
	solve := func(name string, args ...string) { add(name, append(append([]string{"solve"}, args...), missing)...) }
	solve("err-solve-read", "--solver", "csp")
	solve("err-solve-fallback-bad-before-read", "--fallback", "bogus")
	solve("err-solve-encoding-bad-before-read", "--encoding", "bogus")
	solve("err-solve-solver-bad-before-read", "--solver", "bogus")
	solve("err-solve-encoding-dcas-solver-csp", "--encoding", "dcas", "--solver", "csp")
	solve("err-schedule-read", "--encoding", "cp")
	solve("err-schedule-fallback-bad-before-read", "--encoding", "cp", "--fallback", "bogus")
	solve("err-schedule-fallback-sa-before-read", "--encoding", "cp", "--fallback", "sa")
	solve("err-schedule-solver-bad-before-read", "--encoding", "cp", "--solver", "bogus")
	solve("err-schedule-heuristic-bad-before-read", "--encoding", "cp", "--heuristic", "bogus")

	pbs := func(name, sub string, args ...string) {
		a := []string{"pbs", sub, "--qstat", missing, "--pbsnodes", missing, "--queues", missing}
		if sub == "run" {
			a = append(a, "--once")
		}
		add(name, append(a, args...)...)
	}
	slurm := func(name, sub string, args ...string) {
		a := []string{"slurm", sub, "--squeue", missing, "--sinfo", missing, "--topology", missing}
		if sub == "run" {
			a = append(a, "--once")
		}
		add(name, append(a, args...)...)
	}
	for _, sub := range []string{"plan", "run"} {
		pbs("err-pbs-"+sub+"-read", sub)
		pbs("err-pbs-"+sub+"-fallback-bad-before-read", sub, "--fallback", "bogus")
		pbs("err-pbs-"+sub+"-fallback-empty-before-read", sub, "--fallback", "")
		pbs("err-pbs-"+sub+"-fallback-pbs-before-read", sub, "--fallback", "pbs")
		pbs("err-pbs-"+sub+"-solver-bad-before-read", sub, "--solver", "bogus")
		pbs("err-pbs-"+sub+"-solver-cp-before-read", sub, "--solver", "sat")
		slurm("err-slurm-"+sub+"-read", sub)
		slurm("err-slurm-"+sub+"-fallback-bad-before-read", sub, "--fallback", "bogus")
		slurm("err-slurm-"+sub+"-fallback-empty-before-read", sub, "--fallback", "")
		slurm("err-slurm-"+sub+"-solver-bad-before-read", sub, "--solver", "bogus")
		slurm("err-slurm-"+sub+"-solver-cp-before-read", sub, "--solver", "sat")
	}
	sim := func(name string, args ...string) {
		add(name, append([]string{"simulate", "--trace", missing}, args...)...)
	}
	sim("err-simulate-read")
	sim("err-simulate-solver-bad-before-read", "--solver", "bogus")
	sim("err-simulate-solver-cp-before-read", "--solver", "sat")
	sim("err-simulate-heuristic-bad-before-read", "--heuristic", "bogus")
	add("err-export-encoding-bad-before-read", "export", "--encoding", "bogus", missing)
	add("err-export-encoding-csp-before-read", "export", "--encoding", "csp", missing)
	return cs
}

// timing masks the figures that depend on the clock.
var timing = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"elapsed_ms": [0-9.e+-]+`), `"elapsed_ms": MASKED`},
	{regexp.MustCompile(`elapsed [0-9.]+ ms`), `elapsed MASKED ms`},
}

func maskTiming(s string) string {
	for _, m := range timing {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return maskStats(s)
}

// statValue is a value in a document's "stats" object.
var statValue = regexp.MustCompile(`(": )(-?[0-9][0-9.e+-]*|true|false|null)`)

// maskStats masks the values of the "stats" object of an answer
// document, keeping its names, which are the contract: the counters
// depend on the clock (times, and what a solver reached in its time).
func maskStats(s string) string {
	at := strings.Index(s, `"stats": {`)
	if at < 0 {
		return s
	}
	depth, end := 0, len(s)
	for i := at + len(`"stats": `); i < len(s); i++ {
		if s[i] == '{' {
			depth++
		} else if s[i] == '}' {
			if depth--; depth == 0 {
				end = i
				break
			}
		}
	}
	return s[:at] + statValue.ReplaceAllString(s[at:end], "${1}MASKED") + maskStats(s[end:])
}

// runGolden runs c and returns the text its golden file keeps.
func runGolden(t *testing.T, c goldenCase) string {
	code, out, errs := optsched(t, "", c.args...)
	var b strings.Builder
	kept := out
	if c.figuresOnly {
		// JSON: the head before "allocations"; table: the lines before
		// the jobs' header.
		if head, _, ok := strings.Cut(kept, `"allocations"`); ok {
			kept = head
		} else {
			kept, _, _ = strings.Cut(kept, "\nJOB ")
			kept += "\n"
		}
		kept += "...\n"
	}
	fmt.Fprintf(&b, "$ optsched %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(c.args, " "), code, maskTiming(kept), maskTiming(errs))
	if c.validate != nil {
		vcode, vout, verrs := optsched(t, out, c.validate...)
		fmt.Fprintf(&b, "$ optsched %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(c.validate, " "), vcode, vout, verrs)
	}
	return b.String()
}

// TestGolden holds the outputs of `optsched solve` (and validate of its
// JSON) for every solver and encoding to the files in testdata/golden,
// so that a change of the answer pipeline shows as a diff. Rewrite them
// with go test -run TestGolden -golden.update, and read the diff.
func TestGolden(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the lock and log of pbs run and slurm run
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			if needsCgo(c.args) {
				t.Skip("lp_solve or CLP not linked in (cgo)")
			}
			got := runGolden(t, c)
			path := filepath.Join("testdata", "golden", c.name+".golden")
			if *updateGolden {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (rewrite with -golden.update)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

// needsCgo reports whether args name a solver of a cgo library this build
// may lack.
func needsCgo(args []string) bool {
	for i, a := range args {
		if i > 0 && args[i-1] == "--solver" && (a == "lpsolve" && !lpsolve.Available || a == "clp" && !clp.Available) {
			return true
		}
	}
	return false
}

// TestGoldenCoversCatalog: every name of the catalogue has a golden
// output, so that a solver added later is held to one too.
func TestGoldenCoversCatalog(t *testing.T) {
	named := map[string]bool{}
	for _, c := range goldenCases() {
		for i, a := range c.args {
			if i > 0 && (c.args[i-1] == "--solver" || c.args[i-1] == "--heuristic") && !strings.HasPrefix(c.name, "err-") {
				named[a] = true
			}
		}
	}
	for _, n := range catalog.Names() {
		if !named[n] {
			t.Errorf("no golden output of %s", n)
		}
	}
}
