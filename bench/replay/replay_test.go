package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

func TestMappingChunks(t *testing.T) {
	for _, c := range []struct {
		m     Mapping
		procs int
		want  int
	}{
		{Mapping{16, 100, 4}, 1, 1},    // ⌈16/100⌉
		{Mapping{16, 100, 4}, 3, 1},    // ⌈48/100⌉
		{Mapping{16, 100, 4}, 7, 2},    // ⌈112/100⌉
		{Mapping{16, 100, 4}, 58, 10},  // ⌈928/100⌉
		{Mapping{16, 100, 4}, 100, 16}, // the whole machine
		{Mapping{16, 100, 4}, 250, 16}, // more than MaxProcs: capped
		{Mapping{16, 100, 4}, 0, 1},    // at least one chunk
		{Mapping{8, 8, 4}, 5, 5},       // one vnode a processor
		{Mapping{0, 100, 4}, 5, 1},     // no nodes: 1
	} {
		if got := c.m.Chunks(c.procs); got != c.want {
			t.Errorf("%+v.Chunks(%d) = %d, want %d", c.m, c.procs, got, c.want)
		}
	}
	if s := (Mapping{16, 100, 4}).String(); !strings.Contains(s, "16 / 100") || !strings.Contains(s, "ncpus=4") {
		t.Errorf("String() = %q", s)
	}
}

func TestPlan(t *testing.T) {
	jobs := []trace.Job{
		{ID: "1", Submit: 100, Runtime: 590, Walltime: 1200, Nodes: 1},
		{ID: "2", Submit: 1100, Runtime: 10, Walltime: 10, Nodes: 50}, // request = run (unknown in the log)
		{ID: "3", Submit: 1400, Runtime: 3000, Walltime: 600, Nodes: 100},
	}
	got, err := Plan(jobs, Settings{From: 1, N: 2, Speedup: 100, Pad: 10, RunID: "r1", Mapping: Mapping{16, 100, 4}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{K: 1, LogID: "2", Procs: 50, Name: "ors-r1-1", RunID: "r1", At: 0, Sleep: 0, Walltime: 1 + 10, Chunks: 8, NCPUs: 4},
		{K: 2, LogID: "3", Procs: 100, Name: "ors-r1-2", RunID: "r1", At: 3 * time.Second, Sleep: 30, Walltime: 6 + 10, Chunks: 16, NCPUs: 4},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Plan:\n got %+v\nwant %+v", got, want)
	}
	// Fractional compressed submit times are kept; run times round.
	got, _ = Plan(jobs, Settings{From: 0, N: 2, Speedup: 400, RunID: "r", Mapping: Mapping{16, 100, 4}})
	if got[1].At != 2500*time.Millisecond || got[0].Sleep != 1 || got[0].Walltime != 3 {
		t.Errorf("speedup 400: %+v", got)
	}
	for _, bad := range []Settings{
		{From: 2, N: 2, Speedup: 1, RunID: "r", Mapping: Mapping{1, 1, 1}},
		{From: -1, N: 1, Speedup: 1, RunID: "r", Mapping: Mapping{1, 1, 1}},
		{From: 0, N: 0, Speedup: 1, RunID: "r", Mapping: Mapping{1, 1, 1}},
		{From: 0, N: 1, Speedup: 0, RunID: "r", Mapping: Mapping{1, 1, 1}},
		{From: 0, N: 1, Speedup: 1, RunID: "a b", Mapping: Mapping{1, 1, 1}},
		{From: 0, N: 1, Speedup: 1, RunID: "r", Mapping: Mapping{0, 1, 1}},
		{From: 0, N: 1, Speedup: 1, RunID: "r", Pad: -1, Mapping: Mapping{1, 1, 1}},
	} {
		if _, err := Plan(jobs, bad); err == nil {
			t.Errorf("Plan(%+v): no error", bad)
		}
	}
}

func TestOpenTraceKTH(t *testing.T) {
	tr, maxProcs, err := OpenTrace("../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz")
	if err != nil {
		t.Fatal(err)
	}
	if maxProcs != 100 || len(tr.Jobs) < 4580 {
		t.Fatalf("maxProcs %d, %d jobs", maxProcs, len(tr.Jobs))
	}
	jobs, err := Plan(tr.Jobs, Settings{From: 4500, N: 80, Speedup: 588, Pad: 10, RunID: "x", Mapping: Mapping{16, maxProcs, 4}})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Chunks < 1 || j.Chunks > 16 || j.Procs < 1 || j.Procs > 100 || j.Walltime < 11 {
			t.Errorf("job %+v out of range", j)
		}
	}
}

// fakeClock jumps: After moves the time forward by d at once. Run asks for
// one timer at a time, so the order of events is the real one.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// fakeBackend runs every job at once for its Sleep seconds on the fake
// clock, and records what it was asked.
type fakeBackend struct {
	clk       *fakeClock
	submitted map[string]time.Time
	sleeps    map[string]int64
	order     []string
	deleted   []string
	deletedAt map[string]bool
	foreign   []string // ids of other users' jobs, listed by Records
	// onSubmit, when set, runs after the n-th submission (1-based).
	onSubmit func(n int)
	failAt   int // fail the n-th submission
	// killDelay: a deleted job ends this long after Delete (PBS kills a
	// running job through its mom).
	killDelay  time.Duration
	deleteTime time.Time
}

func newFake(clk *fakeClock) *fakeBackend {
	return &fakeBackend{clk: clk, submitted: map[string]time.Time{}, sleeps: map[string]int64{}, deletedAt: map[string]bool{}}
}

func (f *fakeBackend) Cluster(context.Context) (*Cluster, error) {
	return &Cluster{Server: "fake", Nodes: []string{"n0", "n1"}, NCPUs: []int{4, 4}}, nil
}

func (f *fakeBackend) Submit(_ context.Context, j Job) (string, error) {
	if f.failAt == len(f.order)+1 {
		return "", errors.New("qsub: Job exceeds queue resource limits")
	}
	id := fmt.Sprintf("%d.fake", len(f.order))
	f.order = append(f.order, id)
	f.submitted[id] = f.clk.Now()
	f.sleeps[id] = j.Sleep
	if f.onSubmit != nil {
		f.onSubmit(len(f.order))
	}
	return id, nil
}

func (f *fakeBackend) Records(_ context.Context, ids []string) ([]Record, error) {
	var out []Record
	for _, id := range append(slices.Clone(ids), f.foreign...) {
		at, ok := f.submitted[id]
		if !ok {
			out = append(out, Record{ID: id, Done: false})
			continue
		}
		end := at.Add(time.Duration(f.sleeps[id]) * time.Second)
		r := Record{ID: id, Queued: at.Unix(), Start: at.Unix(), Nodes: []string{"n0"}}
		switch {
		case f.deletedAt[id]:
			r.Done = !f.clk.Now().Before(f.deleteTime.Add(f.killDelay))
		case !f.clk.Now().Before(end):
			r.Done, r.End, r.Used, r.HasUsed, r.HasExit = true, end.Unix(), f.sleeps[id], true, true
		}
		out = append(out, r)
	}
	return out, nil
}

func (f *fakeBackend) Delete(_ context.Context, ids []string) error {
	for _, id := range ids {
		if _, ok := f.submitted[id]; !ok {
			return fmt.Errorf("not mine: %s", id)
		}
		f.deletedAt[id] = true
	}
	f.deleteTime = f.clk.Now()
	f.deleted = append(f.deleted, ids...)
	return nil
}

func planned(t *testing.T, ats []time.Duration, sleeps []int64) []Job {
	t.Helper()
	var jobs []Job
	for i := range ats {
		jobs = append(jobs, Job{K: i, Name: JobName("t", i), At: ats[i], Sleep: sleeps[i], Walltime: sleeps[i] + 10, Chunks: 1, NCPUs: 4})
	}
	return jobs
}

// TestRunSchedule: each job is submitted at its time after the first,
// and Run returns once the records say every job finished.
func TestRunSchedule(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: start}
	b := newFake(clk)
	ats := []time.Duration{0, 1500 * time.Millisecond, 1500 * time.Millisecond, 40 * time.Second}
	out, err := Run(context.Background(), b, planned(t, ats, []int64{5, 100, 0, 3}), Options{Clock: clk, Poll: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range b.order {
		if got := b.submitted[id].Sub(start); got != ats[i] {
			t.Errorf("job %d submitted at %v, want %v", i, got, ats[i])
		}
	}
	if len(out.Submitted) != 4 || len(out.Deleted) != 0 || len(b.deleted) != 0 {
		t.Errorf("submitted %d, deleted %v / %v", len(out.Submitted), out.Deleted, b.deleted)
	}
	// The last job to end is the 100 s one, submitted at 1.5 s; polls every
	// 2 s after the last submission (40 s) see it at 102 s.
	if got := out.Ended.Sub(start); got != 102*time.Second {
		t.Errorf("ended at %v, want 102s", got)
	}
	if countDone(out.Records, ids(out.Submitted)) != 4 {
		t.Errorf("records %+v", out.Records)
	}
}

// TestRunTimeout: at the timeout, Run deletes exactly its unfinished jobs.
func TestRunTimeout(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	b := newFake(clk)
	b.foreign = []string{"77.fake"} // someone else's job: never touched
	b.killDelay = 3 * time.Second
	out, err := Run(context.Background(), b, planned(t, []time.Duration{0, time.Second, 2 * time.Second}, []int64{1, 500, 600}), Options{Clock: clk, Timeout: 60 * time.Second})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if want := []string{"1.fake", "2.fake"}; !slices.Equal(b.deleted, want) || !slices.Equal(out.Deleted, want) {
		t.Errorf("deleted %v (outcome %v), want %v", b.deleted, out.Deleted, want)
	}
	// Run waits for the deleted jobs to end: 3 s after the timeout.
	if got := clk.now.Sub(time.Unix(1e9, 0)); got != 63*time.Second {
		t.Errorf("stopped at %v, want 63s", got)
	}
	if len(out.Records) != 3 || countDone(out.Records, ids(out.Submitted)) != 3 {
		t.Errorf("records after the cleanup: %+v", out.Records)
	}
}

// TestRunCancel: a cancel (Ctrl-C, SIGTERM) mid-submission stops the
// submissions and deletes only the jobs this run submitted.
func TestRunCancel(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	b := newFake(clk)
	b.foreign = []string{"77.fake"}
	ctx, cancel := context.WithCancel(context.Background())
	b.onSubmit = func(n int) {
		if n == 3 {
			cancel()
		}
	}
	jobs := planned(t, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}, []int64{0, 100, 100, 100, 100})
	out, err := Run(ctx, b, jobs, Options{Clock: clk})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(b.order) != 3 {
		t.Errorf("%d submissions after the cancel, want 3", len(b.order))
	}
	// Job 0 finished at once; no records were read before the cancel, so
	// Run deletes every job it submitted (a finished one is not an error
	// for a back end) and nothing else.
	if want := []string{"0.fake", "1.fake", "2.fake"}; !slices.Equal(b.deleted, want) {
		t.Errorf("deleted %v, want %v", b.deleted, want)
	}
	if len(out.Submitted) != 3 {
		t.Errorf("outcome lists %d submitted", len(out.Submitted))
	}
}

// TestRunSubmitFails: a failed submission stops the run and deletes the
// jobs already submitted.
func TestRunSubmitFails(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	b := newFake(clk)
	b.failAt = 2
	_, err := Run(context.Background(), b, planned(t, []time.Duration{0, time.Second}, []int64{100, 100}), Options{Clock: clk})
	if err == nil || !strings.Contains(err.Error(), "queue resource limits") {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(b.deleted, []string{"0.fake"}) {
		t.Errorf("deleted %v", b.deleted)
	}
}

// TestCompute pins the metrics on hand-made records: a wait, a short job
// (the 10 s floor), a failed job, a deleted job and a missing one.
func TestCompute(t *testing.T) {
	topo, err := model.NewLayout(1, 2, 2) // leaves {0,1}, {2,3}
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Nodes: []string{topo.Name(0), topo.Name(1), topo.Name(2), topo.Name(3)}, Topology: topo}
	n := func(ids ...int) []string {
		var s []string
		for _, i := range ids {
			s = append(s, topo.Name(i))
		}
		return s
	}
	sub := []Submitted{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e"}}
	recs := []Record{
		{ID: "a", Done: true, Queued: 1000, Start: 1000, End: 1100, Used: 100, HasUsed: true, Nodes: n(0, 1), HasExit: true, Starts: 1},
		{ID: "b", Done: true, Queued: 1010, Start: 1030, End: 1032, Used: 0, HasUsed: true, Nodes: n(2), HasExit: true, Starts: 1},
		{ID: "c", Done: true, Queued: 1020, Start: 1100, End: 1140, Used: 40, HasUsed: true, Nodes: n(0, 2, 3), Exit: -29, HasExit: true, Starts: 2},
		{ID: "d", Done: true, Queued: 1030},
		{ID: "zz", Done: true, Queued: 1, Start: 2, End: 3}, // not ours: ignored
	}
	jobs, s, err := Compute(sub, recs, c, model.DefaultCostModel)
	if err != nil {
		t.Fatal(err)
	}
	// a: wait 0, run 100, bsld 1, 2 nodes under one leaf: 1·1000/2 = 500.
	// b: wait 20, run 1 (floor), bsld (20+1)/10 = 2.1, CH 1.
	// c: wait 80, run 40, bsld 3, nodes 0,2,3: pairs (0,2),(0,3) 3 each,
	//    (2,3) 1: 7·1000/3 = 2333.
	want := Summary{Jobs: 5, Ran: 3, Failed: 1, NotRun: 1, Unfinished: 1, RanTwice: 1,
		MeanWait: 100.0 / 3, MaxWait: 80, MeanBSLD: (1 + 2.1 + 3) / 3, MaxBSLD: 3,
		Makespan: 1140 - 1000, NodeSeconds: 2*100 + 1 + 3*40, Nodes: 4,
		MultiNode: 2, MeanCH: (500 + 2333) / 2.0, MeanCHAll: (500 + 1 + 2333) / 3.0}
	want.Utilisation = float64(want.NodeSeconds) / (4 * 140)
	if !near(s, want) {
		t.Errorf("summary\n got %+v\nwant %+v", s, want)
	}
	states := []string{"ran", "ran", "ran", "not-run", "unfinished"}
	chs := []int64{500, 1, 2333, 0, 0}
	for i, j := range jobs {
		if j.State != states[i] || j.CH != chs[i] {
			t.Errorf("job %s: state %s, CH %d; want %s, %d", j.ID, j.State, j.CH, states[i], chs[i])
		}
	}
	if jobs[2].Exit == nil || *jobs[2].Exit != -29 || jobs[4].Exit != nil {
		t.Errorf("exit statuses %v %v", jobs[2].Exit, jobs[4].Exit)
	}
	// Times out of order are an error, not a metric.
	if _, _, err := Compute(sub[:1], []Record{{ID: "a", Done: true, Queued: 10, Start: 5, End: 20}}, c, model.DefaultCostModel); err == nil {
		t.Error("stime before qtime: no error")
	}
}

func near(a, b Summary) bool {
	f := func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 }
	fa, fb := a, b
	fa.MeanWait, fa.MeanBSLD, fa.MaxBSLD, fa.Utilisation, fa.MeanCH, fa.MeanCHAll = 0, 0, 0, 0, 0, 0
	fb.MeanWait, fb.MeanBSLD, fb.MaxBSLD, fb.Utilisation, fb.MeanCH, fb.MeanCHAll = 0, 0, 0, 0, 0, 0
	return fa == fb && f(a.MeanWait, b.MeanWait) && f(a.MeanBSLD, b.MeanBSLD) && f(a.MaxBSLD, b.MaxBSLD) &&
		f(a.Utilisation, b.Utilisation) && f(a.MeanCH, b.MeanCH) && f(a.MeanCHAll, b.MeanCHAll)
}
