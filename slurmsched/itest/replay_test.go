//go:build slurmitest

package itest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/model/hostlist"
)

// replayReport is the part of `optsched replay -o json` the test reads.
type replayReport struct {
	Backend string   `json:"backend"`
	Deleted []string `json:"deleted"`
	Summary struct {
		Jobs, Ran, Failed, NotRun, Unfinished int
		RanTwice                              int     `json:"ran_more_than_once"`
		MeanWait                              float64 `json:"mean_wait_s"`
		MaxWait                               int64   `json:"max_wait_s"`
		Makespan                              int64   `json:"makespan_s"`
		NodeSeconds                           int64   `json:"node_seconds"`
		MultiNode                             int     `json:"multi_node_jobs"`
	} `json:"summary"`
	Jobs []struct {
		K        int      `json:"k"`
		ID       string   `json:"id"`
		Chunks   int      `json:"chunks"`
		Walltime int64    `json:"walltime_s"`
		State    string   `json:"state"`
		Wait     int64    `json:"wait_s"`
		Run      int64    `json:"run_s"`
		Nodes    []string `json:"nodes"`
		CH       int64    `json:"ch_cost"`
	} `json:"jobs"`
}

// repoFile is a file of the repository (OPTSCHED_REPO, set by run.sh;
// else relative to this package's folder, as go test runs it).
func repoFile(rel string) string {
	if r := os.Getenv("OPTSCHED_REPO"); r != "" {
		return filepath.Join(r, rel)
	}
	return filepath.Join("..", "..", rel)
}

// TestReplayBackfill replays 20 jobs of the KTH SP2 log at speedup 2000
// against Slurm's own scheduler (sched/backfill with topology/tree, no
// hold guard: run.sh runs it in a cluster of its own), with a job of
// someone else's running beside them, and checks against squeue --json:
// every replay job ran once and ended COMPLETED with exit 0, named
// ors-<run>-<k>, on exactly its chunks of whole nodes (--exclusive),
// with the time limit asked rounded up to minutes; nothing else was
// touched; no node held more than its CPUs or memory, nor anything beside
// an exclusive job; and the report's waits, runs, nodes, makespan,
// node-seconds and mean wait are Slurm's.
func TestReplayBackfill(t *testing.T) {
	need(t)
	if os.Getenv("SLURMNS_HOLD") == "1" {
		t.Skip("replays against Slurm's own scheduler: needs a cluster without the hold guard (run.sh runs it in one)")
	}
	reset(t)
	defer reset(t)
	other := submit(t, "-n1 --wrap 'sleep 40'")
	out := filepath.Join(t.TempDir(), "r.json")
	args := []string{"replay", "--server", "slurm", "--test-server", "--user", slurmUser, "--trace", repoFile("instances/traces/KTH-SP2-1996-2.1-cln.swf.gz"),
		"--from", "4500", "--jobs", "20", "--speedup", "2000", "--run-id", "it1", "--poll", "500ms", "-o", "json", "--json", out}
	stdout, stderr, rc := optsched(t, args...)
	t.Logf("$ optsched %s -> exit %d\n%s", strings.Join(args, " "), rc, stderr)
	if rc != 0 {
		t.Fatalf("replay: exit %d", rc)
	}
	var rep replayReport
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &rep) != nil || stdout != string(b) {
		t.Fatalf("report: %v (stdout and --json differ: %v)", err, stdout != string(b))
	}
	js := jobs(t)
	if j := js[other]; j.State != "RUNNING" && j.State != "COMPLETED" {
		t.Errorf("the other job %s: %s (touched by the replay?)", other, j.State)
	}
	named := 0
	for _, j := range js {
		if strings.HasPrefix(j.Name, "ors-it1-") {
			named++
		}
	}
	if named != 20 || len(rep.Jobs) != 20 || len(rep.Deleted) != 0 || rep.Backend != "slurm" {
		t.Fatalf("%d jobs named ors-it1-* in squeue, %d in the report, %d deleted, backend %q", named, len(rep.Jobs), len(rep.Deleted), rep.Backend)
	}
	var ids []string
	var first, last, nodeSec int64
	var sumWait float64
	for _, rj := range rep.Jobs {
		j, ok := js[rj.ID]
		if !ok {
			t.Fatalf("report job %s is not in squeue", rj.ID)
		}
		ids = append(ids, rj.ID)
		names, err := hostlist.Expand(j.Nodes)
		if err != nil {
			t.Fatalf("job %s: nodes %q: %v", rj.ID, j.Nodes, err)
		}
		wantLimit := (rj.Walltime + 59) / 60
		if j.Name != fmt.Sprintf("ors-it1-%d", rj.K) || j.User != slurmUser || j.State != "COMPLETED" || j.ExitCode != 0 ||
			j.Shared == nil || *j.Shared != "none" || j.NodeCount != int64(rj.Chunks) || len(names) != rj.Chunks ||
			j.TimeLimit == nil || *j.TimeLimit != wantLimit {
			t.Errorf("job %s (k %d, %d chunks, walltime %d s): %+v", rj.ID, rj.K, rj.Chunks, rj.Walltime, j)
			continue
		}
		run := max(j.End-j.Start, 1)
		got := slices.Clone(rj.Nodes)
		slices.Sort(got)
		if rj.State != "ran" || rj.Wait != j.Start-j.Submit || rj.Run != run || !slices.Equal(got, names) {
			t.Errorf("job %s: report wait %d run %d nodes %v; Slurm wait %d run %d nodes %v", rj.ID, rj.Wait, rj.Run, rj.Nodes, j.Start-j.Submit, run, names)
		}
		if (len(names) == 1) != (rj.CH == 1) || rj.CH < 1 {
			t.Errorf("job %s: CH %d on %d nodes", rj.ID, rj.CH, len(names))
		}
		if first == 0 || j.Submit < first {
			first = j.Submit
		}
		last = max(last, j.End)
		sumWait += float64(j.Start - j.Submit)
		nodeSec += int64(len(names)) * run
	}
	checkRecords(t, js, ids, nil)
	s := rep.Summary
	if s.Jobs != 20 || s.Ran != 20 || s.Failed != 0 || s.NotRun != 0 || s.Unfinished != 0 || s.RanTwice != 0 ||
		s.Makespan != last-first || s.NodeSeconds != nodeSec || math.Abs(s.MeanWait-sumWait/20) > 1e-9 {
		t.Errorf("summary %+v; from Slurm: makespan %d, node-seconds %d, mean wait %.2f", s, last-first, nodeSec, sumWait/20)
	}
}
