//go:build pbsitest

package itest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestSchedBenchArray: a bench sweep as a PBS job array, as docs/pbs.md
// shows it. `qsub -J 0-3` runs `optsched bench scas --shard
// $PBS_ARRAY_INDEX/4` as the job owner under pbs_sched; every subjob
// runs and ends with Exit_status 0; `bench merge` of the four shards'
// --json files holds every window once and gives each window the same
// optimum, bound and objectives as a one-process run of the same sweep
// (the times differ).
func TestSchedBenchArray(t *testing.T) {
	need(t, cfgSched)
	reset(t)
	// The job owner writes the shards: a folder it can write to.
	dir, err := os.MkdirTemp("", "optsched-array-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// ... and a binary it can run, wherever the checkout lives (a home
	// folder the job owner cannot enter, say).
	bin := filepath.Join(dir, "optsched")
	data, err := os.ReadFile(optschedBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sweep := []string{"bench", "scas", "--classes", "paper", "--windows", "8", "--solvers", "csp,seq", "--time-limit", "10s"}
	script := fmt.Sprintf(`exec %s %s --shard "$PBS_ARRAY_INDEX/4" --json %s/shard-"$PBS_ARRAY_INDEX".json`,
		shellQuote([]string{bin}), shellQuote(sweep), shellQuote([]string{dir}))
	id := qsub(t, "-N", "sweep", "-J", "0-3", "-l", "select=1:ncpus=1", "-l", "walltime=00:10:00", "--", "/bin/sh", "-c", script)
	if !strings.Contains(id, "[]") {
		t.Fatalf("qsub -J returned %q, not an array id", id)
	}
	sub := make([]string, 4)
	for i := range sub {
		sub[i] = strings.Replace(id, "[]", fmt.Sprintf("[%d]", i), 1)
	}
	js := waitJobs(t, 5*time.Minute, "every subjob of the sweep should run and end", sub, func(j job) bool { return j.State == "F" || j.State == "X" })
	var files []string
	for i, s := range sub {
		if j := js[s]; !j.ran() || j.ExitStatus == nil || *j.ExitStatus != 0 {
			t.Errorf("subjob %s: %v", s, j)
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)))
	}
	if t.Failed() {
		t.FailNow()
	}

	merged := filepath.Join(t.TempDir(), "merged.json")
	if r := runCmd(time.Minute, optschedBin, append([]string{"bench", "merge", "--json", merged}, files...)...); r.code != 0 || r.err != nil {
		t.Fatalf("bench merge: %v", r)
	}
	whole := filepath.Join(t.TempDir(), "whole.json")
	if r := runCmd(5*time.Minute, optschedBin, append(sweep, "--json", whole)...); r.code != 0 || r.err != nil {
		t.Fatalf("the one-process sweep: %v", r)
	}
	m, w := sweepSamples(t, merged), sweepSamples(t, whole)
	if len(w) == 0 || !reflect.DeepEqual(m, w) {
		t.Errorf("merged shards and the one-process run differ:\nmerged %v\nwhole  %v", m, w)
	}
}

// sweepSamples reads a bench scas --json report (with its own decoding,
// not optsched's) into one line per window and solver: the window's
// class and index, the solver, its objective and status, without times.
func sweepSamples(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Samples []map[string]any `json:"samples"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, s := range doc.Samples {
		var keys []string
		for k, v := range s {
			if k == "seconds" || strings.Contains(k, "ms") || strings.Contains(k, "time") || strings.Contains(k, "elapsed") || strings.Contains(k, "shard") {
				continue
			}
			keys = append(keys, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(keys)
		out = append(out, strings.Join(keys, " "))
	}
	sort.Strings(out)
	return out
}
