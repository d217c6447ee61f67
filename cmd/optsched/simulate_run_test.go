package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simulateOpts parses args as `optsched simulate` does and returns its
// options, output going to out (the gh pattern: the command's run
// function is then called directly).
func simulateOpts(t *testing.T, out *bytes.Buffer, args ...string) *simulateOptions {
	t.Helper()
	var got *simulateOptions
	cmd := newSimulateCmd(&streams{out: out, err: out}, func(o *simulateOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(out)
	if err := cmd.Execute(); err != nil || got == nil {
		t.Fatalf("%v: %v", args, err)
	}
	return got
}

// TestRunSimulateDirect calls runSimulate on parsed options: the flag
// errors are usage errors found before the trace is read (a missing trace
// file is not reported), and a run on a three-job log prints its header
// and metrics (two 4-node jobs back to back, then a 1-node job: waits 0,
// 90 and 130 s under fcfs).
func TestRunSimulateDirect(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.swf")
	for _, bad := range [][]string{
		{"--policy", "fcfs", "--kill"},
		{"--policy", "fcfs", "--weights", "w.json"},
		{"--policy", "window", "--layout", "3x3"},
		{"--policy", "window", "--solver", "nope"},
		{"--policy", "easy", "--gap"},
		{"--policy", "cp", "--cp-search", "maybe"},
		{"--policy", "fcfs", "--queue-ewt", "1"},
	} {
		var out bytes.Buffer
		opts := simulateOpts(t, &out, append([]string{"--trace", missing}, bad...)...)
		var ue usageError
		if err := runSimulate(context.Background(), opts); !errors.As(err, &ue) || strings.Contains(err.Error(), "missing.swf") {
			t.Errorf("%v: %v, want a usage error before the trace is read", bad, err)
		}
	}

	dir := t.TempDir()
	tr := filepath.Join(dir, "t.swf")
	log := "; MaxNodes: 4\n" + swfJob("1", "0", "100", "4", "100", "1") + swfJob("2", "10", "50", "4", "50", "2") + swfJob("3", "20", "5", "1", "5", "1")
	if err := os.WriteFile(tr, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts := simulateOpts(t, &out, "--trace", tr, "--format", "swf", "--policy", "fcfs", "--layout", "1x1x4", "--queue-ewt", "1=60")
	if err := runSimulate(context.Background(), opts); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"cluster: 4 nodes (the log's MaxNodes), on a 1x1x4 layout", "policy fcfs, allocator first-fit; simulated in",
		"jobs run                   3", "mean wait                  73.3 s", "ewt queue 1 1m0s, others 1h0m0s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
