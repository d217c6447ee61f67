package replay_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"testing"

	breplay "github.com/optsched/optsched/bench/replay"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/pbsched/replay"
)

// The metrics on real OpenPBS records, read by the PBS back end from the
// fixtures it keeps (pbsched/replay/testdata, whose README says where
// they come from).

const pbsTestdata = "../../pbsched/replay/testdata/"

// fakeCmds answers PBS commands from fixtures and records every call.
type fakeCmds struct {
	calls  [][]string
	dirs   []string
	answer func(name string, args []string) (stdout, stderr string, err error)
}

func (f *fakeCmds) Run(_ context.Context, dir, name string, args ...string) ([]byte, []byte, error) {
	f.calls = append(f.calls, append([]string{name}, args...))
	f.dirs = append(f.dirs, dir)
	o, e, err := f.answer(name, args)
	return []byte(o), []byte(e), err
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(pbsTestdata + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixtureMetrics computes the metrics of a real replay from its
// server's records, against figures worked out by hand from the JSON
// (testdata/README.md): waits 0 except 9.pbshost (stime 1 s after qtime);
// runs (resources_used.walltime, at least 1) 1,1,1,1,1,3,3,7,1,1; the
// first qtime 21:37:06, the last obittime 21:37:17 (job 7.pbshost); vnode
// sets of 10, 2 and 3 vnodes with CH costs 18900 (pairs: 5 under one
// tier0 switch ·1, 16 under one tier1 ·3, 24 across ·5 → 189000/10), 500
// and 2333.
func TestFixtureMetrics(t *testing.T) {
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		switch name {
		case "pbsnodes":
			return fixture(t, "pbsnodes-16.json"), "", nil
		case "qstat":
			return fixture(t, "qstat-fx-replay.json"), "", nil
		}
		return "", "", fmt.Errorf("unexpected %s", name)
	}}
	s := &replay.Server{Cmd: f}
	c, err := s.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 16 || slices.Contains(c.Nodes, "pbshost") || c.Topology.Height() != 2 || slices.Min(c.NCPUs) != 4 {
		t.Fatalf("cluster: %d nodes %v, height %d", len(c.Nodes), c.Nodes, c.Topology.Height())
	}
	var sub []breplay.Submitted
	for i := range 10 {
		sub = append(sub, breplay.Submitted{ID: fmt.Sprintf("%d.pbshost", i)})
	}
	recs, err := s.Records(context.Background(), []string{"0.pbshost", "1.pbshost", "2.pbshost", "3.pbshost", "4.pbshost", "5.pbshost", "6.pbshost", "7.pbshost", "8.pbshost", "9.pbshost", "10.pbshost"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 10 {
		t.Fatalf("%d records", len(recs))
	}
	if got := f.calls[len(f.calls)-1]; !slices.Equal(got, []string{"qstat", "-fx", "-F", "json"}) {
		t.Errorf("qstat call %v (OpenPBS prints one job only when -F json is given several ids)", got)
	}
	jobs, sum, err := breplay.Compute(sub, recs, c, model.DefaultCostModel)
	if err != nil {
		t.Fatal(err)
	}
	want := breplay.Summary{Jobs: 10, Ran: 10, MaxWait: 1, MaxBSLD: 1, Makespan: 11, NodeSeconds: 64, Nodes: 16, MultiNode: 3}
	got := sum
	mw, mb, u, mch := got.MeanWait, got.MeanBSLD, got.Utilisation, got.MeanCH
	got.MeanWait, got.MeanBSLD, got.Utilisation, got.MeanCH, got.MeanCHAll = 0, 0, 0, 0, 0
	if got != want || math.Abs(mw-0.1) > 1e-9 || mb != 1 || math.Abs(u-64.0/(16*11)) > 1e-9 || math.Abs(mch-(18900+500+2333)/3.0) > 1e-9 {
		t.Errorf("summary %+v", sum)
	}
	chs := map[string]int64{"5.pbshost": 18900, "6.pbshost": 500, "7.pbshost": 2333}
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

func gunzipFixture(t *testing.T, name string) string {
	t.Helper()
	return gunzip(t, pbsTestdata+name)
}

// gunzip reads a gzip-compressed file.
func gunzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFixtureKTH80 pins the summary of the 80-job KTH SP2 replay under
// pbs_sched to figures computed from the same JSON by a separate script
// (Python, sharing nothing with this code: ctime parsing, waits, runs
// with the 1 s floor, bounded slowdowns, the vnode sets of exec_vnode and
// their lan-code cost from the vnode indices, pairs under one tier0 ·1,
// one tier1 ·3, else ·5): mean wait 14.5 s, max 162 s, mean bounded
// slowdown 1.6901989758914808, max 10, makespan 341 s, 4,274 vnode-s, 31
// multi-node jobs costing 245,081 in all.
func TestFixtureKTH80(t *testing.T) {
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		switch name {
		case "pbsnodes":
			return gunzipFixture(t, "pbsnodes-16-kth80.json.gz"), "", nil
		case "qstat":
			return gunzipFixture(t, "qstat-fx-kth80.json.gz"), "", nil
		}
		return "", "", fmt.Errorf("unexpected %s", name)
	}}
	s := &replay.Server{Cmd: f}
	c, err := s.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sub []breplay.Submitted
	var ids []string
	for i := range 80 {
		id := fmt.Sprintf("%d.pbshost", i)
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
	want := breplay.Summary{Jobs: 80, Ran: 80, MaxWait: 162, MaxBSLD: 10, Makespan: 341, NodeSeconds: 4274, Nodes: 16, MultiNode: 31,
		MeanWait: 14.5, MeanBSLD: 1.6901989758914808, Utilisation: 4274.0 / (16 * 341), MeanCH: 245081.0 / 31}
	got.MeanCHAll = 0
	eq := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	g, w := got, want
	g.MeanWait, g.MeanBSLD, g.Utilisation, g.MeanCH, w.MeanWait, w.MeanBSLD, w.Utilisation, w.MeanCH = 0, 0, 0, 0, 0, 0, 0, 0
	if g != w || !eq(got.MeanWait, want.MeanWait) || !eq(got.MeanBSLD, want.MeanBSLD) || !eq(got.Utilisation, want.Utilisation) || !eq(got.MeanCH, want.MeanCH) {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
}
