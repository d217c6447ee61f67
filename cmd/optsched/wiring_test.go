package main

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/optsched/optsched/heuristics"
)

// TestSlurmCommandsWire: slurm plan and run parse their flags into
// slurmOptions and hand them to their run function (the tests' hook), and
// the run functions refuse bad flags with a usage error before anything is
// read (the input files do not exist).
func TestSlurmCommandsWire(t *testing.T) {
	s := &streams{in: nil, out: io.Discard, err: io.Discard}
	var got *slurmOptions
	capture := func(o *slurmOptions) error { got = o; return nil }
	cmd := newSlurmPlanCmd(s, capture)
	cmd.SetArgs([]string{"--solver", "free", "--fallback", "nsa", "--time-limit", "2s", "--partitions", "a,b", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.solver != "free" || got.fallback != "nsa" || got.timeLimit != 2*time.Second || len(got.partitions) != 2 || got.output != "json" {
		t.Fatalf("plan parsed %+v", got)
	}
	cmd = newSlurmRunCmd(s, capture)
	cmd.SetArgs([]string{"--once", "--interval", "1s"})
	if err := cmd.Execute(); err != nil || !got.once || got.interval != time.Second || got.output != "summary" {
		t.Fatalf("run parsed %+v, %v", got, err)
	}

	base := slurmOptions{streams: s, squeueFile: missing, sinfoFile: missing, topoFile: missing, solver: "csp", fallback: "sa",
		compact:   compactFlags{fraction: heuristics.DefaultCompactFraction, minNodes: heuristics.DefaultCompactMinNodes, mode: compactSinceSubmit},
		timeLimit: time.Second, output: "text"}
	for name, bad := range map[string]func(*slurmOptions){
		"fallback":   func(o *slurmOptions) { o.fallback = "bogus" },
		"solver":     func(o *slurmOptions) { o.solver = "sat" },
		"time limit": func(o *slurmOptions) { o.timeLimit = 0 },
		"output":     func(o *slurmOptions) { o.output = "yaml" },
	} {
		o := base
		bad(&o)
		var ue usageError
		if err := runSlurmPlan(context.Background(), &o); !errors.As(err, &ue) {
			t.Errorf("plan, bad %s: %v, want a usage error", name, err)
		}
		o.output = "summary"
		if name == "output" {
			o.output = "json"
		}
		o.once = true
		if err := runSlurmDaemon(context.Background(), &o); !errors.As(err, &ue) {
			t.Errorf("run, bad %s: %v, want a usage error", name, err)
		}
	}
	o := base
	if err := runSlurmPlan(context.Background(), &o); err == nil || errors.As(err, new(usageError)) {
		t.Errorf("good flags, missing files: %v, want a reading error", err)
	}
	if o.built == nil || o.built.Name() != "csp+sa" {
		t.Errorf("the window solver was not built before reading: %v", o.built)
	}
}

// TestBenchJoSHHWires: bench joshh hands its options to its run function.
func TestBenchJoSHHWires(t *testing.T) {
	var got *benchJoSHHOptions
	cmd := newBenchJoSHHCmd(&streams{out: io.Discard, err: io.Discard}, func(o *benchJoSHHOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--trace", "t.swf", "--drop-first", "3", "-o", "json"})
	if err := cmd.Execute(); err != nil || got == nil || got.trace != "t.swf" || got.dropFirst != 3 || got.output != "json" {
		t.Fatalf("parsed %+v, %v", got, err)
	}
	var ue usageError
	if err := runBenchJoSHH(context.Background(), &benchJoSHHOptions{streams: got.streams, output: "table"}); !errors.As(err, &ue) {
		t.Errorf("no --trace: %v", err)
	}
}
