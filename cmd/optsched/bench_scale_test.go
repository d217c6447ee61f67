package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBenchScaleSWF: the shipped KTH SP2 log scaled to 2,048 nodes and
// 30,000 jobs simulates on the cluster its largest job implies, every job
// replayed, with the window policy's default time limit for that size.
func TestBenchScaleSWF(t *testing.T) {
	out := filepath.Join(t.TempDir(), "kth.swf")
	code, _, errs := optsched(t, "", "bench", "scale-swf", "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz", "--nodes", "2048", "--jobs", "30000", "-o", out)
	if code != 0 {
		t.Fatalf("scale-swf: exit %d: %s", code, errs)
	}
	code, stdout, errs := optsched(t, "", "simulate", "--trace", out, "--policy", "fcfs")
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errs)
	}
	for _, want := range []string{"30000 replayed", "cluster: 2048 nodes (the log's header gives neither MaxNodes nor MaxProcs", "jobs run                   30000"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("simulate's output lacks %q:\n%s", want, stdout)
		}
	}
	code, _, errs = optsched(t, "", "bench", "scale-swf", "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz", "--nodes", "-1")
	if code != exitUsage || !strings.Contains(errs, "--nodes must be") {
		t.Errorf("--nodes -1: exit %d, %s", code, errs)
	}
}

// TestWindowTimeLimitAtScale: the window policy's default limit per
// window is 10 s up to 10,000 nodes and 10 ms above, unless --time-limit
// is given.
func TestWindowTimeLimitAtScale(t *testing.T) {
	opts := &simulateOptions{timeLimit: 10e9}
	if got := opts.windowTimeLimit(10000); got != 10e9 {
		t.Errorf("10,000 nodes: %v", got)
	}
	if got := opts.windowTimeLimit(32768); got != scaleTimeLimit {
		t.Errorf("32,768 nodes: %v", got)
	}
	opts.timeLimitSet = true
	if got := opts.windowTimeLimit(32768); got != 10e9 {
		t.Errorf("32,768 nodes, --time-limit 10s: %v", got)
	}
}

// TestProgressLines: off a terminal, a long run says how far it is and
// how long it has left.
func TestProgressLines(t *testing.T) {
	var b strings.Builder
	hook := progressLines(&b, "simulate easy", time.Now().Add(-time.Minute), 0)
	hook(1, 128) // not a 64th start: no clock read
	hook(64, 128)
	if got := b.String(); !strings.Contains(got, "simulate easy: 64/128 jobs started after 1m0s, eta 1m0s") {
		t.Errorf("progress %q", got)
	}
}

// TestCPSearchAtScale: the cp policy searches by default up to 10,000
// nodes and decides with its list schedules alone above, unless
// --cp-search says otherwise.
func TestCPSearchAtScale(t *testing.T) {
	for _, c := range []struct {
		flag  string
		nodes int
		want  bool
	}{{"auto", 10000, false}, {"auto", 32768, true}, {"on", 32768, false}, {"off", 100, true}} {
		opts := &simulateOptions{cpSearch: c.flag}
		if got := opts.cpNoSearch(c.nodes); got != c.want {
			t.Errorf("--cp-search %s, %d nodes: no search %v, want %v", c.flag, c.nodes, got, c.want)
		}
	}
}
