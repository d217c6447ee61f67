package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchShardAndMerge runs bench scas in two shards and whole, and
// checks that bench merge of the shards prints the whole run's gaps.
func TestBenchShardAndMerge(t *testing.T) {
	dir := t.TempDir()
	args := []string{"bench", "scas", "--classes", "paper", "--windows", "6", "--solvers", "csp,seq"}
	var files []string
	for _, sh := range []string{"0/2", "1/2"} {
		f := filepath.Join(dir, strings.ReplaceAll(sh, "/", "-")+".json")
		files = append(files, f)
		if code, _, errs := optsched(t, "", append(args, "--shard", sh, "--json", f)...); code != 0 {
			t.Fatalf("shard %s: exit %d: %s", sh, code, errs)
		}
	}
	code, whole, errs := optsched(t, "", append(args, "--csv", filepath.Join(dir, "whole.csv"))...)
	if code != 0 {
		t.Fatalf("whole: exit %d: %s", code, errs)
	}
	code, merged, errs := optsched(t, "", append([]string{"bench", "merge", "--json", filepath.Join(dir, "m.json")}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	// The seq line's gap columns (everything after the p99) must agree.
	gaps := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 8 && f[1] == "seq" {
				return strings.Join(f[len(f)-5:], " ")
			}
		}
		t.Fatalf("no seq row in %q", out)
		return ""
	}
	if gaps(whole) != gaps(merged) || strings.Contains(gaps(whole), "0% 0.0000%") {
		t.Fatalf("whole %q, merged %q", gaps(whole), gaps(merged))
	}
	for _, f := range []string{"whole.csv", "m.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	// Overlapping shards, bad --shard, not a report.
	if code, _, errs := optsched(t, "", "bench", "merge", files[0], files[0]); code == 0 || !strings.Contains(errs, "overlapping") {
		t.Fatalf("overlap: exit %d: %s", code, errs)
	}
	if code, _, errs := optsched(t, "", append(args, "--shard", "2/2")...); code != exitUsage || !strings.Contains(errs, "--shard") {
		t.Fatalf("bad shard: exit %d: %s", code, errs)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"benchmark": "scas", "bogus": 1}`), 0o644)
	if code, _, errs := optsched(t, "", "bench", "merge", bad); code == 0 || !strings.Contains(errs, "not a bench scas --json report") {
		t.Fatalf("bad report: exit %d: %s", code, errs)
	}
}

// TestBenchLayoutClass: the large-layout class runs (seq alone, one
// window: generating it is the test) and an unknown class is a usage
// error naming the flag and the classes.
func TestBenchLayoutClass(t *testing.T) {
	code, out, errs := optsched(t, "", "bench", "scas", "--classes", "large-layout", "--windows", "1", "--solvers", "seq")
	if code != 0 || !strings.Contains(out, "large-layout") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	code, _, errs = optsched(t, "", "bench", "scas", "--classes", "huge", "--windows", "1", "--solvers", "seq")
	if code != exitUsage || !strings.Contains(errs, "--classes") || !strings.Contains(errs, "large-layout") {
		t.Fatalf("unknown class: exit %d: %s", code, errs)
	}
}

// TestBenchCP draws a small corpus, solves it, saves its windows and
// reads them back, and refuses bad flags with usage errors.
func TestBenchCP(t *testing.T) {
	dir := t.TempDir()
	saved, js := filepath.Join(dir, "w"), filepath.Join(dir, "cp.json")
	args := []string{"bench", "cp", "--seed", "4", "--jobs", "80", "--interarrival", "20", "--min-jobs", "3", "--sample", "3", "--time-limit", "100ms"}
	code, out, errs := optsched(t, "", append(args, "--solvers", "sat,pbs-fifo", "--json", js, "--save-windows", saved)...)
	if code != 0 || !strings.Contains(out, "3 decision windows with ≥ 3 waiting jobs") || strings.Count(out, " all ") != 2 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	var res []struct {
		Window, Solver, Status string
		Gap                    *float64
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &res) != nil || len(res) != 6 || res[0].Gap == nil {
		t.Fatalf("json: %v %+v", err, res)
	}
	files, _ := filepath.Glob(filepath.Join(saved, "*.json"))
	if len(files) != 3 {
		t.Fatalf("saved %v", files)
	}
	code, out, errs = optsched(t, "", "bench", "cp", "--solvers", "pbs-walltime", "--time-limit", "100ms", saved)
	if code != 0 || !strings.Contains(out, "3 window files") || !strings.Contains(out, "pbs-walltime") {
		t.Fatalf("from files: exit %d: %s%s", code, out, errs)
	}
	for _, bad := range [][]string{
		{"--sample", "-1"}, {"--min-jobs", "-2"}, {"--jobs", "0"}, {"--interarrival", "NaN"},
		{"--time-limit", "0s"}, {"--solvers", "csp"}, {"--granularity", "0s"},
	} {
		if code, _, errs := optsched(t, "", append(args, bad...)...); code != exitUsage || !strings.Contains(errs, bad[0]) {
			t.Errorf("%v: exit %d: %s", bad, code, errs)
		}
	}
	if code, _, errs := optsched(t, "", "bench", "cp", filepath.Join(dir, "nope.json")); code == 0 || !strings.Contains(errs, "nope.json") {
		t.Errorf("missing file: exit %d: %s", code, errs)
	}
	if code, _, errs := optsched(t, "", append(args, "--min-jobs", "1000")...); code == 0 || !strings.Contains(errs, "corpus is empty") {
		t.Errorf("empty corpus: exit %d: %s", code, errs)
	}
}
