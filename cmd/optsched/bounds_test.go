package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// This file tests the bounds of issue 36 on every path, on windows made
// here, with the limits lowered so that the refusals are exercised
// without building the gigabytes they guard against.

// lowerLimit sets *p to v for the test.
func lowerLimit(t *testing.T, p *int64, v int64) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// allIdleWindow writes the window of the export case, scaled: a
// layout with every node idle and jobs waiting jobs, and returns its path.
func allIdleWindow(t *testing.T, l model.LayoutSpec, jobs int) string {
	t.Helper()
	cfg := instances.PaperGenConfig()
	cfg.Layout = &l
	cfg.Idle = l.Pods * l.LeavesPerPod * l.NodesPerLeaf
	cfg.Jobs = jobs
	w, err := instances.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := windowjson.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// refused checks that a command past a limit exits 1 having written
// nothing, naming the limit, the estimate and a remedy.
func refused(t *testing.T, name string, code int, stdout, stderr string, limit int64, remedy string) {
	t.Helper()
	if code != exitError || stdout != "" {
		t.Errorf("%s: exit %d with %d bytes written, want exit 1 and nothing: %s", name, code, len(stdout), stderr)
	}
	for _, want := range []string{fmt.Sprintf("limit of %d", limit), "docs/limits.md", "nothing was written", remedy} {
		if !strings.Contains(stderr, want) {
			t.Errorf("%s: stderr %q lacks %q", name, stderr, want)
		}
	}
}

// TestExportRefusesOnEstimate: an LP/MPS export whose program has more
// nonzeros than the limit, and a CNF export of more job-node options or
// literals, are refused before anything is built or written; the same
// window under the limits is exported.
func TestExportRefusesOnEstimate(t *testing.T) {
	path := allIdleWindow(t, model.LayoutSpec{Pods: 4, LeavesPerPod: 5, NodesPerLeaf: 10}, 5) // 200 nodes, all idle
	for _, f := range []string{"mps", "lp"} {
		code, out, errs := optsched(t, "", "export", "--format", f, path)
		if code != exitOK || out == "" {
			t.Fatalf("export %s under the limit: exit %d %s", f, code, errs)
		}
	}
	code, out, errs := optsched(t, "", "export", "--format", "cnf", path)
	if code != exitOK || !strings.HasPrefix(out, "c ") {
		t.Fatalf("export cnf under the limits: exit %d %s", code, errs)
	}
	cnfLits := int64(strings.Count(out, " ")) // at least the literals written

	lowerLimit(t, &outLimits.nonzeros, 1000)
	for _, f := range []string{"mps", "lp"} {
		code, out, errs := optsched(t, "", "export", "--format", f, path)
		refused(t, "export "+f, code, out, errs, 1000, "fewer idle nodes")
		if !strings.Contains(errs, "on 200 idle nodes would have nonzero coefficients") {
			t.Errorf("export %s: %s", f, errs)
		}
	}
	code, out, errs = optsched(t, "", "export", "--format", "mps", "--formulation", "paper", path)
	refused(t, "export paper", code, out, errs, 1000, "--formulation strong")

	lowerLimit(t, &outLimits.options, 999)
	code, out, errs = optsched(t, "", "export", "--format", "cnf", path)
	refused(t, "export cnf (options)", code, out, errs, 999, "optsched solve --encoding cp")
	if !strings.Contains(errs, "job-node options (jobs × usable nodes): 1000,") {
		t.Errorf("export cnf: %s", errs)
	}
	lowerLimit(t, &outLimits.options, MaxExportOptions)
	lowerLimit(t, &outLimits.literals, cnfLits/4)
	code, out, errs = optsched(t, "", "export", "--format", "cnf", path)
	refused(t, "export cnf (literals)", code, out, errs, cnfLits/4, "--granularity")
	// --out FILE: no file is created either.
	file := filepath.Join(t.TempDir(), "p.cnf")
	if code, _, _ := optsched(t, "", "export", "--format", "cnf", "--out", file, path); code != exitError {
		t.Errorf("export --out: exit %d", code)
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("export --out past the limit created %s", file)
	}
}

// TestGenRefusesOnEstimate: gen of more jobs than a window may hold is
// refused before generating (the issue's --jobs 10000000 --idle 10); one
// larger than an input optsched reads, before writing.
func TestGenRefusesOnEstimate(t *testing.T) {
	code, out, errs := optsched(t, "", "gen", "--jobs", "10000000", "--idle", "10")
	refused(t, "gen --jobs 10000000", code, out, errs, windowjson.MaxJobs, "generate fewer jobs")
	lowerLimit(t, &genLimits.jobs, 50)
	if code, out, errs := optsched(t, "", "gen", "--jobs", "50", "--idle", "10"); code != exitOK || !strings.Contains(out, `"jobs"`) {
		t.Errorf("gen at the limit: exit %d %s", code, errs)
	}
	code, out, errs = optsched(t, "", "gen", "--jobs", "51", "--idle", "10")
	refused(t, "gen --jobs 51", code, out, errs, 50, "generate fewer jobs")
	lowerLimit(t, &genLimits.bytes, 2000)
	code, out, errs = optsched(t, "", "gen", "--jobs", "40", "--idle", "10")
	refused(t, "gen of more bytes", code, out, errs, 2000, "generate fewer jobs or nodes")
}

// TestReadStopsEarly: solve and export read stdin or a device up to the
// first byte no JSON text holds, and say which.
func TestReadStopsEarly(t *testing.T) {
	zeros := string(make([]byte, 3<<20))
	for _, args := range [][]string{{"solve", "-"}, {"export", "-"}, {"solve", "--encoding", "cp", "-"}, {"solve", "/dev/zero"}} {
		in := zeros
		code, out, errs := optsched(t, in, args...)
		if code != exitError || out != "" || !strings.Contains(errs, "byte 0x00 at offset 0 cannot be part of JSON text") {
			t.Errorf("%v: exit %d %q", args, code, errs)
		}
	}
}

// TestDeadlineLimit: with --deadline the solve gets what reading left,
// less the reserve for writing, at most --time-limit when given; when
// reading took it all, a millisecond, and stderr says so.
func TestDeadlineLimit(t *testing.T) {
	w := &model.Window{Jobs: make([]model.Job, 1000)}
	var errb bytes.Buffer
	o := &solveOptions{streams: &streams{err: &errb, start: time.Now().Add(-2 * time.Second)}, timeLimit: 10 * time.Second, deadline: 3 * time.Second}
	if got := o.solveLimit(w); got > time.Second-writeReserve(w) || got < 500*time.Millisecond {
		t.Errorf("2 s read of a 3 s deadline: limit %v", got)
	}
	o.timeLimit, o.timeLimitSet = 100*time.Millisecond, true
	if got := o.solveLimit(w); got != 100*time.Millisecond {
		t.Errorf("with --time-limit 100ms: limit %v", got)
	}
	o.streams.start = time.Now().Add(-5 * time.Second)
	if got := o.solveLimit(w); got != time.Millisecond || !strings.Contains(errb.String(), "of the --deadline 3s, leaving no time to solve") {
		t.Errorf("past the deadline: limit %v, stderr %q", got, errb.String())
	}
	o.deadline = 0
	if got := o.solveLimit(w); got != 100*time.Millisecond {
		t.Errorf("without --deadline: limit %v", got)
	}
	// In the command: an answer within the deadline, and a usage error
	// for a negative one.
	code, out, errs := optsched(t, "", "solve", "--deadline", "30s", "-o", "json", example)
	if code != exitOK || !strings.Contains(out, `"status"`) {
		t.Errorf("solve --deadline 30s: exit %d %s", code, errs)
	}
	if code, _, errs := optsched(t, "", "solve", "--deadline", "-1s", example); code != exitUsage || !strings.Contains(errs, "--deadline must be positive") {
		t.Errorf("--deadline -1s: exit %d %s", code, errs)
	}
	code, out, errs = optsched(t, "", "solve", "--encoding", "cp", "--deadline", "30s", "-o", "json", "../../instances/eurora-example.json")
	if code != exitOK || !strings.Contains(out, `"status"`) {
		t.Errorf("solve --encoding cp --deadline 30s: exit %d %s", code, errs)
	}
}

// TestNoFallbackSaysWhy: sat with --fallback none that finds nothing in
// time says the solver's reason, not the bare time limit.
func TestNoFallbackSaysWhy(t *testing.T) {
	for _, limit := range []string{"1ms", "20ms", "200ms"} {
		code, _, errs := optsched(t, "", "solve", "--encoding", "cp", "--solver", "sat", "--fallback", "none", "--time-limit", limit, "-o", "json", "../../instances/eurora-example.json")
		if code == exitError && (strings.Contains(errs, "no schedule found within") || !strings.Contains(errs, "no schedule: ")) {
			t.Errorf("--time-limit %s: %q", limit, errs)
		}
	}
}
