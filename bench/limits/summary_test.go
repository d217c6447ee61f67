package limits

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func kib(v int64) *int64 { return &v }

// run is a synthetic answered run of solver s on class c at limit l.
func run(c, s string, l time.Duration, status string, elapsedMS float64, rss int64) Run {
	return Run{Class: c, Solver: s, Limit: Duration(l), Bounded: c != "million", Status: status,
		ElapsedMS: elapsedMS, WallMS: elapsedMS + 40, MaxRSSKiB: kib(rss)}
}

// TestLimitsSummariseCell: overshoot is elapsed − limit over every answer
// (status unknown included), p99 and median by nearest rank, the peaks
// over every run; failures and statuses are counted apart.
func TestLimitsSummariseCell(t *testing.T) {
	ms10 := 10 * time.Millisecond
	runs := []Run{
		run("paper", "csp", ms10, "optimal", 5, 20_000),
		run("paper", "csp", ms10, "fallback", 12.5, 30_000),
		run("paper", "csp", ms10, "unknown", 70, 25_000),
		run("paper", "csp", ms10, "optimal", 9, 21_000),
		{Class: "paper", Solver: "csp", Limit: Duration(ms10), Window: 4, Bounded: true, WallMS: 900, MaxRSSKiB: kib(40_000),
			ExitCode: 2, Failure: "exit 2: boom"},
		run("paper", "seq", ms10, "feasible", 0.5, 19_000),
	}
	cells := Summarise(runs)
	if len(cells) != 2 {
		t.Fatalf("%d cells, want 2: %+v", len(cells), cells)
	}
	c := cells[0]
	if c.Where() != "paper/csp@10ms" || c.Runs != 5 || c.Answered != 4 {
		t.Errorf("cell %s: %d runs, %d answered", c.Where(), c.Runs, c.Answered)
	}
	if c.WorstOvershootMS != 60 || c.P99OvershootMS != 60 {
		t.Errorf("worst %v, p99 %v, want 60 and 60", c.WorstOvershootMS, c.P99OvershootMS)
	}
	// Elapsed 5, 9, 12.5, 70: the nearest-rank median is the second.
	if c.MedianElapsedMS != 9 {
		t.Errorf("median %v, want 9", c.MedianElapsedMS)
	}
	if c.WorstWallMS != 900 || c.PeakRSSKiB == nil || *c.PeakRSSKiB != 40_000 {
		t.Errorf("worst wall %v, peak %v: the failed run counts for both", c.WorstWallMS, c.PeakRSSKiB)
	}
	if got := StatusText(c.Statuses); got != "2 optimal, 1 fallback, 1 unknown" {
		t.Errorf("statuses %q", got)
	}
	if len(c.Failures) != 1 || c.Failures[0] != "window 4: exit 2: boom" {
		t.Errorf("failures %q", c.Failures)
	}
	if !c.OverDeadline() || c.OverMemory() {
		t.Errorf("over deadline %v, over memory %v", c.OverDeadline(), c.OverMemory())
	}
	if cells[1].WorstOvershootMS != -9.5 || cells[1].OverDeadline() {
		t.Errorf("seq: overshoot %v", cells[1].WorstOvershootMS)
	}
}

// TestLimitsP99IsNotTheMax: over 200 answers the p99 is the 198th smallest.
func TestLimitsP99IsNotTheMax(t *testing.T) {
	var runs []Run
	for i := range 200 {
		runs = append(runs, run("large", "sa", time.Millisecond, "feasible", float64(i+1), 1))
	}
	c := Summarise(runs)[0]
	// Overshoots 0 … 199 ms.
	if c.WorstOvershootMS != 199 || c.P99OvershootMS != 197 || c.MedianElapsedMS != 100 {
		t.Errorf("worst %v, p99 %v, median %v; want 199, 197, 100", c.WorstOvershootMS, c.P99OvershootMS, c.MedianElapsedMS)
	}
}

// TestLimitsJudge: the deadline is exceeded past 50 ms (not at it), the memory
// bound at 1 GiB on bounded classes only; the million class's peak is
// reported apart; a failure fails the verdict, an unavailable solver
// does not.
func TestLimitsJudge(t *testing.T) {
	s := time.Second
	runs := []Run{
		run("paper", "csp", s, "optimal", 1050, 100_000),             // +50 ms: on the bound
		run("large", "seq", s, "feasible", 1050.5, MemoryBoundKiB-1), // +50.5 ms
		run("large", "sa", s, "feasible", 10, MemoryBoundKiB),        // 1 GiB
		run("million", "seq", s, "feasible", 900, 3*MemoryBoundKiB),  // outside the promise
		{Class: "large", Solver: "lpsolve", Limit: Duration(s), Bounded: true, Unavailable: "lpsolve: built without cgo"},
		{Class: "paper", Solver: "lpsolve", Limit: Duration(s), Bounded: true, Unavailable: "lpsolve: built without cgo"},
	}
	v := Judge(Summarise(runs))
	if v.WorstOvershootMS != 50.5 || v.WorstOvershootAt != "large/seq@1s" {
		t.Errorf("worst overshoot %v at %q", v.WorstOvershootMS, v.WorstOvershootAt)
	}
	if strings.Join(v.OverDeadline, " ") != "large/seq@1s" {
		t.Errorf("over deadline %q", v.OverDeadline)
	}
	if v.WorstRSSKiB == nil || *v.WorstRSSKiB != MemoryBoundKiB || v.WorstRSSAt != "large/sa@1s" || strings.Join(v.OverMemory, " ") != "large/sa@1s" {
		t.Errorf("worst rss %v at %q, over %q", v.WorstRSSKiB, v.WorstRSSAt, v.OverMemory)
	}
	if v.UnboundedRSSKiB == nil || *v.UnboundedRSSKiB != 3*MemoryBoundKiB || v.UnboundedRSSAt != "million/seq@1s" {
		t.Errorf("unbounded rss %v at %q", v.UnboundedRSSKiB, v.UnboundedRSSAt)
	}
	if strings.Join(v.Unavailable, " ") != "lpsolve" || v.Failures != 0 || v.OK {
		t.Errorf("unavailable %q, failures %d, ok %v", v.Unavailable, v.Failures, v.OK)
	}

	// Within every bound, with an unavailable solver: OK; a failure: not.
	good := []Run{run("paper", "csp", s, "optimal", 1049, 50_000), runs[4]}
	if v := Judge(Summarise(good)); !v.OK || len(v.OverDeadline) != 0 || len(v.OverMemory) != 0 {
		t.Errorf("good runs: %+v", v)
	}
	good = append(good, Run{Class: "paper", Solver: "csp", Limit: Duration(s), Failure: "killed"})
	if v := Judge(Summarise(good)); v.OK || v.Failures != 1 || strings.Join(v.FailedCells, " ") != "paper/csp@1s" {
		t.Errorf("with a failure: %+v", v)
	}
	if v := Judge(nil); !v.OK || v.WorstOvershootAt != "" || v.WorstRSSKiB != nil {
		t.Errorf("no runs: %+v", v)
	}
}

// TestLimitsClassify: what the exit code and output of a run make of it.
func TestLimitsClassify(t *testing.T) {
	answer := func(status string) string {
		return `{"status": "` + status + `", "elapsed_ms": 12.5, "allocations": []}`
	}
	for _, c := range []struct {
		exit           int
		stdout, stderr string
		status         string
		unavailable    bool
		failure        string
	}{
		{0, answer("optimal"), "", "optimal", false, ""},
		{0, answer("fallback"), "", "fallback", false, ""},
		{1, answer("unknown"), "optsched: no allocation found within 1ms\n", "unknown", false, ""},
		{3, answer("infeasible"), "optsched: the selected jobs cannot be placed", "infeasible", false, ""},
		{1, "", "optsched: lpsolve: this optsched was built without cgo; lp_solve is unavailable\n", "", true, ""},
		{1, answer("optimal"), "optsched: odd\n", "", false, `exit 1 with status "optimal": optsched: odd`},
		{0, answer("unknown"), "", "", false, `exit 0 with status "unknown": (no output)`},
		{2, "", "\noptsched: --max-jobs applies to the whole-node model\nRun 'optsched help'\n", "", false, "exit 2: optsched: --max-jobs applies to the whole-node model"},
		{0, "status optimal", "", "", false, "exit 0 without a JSON answer: status optimal"},
		{0, `{"status": "optimal"}`, "", "", false, "exit 0 without a JSON answer: {\"status\": \"optimal\"}"},
		{2, "", "panic: boom\n\ngoroutine 1", "", false, "exit 2: panic: boom"},
	} {
		r := Run{ExitCode: c.exit}
		classify(&r, []byte(c.stdout), []byte(c.stderr))
		if r.Status != c.status || (r.Unavailable != "") != c.unavailable || r.Failure != c.failure {
			t.Errorf("exit %d, %q, %q: status %q, unavailable %q, failure %q", c.exit, c.stdout, c.stderr, r.Status, r.Unavailable, r.Failure)
		}
		if c.status != "" && (r.ElapsedMS != 12.5 || !r.Answered()) {
			t.Errorf("exit %d, %q: elapsed %v, answered %v", c.exit, c.stdout, r.ElapsedMS, r.Answered())
		}
	}
}

// TestLimitsStatusText lists the known statuses in order, then the others.
func TestLimitsStatusText(t *testing.T) {
	if got := StatusText(map[string]int{"unknown": 1, "weird": 2, "optimal": 3, "feasible": 0}); got != "3 optimal, 1 unknown, 2 weird" {
		t.Errorf("%q", got)
	}
	if got := StatusText(nil); got != "—" {
		t.Errorf("%q", got)
	}
}

// TestLimitsPrint: a table per class with the cells' figures, the failures and
// the verdict, with the marks of broken promises.
func TestLimitsPrint(t *testing.T) {
	s := time.Second
	runs := []Run{
		run("paper", "csp", s, "optimal", 1100, 30_000),
		run("large", "seq", s, "feasible", 2, 2*MemoryBoundKiB),
		{Class: "large", Solver: "lpsolve", Limit: Duration(s), Bounded: true, Unavailable: "no cgo"},
		{Class: "large", Solver: "sa", Limit: Duration(s), Window: 1, Bounded: true, Failure: "exit 2: panic: boom", WallMS: 5},
	}
	runs[0].RSSFloorKiB = kib(30_000)
	rep := Report{Cells: Summarise(runs), Seconds: 3}
	rep.Verdict = Judge(rep.Cells)
	var b strings.Builder
	if err := Print(&b, &rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"paper: the NSA paper's", "large: 8,192-node", "+100.000 ms !", "≤ 29.3 MiB", "2048.0 MiB !", "unavailable",
		"failed runs (1):\n  large/sa@1s window 1: exit 2: panic: boom",
		"worst overshoot +100.000 ms at paper/csp@1s; 1 of 4 cells over: paper/csp@1s",
		"worst 2048.0 MiB at large/seq@1s; 1 of 4 cells over: large/seq@1s",
		"not in this optsched (not judged): lpsolve", "did NOT hold (4 runs in 3.0 s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestLimitsReportJSON: limits read and write as duration strings, and a
// report survives a round trip.
func TestLimitsReportJSON(t *testing.T) {
	cfg := Config{Exe: "optsched", Limits: []time.Duration{time.Millisecond, time.Second}, Windows: 1,
		Classes: Classes()[:1], Solvers: Solvers()[:2]}
	rep := NewReport(&cfg, []Run{run("paper", "default", time.Millisecond, "optimal", 1.5, 10)}, time.Second)
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"limit":"1ms"`) || !strings.Contains(string(data), `"limits":["1ms","1s"]`) {
		t.Errorf("%s", data)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Runs[0].Limit != Duration(time.Millisecond) || back.Cells[0].Where() != "paper/default@1ms" || !back.Verdict.OK {
		t.Errorf("%+v", back)
	}
	if strings.Join(back.Solvers, ",") != "default,csp-nofallback" {
		t.Errorf("solvers %q", back.Solvers)
	}
}

// TestLimitsSelect: classes and solvers by name, unknown names refused with
// the known ones; a solver name stands for its rows in every family.
func TestLimitsSelect(t *testing.T) {
	cs, err := SelectClasses([]string{"eurora", " paper", "eurora"})
	if err != nil || len(cs) != 2 || cs[0].Name != "eurora" || cs[1].Name != "paper" || cs[1].Args[1] != "5" {
		t.Errorf("%+v, %v", cs, err)
	}
	if _, err := SelectClasses([]string{"huge"}); err == nil || !strings.Contains(err.Error(), "large-layout") {
		t.Errorf("unknown class: %v", err)
	}
	ss, err := SelectSolvers([]string{"seq", "default"})
	if err != nil || len(ss) != 3 || ss[0].Family != WholeNode || ss[2].Family != CP || ss[1].Args[1] != "seq" {
		t.Errorf("%+v, %v", ss, err)
	}
	if _, err := SelectSolvers([]string{"gurobi"}); err == nil || !strings.Contains(err.Error(), "mishra-adaptive") {
		t.Errorf("unknown solver: %v", err)
	}
	for _, c := range Classes() {
		if c.Bounded == slices.Contains([]string{"million", "million-jobs", "max-jobs"}, c.Name) {
			t.Errorf("class %s: bounded %v", c.Name, c.Bounded)
		}
	}
	cfg := Config{Classes: cs, Solvers: ss, Limits: DefaultLimits, Windows: 2}
	// eurora: default; paper: seq, default; 4 limits, 2 windows.
	if n := cfg.Runs(); n != 3*4*2 {
		t.Errorf("%d runs", n)
	}
}
