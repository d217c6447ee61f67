package replay_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	breplay "github.com/optsched/optsched/bench/replay"
	"github.com/optsched/optsched/model"
	sreplay "github.com/optsched/optsched/slurmsched/replay"
)

// The metrics on real Slurm records, read by the Slurm back end from the
// fixtures it keeps (slurmsched/replay/testdata, whose README says where
// they come from).

const slurmTestdata = "../../slurmsched/replay/testdata/"

func slurmFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(slurmTestdata + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSlurmFixtureMetrics computes the metrics of a real 12-job replay
// under Slurm's backfill scheduler from squeue --json, against figures
// worked out by hand from the document: waits (start_time − submit_time)
// 1,1,1,0,1,1,1,1,1,2,3,3 (mean 16/12, max 3); runs (end − start, at
// least 1) 1,1,1,1,1,3,3,7,1,1,2,1, every bounded slowdown 1; the first
// submit_time 1795747224, the last end 1795747235 (job 8): makespan 11 s;
// node-seconds 5×1 + 10×3 + 2×3 + 3×7 + 1 + 1 + 2 + 2×1 = 68; the CH
// costs on leaves of 4 (pairs under one leaf ·1, across ·3, lan-code:
// Σ pairs × 1000 / nodes): job 6 on n[02-03,05-12] has 13 pairs under a
// leaf and 32 across → 109000/10 = 10900; jobs 7 (n[01,04]) and 12
// (n[02-03]) 500; job 8 (n[13-15]) 1000. Job 13, not the replay's, is
// left out.
func TestSlurmFixtureMetrics(t *testing.T) {
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		switch {
		case name == "sinfo":
			return slurmFixture(t, "sinfo.json"), "", nil
		case name == "scontrol" && args[1] == "topology":
			return slurmFixture(t, "scontrol-show-topology.txt"), "", nil
		case name == "scontrol" && args[1] == "config":
			return slurmFixture(t, "scontrol-show-config.txt"), "", nil
		case name == "squeue":
			return slurmFixture(t, "squeue-replay.json"), "", nil
		}
		return "", "", fmt.Errorf("unexpected %s", name)
	}}
	s := &sreplay.Server{Cmd: f}
	c, err := s.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sub []breplay.Submitted
	var ids []string
	for i := 1; i <= 12; i++ {
		id := fmt.Sprint(i)
		sub, ids = append(sub, breplay.Submitted{ID: id}), append(ids, id)
	}
	recs, err := s.Records(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 12 {
		t.Fatalf("%d records", len(recs))
	}
	jobs, got, err := breplay.Compute(sub, recs, c, model.DefaultCostModel)
	if err != nil {
		t.Fatal(err)
	}
	want := breplay.Summary{Jobs: 12, Ran: 12, MaxWait: 3, MaxBSLD: 1, Makespan: 11, NodeSeconds: 68, Nodes: 16, MultiNode: 4}
	g := got
	g.MeanWait, g.MeanBSLD, g.Utilisation, g.MeanCH, g.MeanCHAll = 0, 0, 0, 0, 0
	eq := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if g != want || !eq(got.MeanWait, 16.0/12) || got.MeanBSLD != 1 || !eq(got.Utilisation, 68.0/(16*11)) || !eq(got.MeanCH, 12900.0/4) {
		t.Errorf("summary %+v", got)
	}
	chs := map[string]int64{"6": 10900, "7": 500, "8": 1000, "12": 500}
	for _, j := range jobs {
		w := chs[j.ID]
		if w == 0 {
			w = 1
		}
		if j.CH != w || j.State != "ran" || j.Exit == nil || *j.Exit != 0 || j.Starts != 1 {
			t.Errorf("job %s: CH %d (want %d), state %s, exit %v, starts %d", j.ID, j.CH, w, j.State, j.Exit, j.Starts)
		}
	}
}

// TestSlurmFixtureKTH80 pins the summary of the 80-job KTH SP2 replay
// under Slurm's backfill scheduler to figures computed from the same
// squeue --json by a separate script (Python, sharing nothing with this
// code: its own hostlist expansion, waits, runs with the 1 s floor,
// bounded slowdowns, and the lan-code cost of each node set from the node
// numbers, pairs under one leaf of 4 ·1, else ·3, Σ × 1000 / nodes
// rounded down): mean wait 100.5 s, max 220 s, mean bounded slowdown
// 7.59760115352975, max 21, makespan 465 s, 4,305 node-s, 31 multi-node
// jobs costing 131,279 in all.
func TestSlurmFixtureKTH80(t *testing.T) {
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		switch {
		case name == "sinfo":
			return slurmFixture(t, "sinfo.json"), "", nil
		case name == "scontrol" && args[1] == "topology":
			return slurmFixture(t, "scontrol-show-topology.txt"), "", nil
		case name == "scontrol" && args[1] == "config":
			return slurmFixture(t, "scontrol-show-config.txt"), "", nil
		case name == "squeue":
			return gunzip(t, slurmTestdata+"squeue-kth80-backfill.json.gz"), "", nil
		}
		return "", "", fmt.Errorf("unexpected %s", name)
	}}
	s := &sreplay.Server{Cmd: f}
	c, err := s.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sub []breplay.Submitted
	var ids []string
	for i := 1; i <= 80; i++ {
		id := fmt.Sprint(i)
		sub, ids = append(sub, breplay.Submitted{ID: id}), append(ids, id)
	}
	recs, err := s.Records(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := breplay.Compute(sub, recs, c, model.DefaultCostModel)
	if err != nil {
		t.Fatal(err)
	}
	want := breplay.Summary{Jobs: 80, Ran: 80, MaxWait: 220, MaxBSLD: 21, Makespan: 465, NodeSeconds: 4305, Nodes: 16, MultiNode: 31,
		MeanWait: 100.5, MeanBSLD: 7.59760115352975, Utilisation: 4305.0 / (16 * 465), MeanCH: 131279.0 / 31}
	got.MeanCHAll = 0
	eq := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	g, w := got, want
	g.MeanWait, g.MeanBSLD, g.Utilisation, g.MeanCH, w.MeanWait, w.MeanBSLD, w.Utilisation, w.MeanCH = 0, 0, 0, 0, 0, 0, 0, 0
	if g != w || !eq(got.MeanWait, want.MeanWait) || !eq(got.MeanBSLD, want.MeanBSLD) || !eq(got.Utilisation, want.Utilisation) || !eq(got.MeanCH, want.MeanCH) {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
}
