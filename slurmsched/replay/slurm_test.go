package replay_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	mreplay "github.com/optsched/optsched/model/replay"
	"github.com/optsched/optsched/slurmsched/replay"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeCmds answers Slurm commands and records every call.
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

func byID(recs []mreplay.Record) map[string]mreplay.Record {
	m := map[string]mreplay.Record{}
	for _, r := range recs {
		m[r.ID] = r
	}
	return m
}

// TestParseReplayFixture: the records of a real replay (testdata/README.md)
// against the squeue --json document read by hand.
func TestParseReplayFixture(t *testing.T) {
	recs, err := replay.ParseRecords(fixture(t, "testdata/squeue-replay.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 13 {
		t.Fatalf("%d records, want 13", len(recs))
	}
	m := byID(recs)
	for i := 1; i <= 12; i++ {
		r := m[fmt.Sprint(i)]
		if r.Name != fmt.Sprintf("ors-cap1-%d", 4499+i) || !r.Done || r.Start < r.Queued || r.End < r.Start || !r.HasExit || r.Exit != 0 || r.Starts != 1 || len(r.Nodes) == 0 || r.HasUsed {
			t.Errorf("job %d: %+v", i, r)
		}
	}
	six := m["6"]
	want := []string{"n02", "n03", "n05", "n06", "n07", "n08", "n09", "n10", "n11", "n12"}
	if six.Queued != 1795747226 || six.Start != 1795747227 || six.End != 1795747230 || !slices.Equal(six.Nodes, want) {
		t.Errorf("job 6: %+v", six)
	}
	// Cancelled while running: it ran (nodes, start, end) and was killed
	// by SIGTERM (raw status 15 → 143).
	if c := m["13"]; c.Name != "wrap" || !c.Done || c.Start != 1795747236 || c.End != 1795747238 || !slices.Equal(c.Nodes, []string{"n01"}) || !c.HasExit || c.Exit != 143 {
		t.Errorf("job 13: %+v", c)
	}
}

// TestParseStates: slurmsched's fixture of the same cluster (FAILED with
// exit 3, cancelled while pending, running, pending with an expected
// start).
func TestParseStates(t *testing.T) {
	recs, err := replay.ParseRecords(fixture(t, "../testdata/squeue.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := byID(recs)
	if r := m["1"]; !r.Done || !r.HasExit || r.Exit != 0 || !slices.Equal(r.Nodes, []string{"n16"}) || r.Start == 0 {
		t.Errorf("COMPLETED job 1: %+v", r)
	}
	if r := m["2"]; !r.Done || !r.HasExit || r.Exit != 3 || r.Start == 0 || r.End < r.Start {
		t.Errorf("FAILED job 2 (exit_code 768): %+v", r)
	}
	if r := m["3"]; !r.Done || r.Start != 0 || r.End != 0 || r.Nodes != nil || r.HasExit {
		t.Errorf("job 3, cancelled while pending: %+v (want done, never started, no exit status)", r)
	}
	if r := m["4"]; r.Done || r.Start == 0 || r.End != 0 || len(r.Nodes) != 2 || r.HasExit {
		t.Errorf("RUNNING job 4: %+v", r)
	}
	if r := m["13"]; r.Done || r.Start != 0 || r.Nodes != nil {
		t.Errorf("PENDING job 13 with an expected start: %+v", r)
	}
}

func fixtureServer(t *testing.T, squeue string) (*replay.Server, *fakeCmds) {
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		switch {
		case name == "sinfo":
			return string(fixture(t, "testdata/sinfo.json")), "", nil
		case name == "scontrol" && args[1] == "topology":
			return string(fixture(t, "testdata/scontrol-show-topology.txt")), "", nil
		case name == "scontrol" && args[1] == "config":
			return string(fixture(t, "testdata/scontrol-show-config.txt")), "", nil
		case name == "squeue":
			return squeue, "", nil
		case name == "runuser", name == "sbatch":
			return fmt.Sprintf("%d\n", len(args)), "", nil
		}
		return "", "", fmt.Errorf("unexpected %s", name)
	}}
	return &replay.Server{Cmd: f}, f
}

// TestCluster: the nodes, CPUs, tree and name of the fixture's cluster.
func TestCluster(t *testing.T) {
	s, _ := fixtureServer(t, "")
	c, err := s.Cluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != "slurmns" || len(c.Nodes) != 16 || c.Nodes[0] != "n01" || slices.Min(c.NCPUs) != 4 || slices.Max(c.NCPUs) != 4 ||
		c.Topology.Height() != 2 || c.TopologyNote != "scontrol show topology" {
		t.Fatalf("cluster %+v (height %d)", c, c.Topology.Height())
	}
	a, _ := c.Topology.Lookup("n01")
	b, _ := c.Topology.Lookup("n04")
	d, _ := c.Topology.Lookup("n05")
	if c.Topology.Hops(a, b) >= c.Topology.Hops(a, d) {
		t.Errorf("n01–n04 (one leaf) not closer than n01–n05")
	}
	s.Partition = "nosuch"
	if _, err := s.Cluster(context.Background()); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("a partition with no nodes: %v", err)
	}
}

// TestSubmit: the sbatch arguments, as the owner through runuser, and the
// id remembered for Delete.
func TestSubmit(t *testing.T) {
	s, f := fixtureServer(t, "")
	s.User, s.Partition = "slurmuser", "batch"
	j := mreplay.Job{Name: "ors-x-7", Chunks: 3, NCPUs: 4, Sleep: 42, Walltime: 3725}
	id, err := s.Submit(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	call := f.calls[len(f.calls)-1]
	want := []string{"--parsable", "--job-name=ors-x-7", "--partition=batch", "--output=/dev/null", "--error=/dev/null", "--chdir=/tmp",
		"--nodes=3", "--exclusive", "--time=01:02:05", "--wrap=/bin/sleep 42"}
	if call[0] != "runuser" || call[1] != "-u" || call[2] != "slurmuser" || call[3] != "--" || !strings.HasSuffix(call[4], "sbatch") || !slices.Equal(call[5:], want) {
		t.Errorf("call %q", call)
	}
	if f.dirs[len(f.dirs)-1] != "/tmp" || id != fmt.Sprint(len(call)-1) {
		t.Errorf("dir %q, id %q", f.dirs[len(f.dirs)-1], id)
	}
	// Delete refuses an id it did not submit, without running scancel.
	n := len(f.calls)
	if err := s.Delete(context.Background(), []string{id, "999"}); !errors.Is(err, replay.ErrNotOwn) || len(f.calls) != n {
		t.Errorf("delete of a foreign id: %v, %d calls", err, len(f.calls)-n)
	}
}

// TestSbatchAnswer: sbatch --parsable's answers.
func TestSbatchAnswer(t *testing.T) {
	for in, want := range map[string]string{"17\n": "17", "18;cluster\n": "18", " 19 ": "19"} {
		if got, err := replay.ParseSbatch(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0", "-3", "x", "Submitted batch job 5", "5\n6", "5;"} {
		if got, err := replay.ParseSbatch(in); err == nil && in != "5;" {
			t.Errorf("%q: %q, want an error", in, got)
		}
	}
}

// TestRecordsKeepForgotten: a finished job that slurmctld has forgotten
// (MinJobAge) keeps its last record; a job never seen done is left out.
func TestRecordsKeepForgotten(t *testing.T) {
	doc := string(fixture(t, "testdata/squeue-replay.json"))
	_, f := fixtureServer(t, doc)
	ids := []string{"11", "12", "13"}
	s2 := &replay.Server{Cmd: f}
	for _, id := range ids {
		replay.Adopt(s2, id)
	}
	recs, err := s2.Records(context.Background(), append(ids, "77"))
	if err != nil || len(recs) != 3 {
		t.Fatalf("records %v, %v", recs, err)
	}
	f.answer = func(name string, args []string) (string, string, error) {
		return `{"jobs":[]}`, "", nil
	}
	again, err := s2.Records(context.Background(), ids)
	if err != nil || len(again) != 3 {
		t.Fatalf("after slurmctld forgot them: %v, %v", again, err)
	}
	m := byID(recs)
	for _, r := range again {
		if w := m[r.ID]; w.End != r.End || !r.Done || !slices.Equal(w.Nodes, r.Nodes) {
			t.Errorf("job %s: %+v, was %+v", r.ID, r, w)
		}
	}
}

// TestDelete: scancel in batches of the ids; "already completing or
// completed" is not an error, anything else is.
func TestDelete(t *testing.T) {
	var stderr string
	f := &fakeCmds{answer: func(name string, args []string) (string, string, error) {
		if name != "scancel" {
			return "", "", fmt.Errorf("unexpected %s", name)
		}
		if stderr != "" {
			return "", stderr, errors.New("exit status 1")
		}
		return "", "", nil
	}}
	s := &replay.Server{Cmd: f}
	var ids []string
	for i := 1; i <= 150; i++ {
		ids = append(ids, fmt.Sprint(i))
		replay.Adopt(s, fmt.Sprint(i))
	}
	if err := s.Delete(context.Background(), ids); err != nil || len(f.calls) != 2 || len(f.calls[0]) != 101 || len(f.calls[1]) != 51 {
		t.Fatalf("delete: %v, calls %d", err, len(f.calls))
	}
	stderr = "scancel: error: Kill job error on job id 3: Job/step already completing or completed\n"
	if err := s.Delete(context.Background(), ids[:5]); err != nil {
		t.Errorf("a finished job: %v", err)
	}
	stderr = "scancel: error: Kill job error on job id 3: Access/permission denied\n"
	if err := s.Delete(context.Background(), ids[:5]); err == nil || !strings.Contains(err.Error(), "permission") {
		t.Errorf("a refusal: %v", err)
	}
}

// TestConfigValue reads scontrol show config lines.
func TestConfigValue(t *testing.T) {
	cfg := string(fixture(t, "testdata/scontrol-show-config.txt"))
	if replay.ConfigValue(cfg, "ClusterName") != "slurmns" || replay.ConfigValue(cfg, "MinJobAge") != "3600 sec" ||
		replay.ConfigValue(cfg, "NoSuchKey") != "" || replay.ConfigValue("A = (null)\n", "A") != "" {
		t.Error("config values")
	}
}

// TestParseKeepAndBound: keep selects the records read; the node names
// of one document are bounded.
func TestParseKeepAndBound(t *testing.T) {
	recs, err := replay.ParseRecords(fixture(t, "testdata/squeue-replay.json"), func(id string) bool { return id == "6" || id == "13" })
	if err != nil || len(recs) != 2 || recs[0].ID != "6" || recs[1].ID != "13" {
		t.Fatalf("keep: %+v, %v", recs, err)
	}
	half := fmt.Sprintf("n[0-%d]", replay.MaxNodeNames/2)
	doc := fmt.Sprintf(`{"jobs":[{"job_id":1,"job_state":"RUNNING","nodes":%q},{"job_id":2,"job_state":"RUNNING","nodes":%q}]}`, half, half)
	if _, err := replay.ParseRecords([]byte(doc), nil); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("%d names in all: %v", 2*(replay.MaxNodeNames/2+1), err)
	}
	if recs, err := replay.ParseRecords([]byte(doc), func(id string) bool { return id == "2" }); err != nil || len(recs[0].Nodes) != replay.MaxNodeNames/2+1 {
		t.Errorf("one of them: %v", err)
	}
}
