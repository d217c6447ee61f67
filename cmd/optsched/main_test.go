package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/output"
)

// optsched runs the command in-process and returns its exit code and
// outputs.
func optsched(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const example = "../../instances/example-window.json"

func TestSolveExampleThenValidate(t *testing.T) {
	code, out, errs := optsched(t, "", "solve", "-o", "json", example)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc output.ResultDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	// The contract's fields, as the issue names them.
	var raw map[string]any
	json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"status", "objective", "bound", "gap", "encoding", "solver", "elapsed_ms", "allocations", "deferred"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	if doc.Status != "optimal" || doc.Solver != "csp" || doc.Bound == nil || doc.Gap == nil || *doc.Gap != 0 ||
		len(doc.Allocations) != 7 || len(doc.Deferred) != 1 {
		t.Errorf("unexpected result %+v", doc)
	}
	dir := t.TempDir()
	res := filepath.Join(dir, "result.json")
	if err := os.WriteFile(res, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = optsched(t, "", "validate", example, res)
	if code != exitOK || !strings.Contains(out, "result ok: 7 jobs allocated, 1 deferred") {
		t.Errorf("validate: exit %d, %s %s", code, out, errs)
	}

	// A tampered result is caught: a node given to two jobs, a wrong cost,
	// a wrong objective.
	tamper := func(name string, edit func(d *output.ResultDoc), wantCode int, want string) {
		var d output.ResultDoc
		json.Unmarshal([]byte(out0(t)), &d)
		edit(&d)
		data, _ := json.Marshal(d)
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, data, 0o644)
		code, _, errs := optsched(t, "", "validate", example, p)
		if code != wantCode || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", name, code, errs, wantCode, want)
		}
	}
	tamper("shared", func(d *output.ResultDoc) { d.Allocations[1].Nodes[0] = d.Allocations[0].Nodes[0] }, exitInfeasible, "overlap")
	tamper("busy", func(d *output.ResultDoc) { d.Allocations[0].Nodes[0] = "n0" }, exitInfeasible, "busy until")
	tamper("cost", func(d *output.ResultDoc) { d.Allocations[0].Cost++ }, exitInfeasible, "reported cost")
	tamper("objective", func(d *output.ResultDoc) { *d.Objective -= 1 }, exitInfeasible, "objective: reported")
	tamper("unknown node", func(d *output.ResultDoc) { d.Allocations[0].Nodes[0] = "zz" }, exitError, `allocations[0].nodes[0]: node "zz"`)
	tamper("unknown job", func(d *output.ResultDoc) { d.Allocations[0].Job = "nope" }, exitError, `allocations[0].job`)
	// Results that account for the jobs wrongly or whose figures disagree.
	tamper("nothing", func(d *output.ResultDoc) {
		d.Allocations, d.Deferred, d.Objective, d.Bound, d.Gap = nil, nil, nil, nil, nil
		d.Status = "unknown"
	}, exitInfeasible, "8 missing")
	tamper("three dropped", func(d *output.ResultDoc) {
		for _, a := range d.Allocations[len(d.Allocations)-3:] {
			*d.Objective -= a.Cost
		}
		d.Allocations = d.Allocations[:len(d.Allocations)-3]
	}, exitInfeasible, "3 missing")
	tamper("invented deferral", func(d *output.ResultDoc) {
		d.Deferred = append(d.Deferred, output.DeferralDoc{Job: d.Allocations[0].Job, Reason: "made up"})
	}, exitInfeasible, "appears 2 times")
	tamper("infeasible with allocations", func(d *output.ResultDoc) { d.Status, d.Objective, d.Bound, d.Gap = "infeasible", nil, nil, nil },
		exitInfeasible, "status infeasible with an allocation")
	tamper("wrong gap", func(d *output.ResultDoc) { *d.Gap = 0.25 }, exitInfeasible, "gap 0.25")
}

// out0 returns a fresh JSON result of the example.
func out0(t *testing.T) string {
	code, out, errs := optsched(t, "", "solve", "-o", "json", example)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	return out
}

func TestSolveTableAndStdin(t *testing.T) {
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := optsched(t, string(data), "solve", "-o", "table", "-")
	if code != exitOK || !strings.Contains(out, "status optimal") || !strings.Contains(out, "deferred (1)") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	// Without -o and not on a terminal, the output is JSON.
	code, out, _ = optsched(t, string(data), "solve", "-")
	if code != exitOK || !json.Valid([]byte(out)) {
		t.Errorf("default output on a pipe is not JSON: %s", out)
	}
}

func TestSolveOptions(t *testing.T) {
	var a, b output.ResultDoc
	_, out, _ := optsched(t, "", "solve", "-o", "json", "--max-jobs", "2", example)
	json.Unmarshal([]byte(out), &a)
	_, out, _ = optsched(t, "", "solve", "-o", "json", "--cost", "lan-paper", "--heuristic", "seq", example)
	json.Unmarshal([]byte(out), &b)
	multi := 0
	for _, al := range a.Allocations {
		if len(al.Nodes) > 1 {
			multi++
		}
	}
	if multi != 2 {
		t.Errorf("--max-jobs 2 started %d multi-node jobs", multi)
	}
	if b.Objective == nil || *b.Objective <= 151599 {
		t.Errorf("--cost lan-paper objective %v, want more than lan-code's 151599", b.Objective)
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 4}},
	  "idle": "n[0-3]", "jobs": [{"id": "a", "nodes": 0, "walltime": 5}]}`), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"solve"}, exitUsage, "want 1 argument"},
		{[]string{"solve", "--bogus", example}, exitUsage, "unknown flag"},
		{[]string{"solve", "--time-limit", "x", example}, exitUsage, "invalid argument"},
		{[]string{"solve", "--time-limit", "0s", example}, exitUsage, "--time-limit must be positive"},
		{[]string{"solve", "--heuristic", "magic", example}, exitUsage, `--heuristic: unknown solver "magic"`},
		{[]string{"solve", "--solver", "magic", example}, exitUsage, `--solver: unknown solver "magic"`},
		{[]string{"solve", "--solver", "csp", "--heuristic", "seq", example}, exitUsage, "not both"},
		{[]string{"solve", "--solver", "csp", "--encoding", "scas", example}, exitUsage, "csp solves the csp encoding"},
		{[]string{"solve", "--encoding", "lp", example}, exitUsage, "--encoding must be csp, scas or dcas"},
		{[]string{"solve", "--formulation", "weak", example}, exitUsage, "unknown formulation"},
		{[]string{"export", "--format", "xls", example}, exitUsage, "--format must be lp or mps"},
		{[]string{"solve", "--cost", "x", example}, exitUsage, "unknown cost model"},
		{[]string{"solve", "-o", "xml", example}, exitUsage, "-o must be json or table"},
		{[]string{"solve", "--max-jobs", "-1", example}, exitUsage, "--max-jobs must be at least 0"},
		{[]string{"solve", filepath.Join(dir, "missing.json")}, exitError, "no such file"},
		{[]string{"solve", bad}, exitError, "jobs[0].nodes: must be between 1 and"},
		{[]string{"validate", bad}, exitError, "jobs[0].nodes"},
		{[]string{"gen", "--layout", "3x3"}, exitUsage, "--layout must be"},
		{[]string{"gen", "--idle", "5000"}, exitUsage, "idle nodes must be between 0 and 1000"},
		{[]string{"gen", "--fat-tree", "5"}, exitUsage, "even"},
		{[]string{"nonsense"}, exitUsage, "unknown command"},
	}
	for _, c := range cases {
		code, _, errs := optsched(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("optsched %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestGenReproducesInstances regenerates the shipped paper-scale windows:
// the same seed must give the same file, byte for byte.
func TestGenReproducesInstances(t *testing.T) {
	cases := map[string][]string{
		"paper-s1-i50.json":      {"--seed", "1", "--idle", "50", "--jobs", "5"},
		"paper-s2-i150.json":     {"--seed", "2", "--idle", "150", "--jobs", "5"},
		"paper-s3-i300.json":     {"--seed", "3", "--idle", "300", "--jobs", "5", "--max-nwp", "2"},
		"paper-s4-i500.json":     {"--seed", "4", "--idle", "500", "--jobs", "6"},
		"paper-s5-i800.json":     {"--seed", "5", "--idle", "800", "--jobs", "8", "--max-nwp", "1"},
		"paper-s6-i1000.json":    {"--seed", "6", "--idle", "1000", "--jobs", "10"},
		"fattree16-s7-i600.json": {"--seed", "7", "--fat-tree", "16", "--idle", "600", "--jobs", "40"},
	}
	for file, args := range cases {
		want, err := os.ReadFile(filepath.Join("../../instances", file))
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := optsched(t, "", append([]string{"gen"}, args...)...)
		if code != exitOK || out != string(want) {
			t.Errorf("gen %v: exit %d %s; output differs from %s", args, code, errs, file)
		}
	}
	// And the generated windows are valid.
	code, out, _ := optsched(t, "", "gen", "--seed", "99", "--idle", "10", "--jobs", "3")
	if code != exitOK {
		t.Fatal("gen failed")
	}
	code, _, errs := optsched(t, out, "validate", "-")
	if code != exitOK {
		t.Errorf("validate of generated window: %s", errs)
	}
}

func TestHelpListsCommands(t *testing.T) {
	code, out, _ := optsched(t, "", "--help")
	for _, c := range []string{"solve", "gen", "validate"} {
		if code != exitOK || !strings.Contains(out, c) {
			t.Errorf("help lacks %q (exit %d)", c, code)
		}
	}
}

// TestSolversAgreeOnExample runs every exact solver on the example and
// checks that they reach the same proven optimum, below Seq's value.
func TestSolversAgreeOnExample(t *testing.T) {
	objective := func(args ...string) (string, int64) {
		code, out, errs := optsched(t, "", append([]string{"solve", "-o", "json", "--max-jobs", "3"}, args...)...)
		if code != exitOK {
			t.Fatalf("solve %v: exit %d %s", args, code, errs)
		}
		var d output.ResultDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil || d.Objective == nil {
			t.Fatalf("solve %v: %v %s", args, err, out)
		}
		return d.Status, *d.Objective
	}
	st, opt := objective(example)
	if st != "optimal" {
		t.Fatalf("csp status %s", st)
	}
	if _, seq := objective("--heuristic", "seq", example); seq < opt {
		t.Errorf("seq %d beats the optimum %d", seq, opt)
	}
	if _, b := objective("--solver", "brute", example); b != opt {
		t.Errorf("brute %d, csp %d", b, opt)
	}
	// The free optimum (any node sets) is at most the SCAS optimum.
	if st, f := objective("--encoding", "dcas", example); st != "optimal" || f > opt {
		t.Errorf("--encoding dcas: %s %d, SCAS optimum %d", st, f, opt)
	}
	for _, args := range [][]string{
		{"--solver", "lpsolve", "--encoding", "scas"},
		{"--solver", "lpsolve", "--formulation", "paper"},
		{"--solver", "clp"},
	} {
		code, out, errs := optsched(t, "", append(append([]string{"solve", "-o", "json", "--max-jobs", "3"}, args...), example)...)
		if code != exitOK {
			if strings.Contains(errs, "without cgo") {
				continue
			}
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		var d output.ResultDoc
		json.Unmarshal([]byte(out), &d)
		if d.Bound == nil || *d.Bound > float64(opt)+1e-6 || *d.Objective < opt || (d.Status == "optimal" && *d.Objective != opt) {
			t.Errorf("%v: status %s objective %v bound %v, optimum %d", args, d.Status, *d.Objective, d.Bound, opt)
		}
	}
}

func TestExport(t *testing.T) {
	for _, f := range []string{"lp", "mps"} {
		code, out, errs := optsched(t, "", "export", "--format", f, "--max-jobs", "3", example)
		if code != exitOK {
			t.Fatalf("export %s: exit %d %s", f, code, errs)
		}
		want := map[string]string{"lp": "min:", "mps": "OBJSENSE"}[f]
		if !strings.Contains(out, want) || !strings.Contains(out, "cov_0") {
			t.Errorf("export %s lacks %q:\n%.300s", f, want, out)
		}
		code, out, errs = optsched(t, "", "export", "--encoding", "dcas", "--format", f, "--max-jobs", "3", example)
		if code != exitOK {
			t.Fatalf("export --encoding dcas %s: exit %d %s", f, code, errs)
		}
		if !strings.Contains(out, want) || !strings.Contains(out, "cap_") || !strings.Contains(out, "cost_0") || strings.Contains(out, "cov_0") {
			t.Errorf("export --encoding dcas %s is not the count program:\n%.300s", f, out)
		}
	}
	if code, _, errs := optsched(t, "", "export", "--encoding", "csp", example); code != exitUsage || !strings.Contains(errs, "--encoding must be scas or dcas") {
		t.Errorf("export --encoding csp: exit %d %s", code, errs)
	}
}

func TestSolveVerbose(t *testing.T) {
	code, _, errs := optsched(t, "", "solve", "-v", "-o", "json", example)
	if code != exitOK || !strings.Contains(errs, "incumbent") {
		t.Errorf("-v: exit %d, stderr %q", code, errs)
	}
}

// TestTimeLimitAlwaysAnswers: whatever the limit and the exact solver, the
// time-limited solve returns a valid allocation of every selected job.
func TestTimeLimitAlwaysAnswers(t *testing.T) {
	dir := t.TempDir()
	for _, win := range []string{example, "../../instances/fattree16-s7-i600.json"} {
		for _, limit := range []string{"1us", "10ms", "1s"} {
			for _, solverName := range []string{"csp", "lpsolve", "free"} {
				code, out, errs := optsched(t, "", "solve", "-o", "json", "--time-limit", limit, "--solver", solverName, win)
				if code != exitOK {
					if strings.Contains(errs, "without cgo") {
						continue
					}
					t.Fatalf("%s %s %s: exit %d %s", win, limit, solverName, code, errs)
				}
				var d output.ResultDoc
				if err := json.Unmarshal([]byte(out), &d); err != nil {
					t.Fatal(err)
				}
				switch d.Status {
				case "optimal", "fallback":
				case "feasible": // the exact incumbent stood against the fallback
					// lp_solve stopped with an incumbent (SUBOPTIMAL) gives
					// no bound (solver/lpsolve's doc); the others do.
					if (d.Bound == nil || d.Gap == nil) && solverName != "lpsolve" {
						t.Errorf("%s %s %s: feasible without bound and gap", win, limit, solverName)
					}
				default:
					t.Errorf("%s %s %s: status %s", win, limit, solverName, d.Status)
				}
				for _, def := range d.Deferred {
					if strings.Contains(def.Reason, "time limit") {
						t.Errorf("%s %s %s: job %s dropped for time", win, limit, solverName, def.Job)
					}
				}
				p := filepath.Join(dir, "r.json")
				os.WriteFile(p, []byte(out), 0o644)
				if code, _, errs := optsched(t, "", "validate", win, p); code != exitOK {
					t.Errorf("%s %s %s: validate: %s", win, limit, solverName, errs)
				}
			}
		}
	}
}

func TestSimulate(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.txt")
	os.WriteFile(tr, []byte("1 0 100 12\n2 5 50 30\n3 9 20 1\n4 30 60 8\n"), 0o644)
	for _, policy := range []string{"window", "fcfs", "easy"} {
		js := filepath.Join(dir, policy+".json")
		code, out, errs := optsched(t, "", "simulate", "--trace", tr, "--format", "lan", "--policy", policy, "--tau", "10s", "--json", js)
		if code != exitOK || !strings.Contains(out, "jobs run                   4") {
			t.Fatalf("%s: exit %d\n%s%s", policy, code, out, errs)
		}
		var sum map[string]any
		data, _ := os.ReadFile(js)
		if err := json.Unmarshal(data, &sum); err != nil || sum["jobs"] != 4.0 {
			t.Errorf("%s: json %s (%v)", policy, data, err)
		}
	}
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("1 0 100\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"simulate"}, exitUsage, "--trace is required"},
		{[]string{"simulate", "--trace", tr, "--tau", "1500ms"}, exitUsage, "whole number of seconds"},
		{[]string{"simulate", "--trace", tr, "--policy", "lottery"}, exitUsage, "--policy must be window or one of"},
		{[]string{"simulate", "--trace", filepath.Join(dir, "bad.txt"), "--format", "lan"}, exitError, "lan line 1: want 4 fields"},
	}
	for _, c := range cases {
		code, _, errs := optsched(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestCLIConventions: --version, exit 2 for what cobra refuses, exit 1 for
// an output that cannot be written.
func TestCLIConventions(t *testing.T) {
	if code, out, _ := optsched(t, "", "--version"); code != exitOK || !strings.HasPrefix(out, "optsched ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	for _, args := range [][]string{{"nope"}, {"bench", "merge"}, {"simulate", "--policy", "nope", "--trace", "x"}, {"solve", "--no-such-flag"}, {"pbs", "plan", "--solver", "sat"}} {
		if code, _, errs := optsched(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, errs)
		}
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	var errb strings.Builder
	if code := run([]string{"solve", "-o", "table", example}, strings.NewReader(""), full, &errb); code != exitError || !strings.Contains(errb.String(), "writing the output") {
		t.Errorf("solve > /dev/full: exit %d, %q", code, errb.String())
	}
}

// TestErrorsNameTheFlagGiven: an error about a value the user gave names
// the flag they gave, not the one it stood in for.
func TestErrorsNameTheFlagGiven(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pbs", "run", "--interval", "500ms", "--once"}, "--interval (the default --period) must be at least 1s"},
		{[]string{"pbs", "run", "--interval", "5s", "--period", "500ms"}, "--period must be at least 1s"},
	} {
		if _, _, errs := optsched(t, "", c.args...); !strings.Contains(errs, c.want) {
			t.Errorf("%v: %q, want %q", c.args, errs, c.want)
		}
	}
}

// TestFlagValueCompletion: shell completion offers the values of the
// flags that take a name.
func TestFlagValueCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "solve", "--solver", ""}, "csp"},
		{[]string{"__complete", "solve", "--encoding", ""}, "dcas"},
		{[]string{"__complete", "solve", "--fallback", ""}, "pbs"},
		{[]string{"__complete", "solve", "--fallback", ""}, "nsa"},
		{[]string{"__complete", "export", "--encoding", ""}, "dcas"},
		{[]string{"__complete", "solve", "-o", ""}, "table"},
		{[]string{"__complete", "pbs", "plan", "--partial", ""}, "first-fit"},
		{[]string{"__complete", "pbs", "run", "-o", ""}, "summary"},
		{[]string{"__complete", "simulate", "--policy", ""}, "easy"},
		{[]string{"__complete", "export", "-o", ""}, "mps"},
	} {
		if _, out, _ := optsched(t, "", c.args...); !strings.Contains(out, c.want+"\n") {
			t.Errorf("%v: %q lacks %s", c.args, out, c.want)
		}
	}
	for _, cmd := range [][]string{{"pbs", "plan"}, {"pbs", "run"}, {"slurm", "plan"}, {"slurm", "run"}, {"simulate"}} {
		args := append(append([]string{"__complete"}, cmd...), "--solver", "")
		if _, out, _ := optsched(t, "", args...); strings.Contains(out, "sat\n") || !strings.Contains(out, "free\n") {
			t.Errorf("%v --solver: %q, want the whole-node solvers only", cmd, out)
		}
	}
	// Every encoding solve takes, and only those export takes.
	_, out, _ := optsched(t, "", "__complete", "solve", "--encoding", "")
	for _, e := range catalog.Encodings() {
		if !strings.Contains(out, e+"\n") {
			t.Errorf("solve --encoding lacks %s: %q", e, out)
		}
	}
	if _, out, _ := optsched(t, "", "__complete", "export", "--encoding", ""); !strings.HasPrefix(out, "scas\ndcas\n:") {
		t.Errorf("export --encoding offers %q, want scas and dcas", out)
	}
}

// TestOutputFlag: -o is the output format of gen and export as of every
// command; -o FILE, the old spelling, still writes the file with a note.
func TestOutputFlag(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	if code, _, errs := optsched(t, "", "gen", "--jobs", "2", "-o", old); code != exitOK || !strings.Contains(errs, "deprecated") {
		t.Errorf("gen -o FILE: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(old); err != nil {
		t.Error(err)
	}
	if code, out, _ := optsched(t, "", "gen", "--jobs", "2", "-o", "json"); code != exitOK || !strings.HasPrefix(out, "{") {
		t.Errorf("gen -o json: exit %d, %.40q", code, out)
	}
	if _, err := os.Stat("json"); err == nil {
		t.Error("gen -o json wrote a file named json")
	}
	// Another command's format is refused, not a file of that name
	// (issue 36: gen -o table wrote a file named table).
	for _, args := range [][]string{{"gen", "--jobs", "2", "-o", "table"}, {"export", "-o", "json", example}} {
		if code, _, errs := optsched(t, "", args...); code != exitUsage || !strings.Contains(errs, "--out FILE") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
		if _, err := os.Stat(args[len(args)-1]); err == nil && args[0] == "gen" {
			t.Errorf("%v wrote a file", args)
		}
	}
	lp := filepath.Join(dir, "w.lp")
	if code, _, errs := optsched(t, "", "export", "-o", "lp", "--out", lp, example); code != exitOK {
		t.Errorf("export -o lp --out: exit %d, %s", code, errs)
	}
	if data, _ := os.ReadFile(lp); !strings.Contains(string(data), "min:") {
		t.Errorf("export -o lp wrote %.60q", data)
	}
}

// TestFlagErrorsInPlainWords: a flag value that does not parse is refused
// with what the flag wants, not the Go function that failed (issue 36:
// strconv.ParseUint in the message).
func TestFlagErrorsInPlainWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"solve", "--seed", "abc", example}, `"--seed" flag: want a non-negative integer`},
		{[]string{"gen", "--jobs", "x"}, `"--jobs" flag: want an integer`},
		{[]string{"solve", "--time-limit", "1x", example}, "want a duration with a unit"},
		{[]string{"solve", "--sa-tmax", "hot", example}, "want a number"},
	} {
		code, _, errs := optsched(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) || strings.Contains(errs, "strconv") || strings.Contains(errs, "time: ") {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errs, c.want)
		}
	}
}

// TestNaNFlagsRefused: NaN (and an infinite temperature) is refused by
// every number flag, where range checks alone let it through (issue 36:
// --sa-tmax NaN was accepted).
func TestNaNFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"solve", "--sa-tmax", "NaN", example},
		{"solve", "--sa-tmin", "nan", example},
		{"solve", "--sa-tmax", "+Inf", example},
		{"solve", "--encoding", "cp", "--ch-weight", "NaN", example},
		{"pbs", "plan", "--reserve-after", "NaN"},
	} {
		if code, _, errs := optsched(t, "", args...); code != exitUsage || !strings.Contains(errs, "--sa-t") && !strings.Contains(errs, "NaN is not a number") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
}
