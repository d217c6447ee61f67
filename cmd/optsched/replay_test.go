package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	breplay "github.com/optsched/optsched/bench/replay"
	"github.com/optsched/optsched/model"
)

// TestReplayRefusesWithoutTestServer: without --test-server, replay exits 2
// with the reason, before reading the log or asking any server.
func TestReplayRefusesWithoutTestServer(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"replay", "--server", "pbs", "--trace", "/nonexistent.swf", "--jobs", "3", "--speedup", "100"}, nil, &out, &errb)
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if msg := errb.String(); !strings.Contains(msg, "--test-server") || !strings.Contains(msg, "test server") || strings.Contains(msg, "nonexistent") {
		t.Errorf("stderr %q: want the reason naming --test-server, and no attempt to read the log", msg)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out.String())
	}
	for _, args := range [][]string{
		{"--server", "lsf"}, {"--server", "slurm", "--topology-levels", "a"}, {"--jobs", "0"}, {"--speedup", "0"}, {"--walltime-pad", "1500ms"}, {"--cost", "x"}, {"--from", "-1"},
	} {
		full := append([]string{"replay", "--test-server", "--trace", "x.swf", "--jobs", "3"}, args...)
		if code := run(full, nil, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// stubBackend runs each job at once for its sleep on a fake clock.
type stubBackend struct {
	clk     *stubClock
	subs    map[string]breplay.Job
	at      map[string]int64
	deleted []string
	cancel  func()
}

type stubClock struct{ now time.Time }

func (c *stubClock) Now() time.Time { return c.now }
func (c *stubClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (b *stubBackend) Cluster(context.Context) (*breplay.Cluster, error) {
	topo, err := model.NewLayout(1, 2, 2)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range topo.NumNodes() {
		names = append(names, topo.Name(i))
	}
	return &breplay.Cluster{Server: "stub", Nodes: names, NCPUs: []int{4, 4, 4, 4}, Topology: topo, TopologyNote: "layout 1x2x2"}, nil
}

func (b *stubBackend) Submit(_ context.Context, j breplay.Job) (string, error) {
	id := fmt.Sprintf("%d.stub", len(b.subs))
	b.subs[id], b.at[id] = j, b.clk.now.Unix()
	if b.cancel != nil && len(b.subs) == 2 {
		b.cancel()
	}
	return id, nil
}

func (b *stubBackend) Records(_ context.Context, ids []string) ([]breplay.Record, error) {
	var out []breplay.Record
	for _, id := range ids {
		j, at := b.subs[id], b.at[id]
		r := breplay.Record{ID: id, Name: j.Name, Queued: at, Start: at, Nodes: []string{"n0", "n1", "n2", "n3"}[:j.Chunks], HasExit: true, Starts: 1}
		if end := at + j.Sleep; b.clk.now.Unix() >= end && !slices.Contains(b.deleted, id) {
			r.Done, r.End, r.Used, r.HasUsed = true, end, j.Sleep, true
		}
		if slices.Contains(b.deleted, id) {
			r.Done = true
		}
		out = append(out, r)
	}
	return out, nil
}

func (b *stubBackend) Delete(_ context.Context, ids []string) error {
	b.deleted = append(b.deleted, ids...)
	return nil
}

const replaySWF = `; MaxProcs: 8
1 0 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1
2 50 0 20 8 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1
3 60 0 10 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1
`

// TestReplayStub runs the command end to end on a stub back end: the
// mapping (8 processors on 4 vnodes), the JSON report's field names and
// the metrics.
func TestReplayStub(t *testing.T) {
	dir := t.TempDir()
	logf := filepath.Join(dir, "log.swf")
	if err := os.WriteFile(logf, []byte(replaySWF), 0o644); err != nil {
		t.Fatal(err)
	}
	clk := &stubClock{now: time.Unix(1.8e9, 0)}
	b := &stubBackend{clk: clk, subs: map[string]breplay.Job{}, at: map[string]int64{}}
	var out, errb bytes.Buffer
	o := &replayOptions{streams: &streams{out: &out, err: &errb}, server: "pbs", trace: logf, from: 0, jobs: 3, speedup: 10,
		pad: 10 * time.Second, testServer: true, runID: "t1", cost: "lan-code", output: "json", poll: time.Second,
		jsonOut: filepath.Join(dir, "r.json"), backend: b, clock: clk}
	if err := runReplay(context.Background(), o); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"backend", "server", "run_id", "trace", "from", "n", "speedup", "walltime_pad_s", "mapping", "topology", "cost", "elapsed_s", "deleted", "summary", "jobs"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	var r breplay.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Mapping.Nodes != 4 || r.Mapping.MaxProcs != 8 || r.Mapping.NCPUsPerChunk != 4 {
		t.Errorf("mapping %+v", r.Mapping)
	}
	// Chunks ⌈2·4/8⌉ = 1, ⌈8·4/8⌉ = 4, ⌈1·4/8⌉ = 1; sleeps 10, 2, 1 s;
	// walltimes 20+10, 2+10, 10+10; submitted at 0, 5, 6 s.
	chunks := []int{1, 4, 1}
	walls := []int64{30, 12, 20}
	for i, j := range r.Jobs {
		if j.Chunks != chunks[i] || j.Walltime != walls[i] || j.Name != fmt.Sprintf("ors-t1-%d", i) || j.State != "ran" {
			t.Errorf("job %d: %+v", i, j)
		}
	}
	s := r.Summary
	if s.Ran != 3 || s.Jobs != 3 || s.MultiNode != 1 || s.Makespan != 10 || s.MeanWait != 0 {
		t.Errorf("summary %+v", s)
	}
	if b, err := os.ReadFile(o.jsonOut); err != nil || !bytes.Equal(b, out.Bytes()) {
		t.Errorf("--json file differs from -o json (%v)", err)
	}
	if !strings.Contains(errb.String(), "mapping: chunks = ⌈processors × 4 / 8⌉") {
		t.Errorf("the mapping is not printed: %s", errb.String())
	}
	// The table for people.
	out.Reset()
	o.output, o.jsonOut, o.quiet = "table", "", true
	b.subs, b.at = map[string]breplay.Job{}, map[string]int64{}
	if err := runReplay(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "jobs 3: ran 3") || !strings.Contains(out.String(), "ors") && !strings.Contains(out.String(), "0.stub") {
		t.Errorf("table:\n%s", out.String())
	}
}

// TestReplayCancel: a cancel deletes the run's own unfinished jobs and
// exits non-zero with the report of what ran.
func TestReplayCancel(t *testing.T) {
	logf := filepath.Join(t.TempDir(), "log.swf")
	if err := os.WriteFile(logf, []byte(replaySWF), 0o644); err != nil {
		t.Fatal(err)
	}
	clk := &stubClock{now: time.Unix(1.8e9, 0)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &stubBackend{clk: clk, subs: map[string]breplay.Job{}, at: map[string]int64{}, cancel: cancel}
	var out, errb bytes.Buffer
	o := &replayOptions{streams: &streams{out: &out, err: &errb}, server: "pbs", trace: logf, jobs: 3, speedup: 10,
		testServer: true, runID: "t2", cost: "lan-code", output: "json", poll: time.Second, backend: b, clock: clk}
	err := runReplay(ctx, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(b.deleted, []string{"0.stub", "1.stub"}) || len(b.subs) != 2 {
		t.Errorf("deleted %v after %d submissions", b.deleted, len(b.subs))
	}
	var r breplay.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Error == "" || len(r.Deleted) != 2 {
		t.Errorf("report %+v (%v)", r, err)
	}
}
