//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/bench/limits"
)

// benchLimitsHere runs bench limits with args, its runs executing this
// test binary as optsched (TestMain in pbs_signal_test.go).
func benchLimitsHere(t *testing.T, args ...string) (out, errs string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	s := &streams{in: strings.NewReader(""), out: &o, err: &e}
	cmd := newBenchLimitsCmd(s, func(opts *benchLimitsOptions) error {
		opts.exe = os.Args[0]
		opts.childEnv = func(args []string) []string { return []string{"OPTSCHED_TEST_ARGS=" + strings.Join(args, "\x1f")} }
		return runBenchLimits(context.Background(), opts)
	})
	cmd.SetArgs(args)
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err = cmd.Execute()
	return o.String(), e.String(), err
}

// TestBenchLimitsSweep runs a tiny sweep end to end through child
// processes and checks its structure (cells, statuses, peaks), never its
// times.
func TestBenchLimitsSweep(t *testing.T) {
	file := filepath.Join(t.TempDir(), "runs.json")
	out, errs, err := benchLimitsHere(t, "--classes", "paper", "--solvers", "seq,csp-nofallback", "--limits", "10ms",
		"--windows", "1", "-o", "json", "--json", file, "-v")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	var sum limits.Report
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if sum.Benchmark != "limits" || len(sum.Runs) != 0 || len(sum.Cells) != 2 {
		t.Fatalf("summary: %+v", sum)
	}
	known := []string{"optimal", "feasible", "fallback", "infeasible", "unknown"}
	for _, c := range sum.Cells {
		if c.Class != "paper" || c.Limit.String() != "10ms" || c.Runs != 1 || c.Answered != 1 || len(c.Failures) != 0 || c.Unavailable != "" {
			t.Errorf("cell %s: %+v", c.Where(), c)
		}
		for s, n := range c.Statuses {
			if n != 1 || !slices.Contains(known, s) {
				t.Errorf("cell %s: statuses %v", c.Where(), c.Statuses)
			}
		}
		if runtime.GOOS == "linux" && (c.PeakRSSKiB == nil || *c.PeakRSSKiB <= 0) {
			t.Errorf("cell %s: peak RSS %v", c.Where(), c.PeakRSSKiB)
		}
	}
	if sum.Cells[0].Solver != "csp-nofallback" || sum.Cells[1].Solver != "seq" || sum.Cells[1].Statuses["feasible"] != 1 {
		t.Errorf("cells %+v", sum.Cells)
	}
	if strings.Count(errs, "paper/") != 2 {
		t.Errorf("-v: want a line per run:\n%s", errs)
	}
	var full limits.Report
	data, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &full)
	}
	if err != nil || len(full.Runs) != 2 || !slices.Contains(full.Runs[0].Args, "--max-jobs") || full.Runs[1].Args[len(full.Runs[1].Args)-3] != "-o" {
		t.Fatalf("--json: %v %+v", err, full.Runs)
	}

	// The table: a class's table, then the verdict.
	out, errs, err = benchLimitsHere(t, "--classes", "paper", "--solvers", "seq", "--limits", "10ms", "--windows", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	for _, want := range []string{"paper: the NSA paper's", "worst overshoot", "verdict", "failed runs: none"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestBenchLimitsUsage: bad flags are usage errors naming the flag.
func TestBenchLimitsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--classes", "huge"}, "--classes: unknown class \"huge\""},
		{[]string{"--solvers", "gurobi"}, "--solvers: unknown solver \"gurobi\""},
		{[]string{"--limits", "0s"}, "--limits must be positive"},
		{[]string{"--windows", "0"}, "--windows must be at least 1"},
		{[]string{"-o", "xml"}, "-o must be table or json"},
		{[]string{"--classes", "eurora", "--solvers", "seq"}, "--solvers: none of seq runs on the classes eurora"},
		{[]string{"--exe", "/no/such/optsched"}, "--exe /no/such/optsched"},
	} {
		code, _, errs := optsched(t, "", append([]string{"bench", "limits"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}
