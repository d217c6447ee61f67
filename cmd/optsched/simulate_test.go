package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// swfJob is one SWF line: id, submit, wait, run, procs, then the
// requested time and the queue; the other fields unknown (−1).
func swfJob(id, submit, run, procs, req, queue string) string {
	f := []string{id, submit, "-1", run, procs, "-1", "-1", procs, req, "-1", "1", "1", "1", "1", queue, "-1", "-1", "-1"}
	return strings.Join(f, " ") + "\n"
}

// TestSimulateBridiFlags runs FCFS on an SWF log with two queues on one
// 4-node leaf: A (queue 1, 4 nodes, 0–100 s); B (queue 2, 4 nodes, 50 s, at
// 10) waits 90 s; C (queue 1, 1 node, at 20) waits behind B until 150,
// 130 s. With --queue-ewt 1=60,2=2m: WQT = 0/60 + 90/120 + 130/60, and C
// alone is late, by 70 s. Without it, every queue takes --default-ewt.
func TestSimulateBridiFlags(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.swf")
	log := "; MaxNodes: 4\n" + swfJob("1", "0", "100", "4", "100", "1") + swfJob("2", "10", "50", "4", "50", "2") + swfJob("3", "20", "5", "1", "5", "1")
	os.WriteFile(tr, []byte(log), 0o644)
	run := func(extra ...string) map[string]any {
		t.Helper()
		js := filepath.Join(dir, "s.json")
		args := append([]string{"simulate", "--trace", tr, "--format", "swf", "--policy", "fcfs", "--layout", "1x1x4", "--json", js}, extra...)
		code, out, errs := optsched(t, "", args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", extra, code, out, errs)
		}
		for _, want := range []string{"weighted queue time (WQT)", "late jobs (NL)", "tardiness (TR)", "allocator first-fit"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", extra, want, out)
			}
		}
		var sum map[string]any
		data, _ := os.ReadFile(js)
		if err := json.Unmarshal(data, &sum); err != nil {
			t.Fatalf("json %s: %v", data, err)
		}
		return sum
	}
	sum := run("--queue-ewt", "1=60, 2=2m")
	if wqt := sum["wqt"].(float64); wqt < 90.0/120+130.0/60-1e-9 || wqt > 90.0/120+130.0/60+1e-9 || sum["late_jobs"] != 1.0 || sum["tardiness_s"] != 70.0 {
		t.Errorf("--queue-ewt 1=60,2=2m: %v", sum)
	}
	if _, ok := sum["gap"]; ok {
		t.Errorf("a gap without --gap: %v", sum)
	}
	// Default 1 h: nobody late; WQT = 220/3600.
	sum = run()
	if wqt := sum["wqt"].(float64); wqt < 220.0/3600-1e-9 || wqt > 220.0/3600+1e-9 || sum["late_jobs"] != 0.0 || sum["tardiness_s"] != 0.0 {
		t.Errorf("default ewt: %v", sum)
	}
	// --default-ewt 100s: B (90 s) is on time, C (130 s) 30 s late.
	sum = run("--default-ewt", "100s")
	if sum["late_jobs"] != 1.0 || sum["tardiness_s"] != 30.0 {
		t.Errorf("--default-ewt 100s: %v", sum)
	}
}

func TestSimulateAllocatorAndGap(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.txt")
	os.WriteFile(tr, []byte("1 0 100 12\n2 5 50 30\n3 9 20 1\n4 30 60 8\n5 31 60 6\n"), 0o644)
	for _, alloc := range []string{"first-fit", "slurm", "mishra-greedy", "mishra-balanced", "mishra-adaptive"} {
		code, out, errs := optsched(t, "", "simulate", "--trace", tr, "--format", "lan", "--policy", "easy", "--allocator", alloc)
		if code != exitOK || !strings.Contains(out, "allocator "+alloc) || !strings.Contains(out, "jobs run                   5") {
			t.Errorf("--allocator %s: exit %d\n%s%s", alloc, code, out, errs)
		}
	}
	js := filepath.Join(dir, "gap.json")
	code, out, errs := optsched(t, "", "simulate", "--trace", tr, "--format", "lan", "--policy", "window", "--tau", "10s", "--heuristic", "seq", "--gap", "--json", js,
		"--plot", filepath.Join(dir, "fig"))
	if code != exitOK || !strings.Contains(out, "gap to csp") || !strings.Contains(out, "windows solved optimally") {
		t.Fatalf("--gap: exit %d\n%s%s", code, out, errs)
	}
	for _, f := range []string{"sim-wait.png", "sim-cost.svg", "sim-latency.png", "sim-gap.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "fig", f)); err != nil || st.Size() < 500 || !strings.Contains(out, f) {
			t.Errorf("--plot: %s: %v (output lists it: %v)", f, err, strings.Contains(out, f))
		}
	}
	var sum struct {
		Gap *struct {
			Solver       string  `json:"solver"`
			Windows      int     `json:"windows"`
			MeanGap      float64 `json:"mean_gap"`
			MaxGap       float64 `json:"max_gap"`
			OptimalShare float64 `json:"optimal_share"`
		} `json:"gap"`
	}
	data, _ := os.ReadFile(js)
	if err := json.Unmarshal(data, &sum); err != nil || sum.Gap == nil || sum.Gap.Solver != "csp" || sum.Gap.Windows == 0 ||
		sum.Gap.MeanGap < 0 || sum.Gap.MaxGap < sum.Gap.MeanGap || sum.Gap.OptimalShare < 0 || sum.Gap.OptimalShare > 1 {
		t.Errorf("--gap json %s (%v)", data, err)
	}

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "easy", "--allocator", "best"}, `--allocator must be one of first-fit, mishra-adaptive, mishra-balanced, mishra-greedy, slurm, got "best"`},
		{[]string{"--policy", "window", "--allocator", "slurm"}, "--allocator slurm is for the per-job policies"},
		{[]string{"--allocator", "mishra-greedy"}, "--allocator mishra-greedy is for the per-job policies"}, // window is the default policy
		{[]string{"--policy", "easy", "--gap"}, "--gap measures the window solver's gap and needs --policy window, not easy"},
		{[]string{"--queue-ewt", "1=1h,2"}, `--queue-ewt "1=1h,2": entry "2" is not QUEUE=DURATION`},
		{[]string{"--queue-ewt", "=5m"}, `--queue-ewt "=5m": entry "=5m" is not QUEUE=DURATION`},
		{[]string{"--queue-ewt", "1=soon"}, `--queue-ewt "1=soon": queue "1": "soon" is not a duration`},
		{[]string{"--queue-ewt", "1=0s"}, `--queue-ewt "1=0s": queue "1": duration "0s" is not a positive whole number of seconds`},
		{[]string{"--queue-ewt", "1=-5"}, `--queue-ewt "1=-5": queue "1": duration "-5" is not positive`},
		{[]string{"--queue-ewt", "1=1.5s"}, `queue "1": duration "1.5s" is not a positive whole number of seconds`},
		{[]string{"--queue-ewt", "1=1h,1=2h"}, `--queue-ewt "1=1h,1=2h": queue "1" given twice`},
		{[]string{"--default-ewt", "0s"}, "--default-ewt must be a positive whole number of seconds, got 0s"},
		{[]string{"--default-ewt", "500ms"}, "--default-ewt must be a positive whole number of seconds, got 500ms"},
	}
	for _, c := range cases {
		args := append([]string{"simulate", "--trace", tr, "--format", "lan"}, c.args...)
		code, _, errs := optsched(t, "", args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, exitUsage, c.want)
		}
	}
}

// swfLine writes an SWF record from the fields the reader uses.
func swfLine(id, submit, run, alloc, req, reqTime, status string) string {
	return strings.Join([]string{id, submit, "-1", run, alloc, "-1", "-1", req, reqTime, "-1", status, "1", "1", "-1", "1", "-1", "-1", "-1"}, " ") + "\n"
}

// TestSimulateArchiveRecords: a log written as the archive writes them —
// no MaxNodes or MaxProcs, run times 0 and -1, failed and cancelled jobs,
// a checkpointed job's parts after its summary line — replays with the
// default flags; the first line counts the records by what happened to
// them and the second says where the cluster size comes from. --strict
// keeps the old reading; a log without jobs is an error unless
// --allow-empty, also 100 KB of binary with --skip-bad.
func TestSimulateArchiveRecords(t *testing.T) {
	dir := t.TempDir()
	log := "; Version: 2.2\n; Computer: test\n" +
		swfLine("1", "0", "100", "4", "4", "200", "1") +
		swfLine("2", "5", "0", "2", "2", "60", "1") + // ran < 0.5 s
		swfLine("3", "9", "-1", "3", "3", "120", "1") + // run time unknown
		swfLine("4", "12", "-1", "-1", "6", "600", "5") + // cancelled before start
		swfLine("5", "15", "40", "8", "8", "600", "5") + // cancelled after 40 s
		swfLine("6", "20", "70", "6", "6", "600", "0") + // failed
		swfLine("7", "25", "90", "5", "5", "600", "1") + // a checkpointed job
		swfLine("7", "25", "50", "5", "5", "600", "2") +
		swfLine("7", "25", "40", "5", "5", "600", "3")
	path := filepath.Join(dir, "odd.swf")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{"easy", "window"} {
		code, out, errs := optsched(t, "", "simulate", "--trace", path, "--policy", policy, "--tau", "10s")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", policy, code, errs)
		}
		for _, want := range []string{
			"6 replayed (1 ran under 0.5 s, 1 run time unknown, requested time used, 1 failed, 1 cancelled after starting)",
			"1 cancelled before they started (skipped)",
			"2 partial-execution records",
			"0 malformed; 0 larger than the cluster dropped",
			"cluster: 8 nodes (the log's header gives neither MaxNodes nor MaxProcs: its largest job's size stands in)",
			"jobs run                   6",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", policy, want, out)
			}
		}
	}
	if code, _, errs := optsched(t, "", "simulate", "--trace", path, "--strict", "--policy", "fcfs"); code != exitError ||
		!strings.Contains(errs, "swf line 4: field 4 (run time): 0 is not positive") {
		t.Errorf("--strict: exit %d, %s", code, errs)
	}
	empty := filepath.Join(dir, "empty.swf")
	os.WriteFile(empty, []byte("; MaxNodes: 10\n"), 0o644)
	if code, _, errs := optsched(t, "", "simulate", "--trace", empty, "--policy", "fcfs"); code != exitError || !strings.Contains(errs, "no jobs in the input") {
		t.Errorf("empty log: exit %d, %s", code, errs)
	}
	if code, out, errs := optsched(t, "", "simulate", "--trace", empty, "--policy", "fcfs", "--allow-empty"); code != exitOK || !strings.Contains(out, "0 replayed") {
		t.Errorf("empty log, --allow-empty: exit %d, %s%s", code, out, errs)
	}
	bin := make([]byte, 100<<10)
	for i := range bin {
		bin[i] = byte(i*131 + i>>7)
	}
	binPath := filepath.Join(dir, "noise.swf")
	os.WriteFile(binPath, bin, 0o644)
	if code, _, errs := optsched(t, "", "simulate", "--trace", binPath, "--skip-bad", "--policy", "fcfs"); code != exitError ||
		!strings.Contains(errs, "no jobs in the input") {
		t.Errorf("binary with --skip-bad: exit %d, %s", code, errs)
	}
	bad := filepath.Join(dir, "bad.swf")
	os.WriteFile(bad, []byte("; MaxNodes: 0\n"+swfLine("1", "0", "10", "1", "1", "10", "1")), 0o644)
	if code, _, errs := optsched(t, "", "simulate", "--trace", bad, "--policy", "fcfs"); code != exitError ||
		!strings.Contains(errs, `swf line 1: header MaxNodes: "0" is not a count`) || strings.Contains(errs, "--layout") {
		t.Errorf("MaxNodes 0: exit %d, %s", code, errs)
	}
}

// TestSimulateCP runs --policy cp on the log of TestSimulateBridiFlags: A
// runs alone (B and C arrive to no free node); at A's end (100) the bsld
// weights (C's request 5 s, B's 50 s) start C first, B at its end (105):
// waits 0, 95 and 80 s. The cp flags are checked.
func TestSimulateCP(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.swf")
	log := "; MaxNodes: 4\n" + swfJob("1", "0", "100", "4", "100", "1") + swfJob("2", "10", "50", "4", "50", "2") + swfJob("3", "20", "5", "1", "5", "1")
	os.WriteFile(tr, []byte(log), 0o644)
	base := []string{"simulate", "--trace", tr, "--format", "swf", "--policy", "cp", "--layout", "1x1x4"}
	js := filepath.Join(dir, "s.json")
	code, out, errs := optsched(t, "", append(base, "--time-limit", "50ms", "--cp-objective", "bsld", "--cp-jobs", "8", "--json", js)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	var sum map[string]any
	data, _ := os.ReadFile(js)
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatalf("json %s: %v", data, err)
	}
	if w := sum["mean_wait_s"].(float64); w < 175.0/3-1e-9 || w > 175.0/3+1e-9 {
		t.Errorf("mean wait %v s, want 175/3", w)
	}
	for _, want := range []string{"policy cp", "objective bsld, 8 jobs, backfilling the next 256, 50ms per decision", "jobs run                   3", "decisions"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// --cp-backfill: with a window of one job, B (4 nodes) cannot start
	// beside A (3 of 4 nodes) at 20, and C (1 node, 5 s) starts then
	// only when backfilled: waits 0, 90, 0 s; without backfilling C
	// waits for B's end (150): 0, 90, 130 s.
	for _, c := range []struct {
		backfill, note string
		mean           float64
	}{{"1", "1 jobs, backfilling the next 1,", 30}, {"0", "1 jobs, no backfilling,", 220.0 / 3}} {
		log := "; MaxNodes: 4\n" + swfJob("1", "0", "100", "3", "100", "1") + swfJob("2", "10", "50", "4", "50", "2") + swfJob("3", "20", "5", "1", "5", "1")
		os.WriteFile(tr, []byte(log), 0o644)
		code, out, errs := optsched(t, "", append(base, "--cp-jobs", "1", "--cp-backfill", c.backfill, "--json", js)...)
		if code != exitOK {
			t.Fatalf("--cp-backfill %s: exit %d\n%s%s", c.backfill, code, out, errs)
		}
		var sum map[string]any
		data, _ := os.ReadFile(js)
		if err := json.Unmarshal(data, &sum); err != nil {
			t.Fatalf("json %s: %v", data, err)
		}
		if w := sum["mean_wait_s"].(float64); math.Abs(w-c.mean) > 1e-9 || !strings.Contains(out, c.note) {
			t.Errorf("--cp-backfill %s: mean wait %v s, want %v; output lacks %q?\n%s", c.backfill, w, c.mean, c.note, out)
		}
	}
	for _, bad := range [][]string{{"--cp-objective", "x"}, {"--cp-jobs", "0"}, {"--cp-backfill", "-1"}, {"--time-limit", "0s"}} {
		if code, out, errs := optsched(t, "", append(base, bad...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want usage\n%s%s", bad, code, out, errs)
		}
	}
}

// TestSimulateClusterSizeSaid: a --layout smaller than the log's MaxNodes
// is the cluster, and the line says so (KTH: MaxNodes 100, a 10-node
// layout drops the larger jobs); a headerless log whose one job is too
// large for any layout is an error about the log (exit 1), not about
// --layout, which was never given.
func TestSimulateClusterSizeSaid(t *testing.T) {
	code, out, errs := optsched(t, "", "simulate", "--trace", "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz", "--layout", "1x1x10", "--policy", "easy")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "cluster: 10 nodes (--layout 1x1x10, smaller than the log's MaxNodes of 100") || strings.Contains(out, "100 nodes") {
		t.Errorf("cluster line:\n%s", out)
	}
	big := filepath.Join(t.TempDir(), "big.swf")
	os.WriteFile(big, []byte("1 0 0 100 3000000 -1 -1 3000000 100 -1 1 1 1 1 1 -1 -1 -1\n"), 0o644)
	code, _, errs = optsched(t, "", "simulate", "--trace", big, "--format", "swf")
	if code != exitError || strings.Contains(errs, "--layout:") || !strings.Contains(errs, "largest job") || !strings.Contains(errs, "give --layout") {
		t.Errorf("headerless log with a huge job: exit %d, %s", code, errs)
	}
}

// TestSimulateBruteFallsBack: simulate --solver brute no longer aborts at
// the first window it cannot enumerate: its fallback answers, and the
// windows are counted (KTH's first 300 jobs hold some).
func TestSimulateBruteFallsBack(t *testing.T) {
	code, out, errs := optsched(t, "", "simulate", "--trace", "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz",
		"--policy", "window", "--solver", "brute", "--max-trace-jobs", "300", "--time-limit", "100ms")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`windows too large for brute +[1-9][0-9]* \(answered by its fallback\)`).MatchString(out) {
		t.Errorf("no count of the windows too large:\n%s", out)
	}
}

// TestSimulateLearnedAnyLog: every learned policy runs on a log it has no
// weights of its own for (KTH SP2) with the shipped weights its help
// names, and says which it used; on Lublin-1 and HPC2N each uses that
// log's own where it has them.
func TestSimulateLearnedAnyLog(t *testing.T) {
	const (
		kth    = "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz"
		lublin = "../../instances/traces/lublin_256.swf.gz"
		hpc2n  = "../../instances/traces/HPC2N-2002-2.1-cln.swf.gz"
	)
	cases := []struct{ trace, policy, weights string }{
		{kth, "rlscheduler", "hpc2n"},
		{kth, "rlschert", "hpc2n"},
		{kth, "joshh", "lublin-1"},
		{lublin, "rlscheduler", "lublin-1"},
		{lublin, "rlschert", "lublin-1"},
		{lublin, "joshh", "lublin-1"},
		{hpc2n, "rlscheduler", "hpc2n"},
		{hpc2n, "rlschert", "hpc2n"},
		{hpc2n, "joshh", "hpc2n"},
	}
	for _, c := range cases {
		code, out, errs := optsched(t, "", "simulate", "--trace", c.trace, "--policy", c.policy, "--max-trace-jobs", "200")
		want := fmt.Sprintf("the shipped %s weights of %s;", c.policy, c.weights)
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("%s on %s: exit %d, want %q in\n%s%s", c.policy, c.trace, code, want, out, errs)
		}
	}
}
