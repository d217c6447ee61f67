package replay_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	breplay "github.com/optsched/optsched/bench/replay"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/pbsched/replay"
)

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
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exitErr is an *exec.ExitError with status 35 (what qdel answers for a
// finished job).
func exitErr(t *testing.T) error {
	t.Helper()
	err := exec.Command("sh", "-c", "exit 35").Run()
	if err == nil {
		t.Fatal("sh exit 35 succeeded")
	}
	return err
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

// TestDeleteOnlyOwn: Delete refuses any id qsub did not return to this
// Server (running no qdel at all), deletes its own, and takes "Job has
// finished" as done.
func TestDeleteOnlyOwn(t *testing.T) {
	n := 0
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		switch name {
		case "qsub":
			n++
			return fmt.Sprintf("%d.pbshost\n", n+40), "", nil
		case "qdel":
			return "", "qdel: Job has finished " + args[0] + "\n", exitErr(t)
		}
		return "", "", fmt.Errorf("unexpected %s", name)
	}}
	s := &replay.Server{Cmd: f}
	for k := range 2 {
		if _, err := s.Submit(context.Background(), breplay.Job{Name: breplay.JobName("r", k), Chunks: 1, NCPUs: 4, Sleep: 1, Walltime: 11}); err != nil {
			t.Fatal(err)
		}
	}
	calls := len(f.calls)
	err := s.Delete(context.Background(), []string{"41.pbshost", "7.pbshost"})
	if !errors.Is(err, replay.ErrNotOwn) || len(f.calls) != calls {
		t.Fatalf("Delete of a foreign id: err %v, %d commands run", err, len(f.calls)-calls)
	}
	if err := s.Delete(context.Background(), []string{"41.pbshost", "42.pbshost"}); err != nil {
		t.Fatal(err)
	}
	if got := f.calls[len(f.calls)-1]; !slices.Equal(got, []string{"qdel", "41.pbshost", "42.pbshost"}) {
		t.Errorf("qdel call %v", got)
	}
	// Any other qdel complaint, or none at all, is an error.
	f.answer = func(string, []string) (string, string, error) {
		return "", "qdel: Unauthorized Request 41.pbshost", exitErr(t)
	}
	if err := s.Delete(context.Background(), []string{"41.pbshost"}); err == nil {
		t.Error("qdel refused: no error")
	}
	f.answer = func(string, []string) (string, string, error) { return "", "", exitErr(t) }
	if err := s.Delete(context.Background(), []string{"41.pbshost"}); err == nil {
		t.Error("qdel failed silently: no error")
	}
}

// TestSubmitArgs pins the qsub command: name, select, excl, walltime,
// output discarded, sleep; as another user through runuser from their home.
func TestSubmitArgs(t *testing.T) {
	f := &fakeCmds{answer: func(string, []string) (string, string, error) { return "3.pbshost\n", "", nil }}
	s := &replay.Server{Cmd: f, Queue: "workq"}
	j := breplay.Job{Name: "ors-x-4507", Chunks: 3, NCPUs: 4, Sleep: 7, Walltime: 3671}
	id, err := s.Submit(context.Background(), j)
	if err != nil || id != "3.pbshost" {
		t.Fatalf("Submit = %q, %v", id, err)
	}
	want := []string{"qsub", "-N", "ors-x-4507", "-q", "workq", "-o", "/dev/null", "-e", "/dev/null",
		"-l", "select=3:ncpus=4", "-l", "place=excl", "-l", "walltime=01:01:11", "--", "/bin/sleep", "7"}
	if !slices.Equal(f.calls[0], want) {
		t.Errorf("qsub call\n got %v\nwant %v", f.calls[0], want)
	}
	s = &replay.Server{Cmd: f, User: "root"}
	if _, err := s.Submit(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if c := f.calls[1]; c[0] != "runuser" || !slices.Equal(c[1:4], []string{"-u", "root", "--"}) || !strings.HasSuffix(c[4], "qsub") || f.dirs[1] == "" {
		t.Errorf("as another user: %v in %q", c, f.dirs[1])
	}
	for _, bad := range []string{"", "a b\n", "1.x\n2.x\n"} {
		f.answer = func(string, []string) (string, string, error) { return bad, "", nil }
		if _, err := s.Submit(context.Background(), j); err == nil {
			t.Errorf("qsub answered %q: no error", bad)
		}
	}
}

// TestParseRecordsStates reads the openpbs fixture of model/pbs's kind:
// a deleted queued job is done without a start or vnodes.
func TestParseRecordsStates(t *testing.T) {
	doc := `{"pbs_server":"s","Jobs":{
"3.s":{"job_state":"F","queue":"workq","qtime":"Thu Nov 26 21:34:13 2026","mtime":"Thu Nov 26 21:34:13 2026","Job_Name":"ors-probe-3"},
"4.s":{"job_state":"R","queue":"workq","qtime":1795728000,"stime":1795728001,"exec_vnode":"(a:ncpus=4)+(b:ncpus=4)+(a:ncpus=1)","run_count":1},
"5.s":{"job_state":"F","queue":"workq","qtime":1795728000,"stime":1795728001,"mtime":1795728009,"exec_vnode":"(a:ncpus=4)","Exit_status":-29,"resources_used":{"walltime":"00:00:08"}}}}`
	recs, err := replay.ParseRecords([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r3, r4, r5 := recs[0], recs[1], recs[2]
	if !r3.Done || r3.Start != 0 || r3.End != 0 || r3.Nodes != nil || r3.Name != "ors-probe-3" {
		t.Errorf("deleted queued job: %+v", r3)
	}
	if r4.Done || !slices.Equal(r4.Nodes, []string{"a", "b"}) || r4.Starts != 1 {
		t.Errorf("running job: %+v", r4)
	}
	if !r5.Done || r5.End != 1795728009 || !r5.HasExit || r5.Exit != -29 || r5.Used != 8 || !r5.HasUsed {
		t.Errorf("finished job without obittime: %+v", r5)
	}
	if _, err := replay.ParseRecords([]byte(`{"Jobs":{"1.s":{"job_state":"F","queue":"q","exec_vnode":"(a:ncpus=4"}}}`)); err == nil {
		t.Error("bad exec_vnode: no error")
	}
}

func gunzipFixture(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
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
