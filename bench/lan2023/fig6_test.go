package lan2023_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/optsched/optsched/bench/lan2023"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// paperTrace is the NSA paper's trace, shipped in instances/traces.
const paperTrace = "../../instances/traces/lan2023_trace_1800_40.txt.gz"

// openPaperTrace reads the first n jobs of the paper's trace, or skips
// the test when the shipped trace cannot be read.
func openPaperTrace(t *testing.T, n int) *trace.Trace {
	t.Helper()
	if _, err := os.Stat(paperTrace); errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", paperTrace)
	}
	tr, err := trace.Open(paperTrace, "lan", trace.Options{MaxJobs: n})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

type spec struct {
	id          string
	submit, run int64
	nodes       int
	wantStart   int64
	wantNodes   []int
	wantCost    int64 // 0: not checked
}

func jobsOf(specs []spec) []trace.Job {
	var out []trace.Job
	for _, s := range specs {
		out = append(out, trace.Job{ID: s.id, Submit: s.submit, Runtime: s.run, Walltime: s.run, Nodes: s.nodes})
	}
	return out
}

func span(a, b int) []int {
	var out []int
	for k := a; k <= b; k++ {
		out = append(out, k)
	}
	return out
}

// TestTinyHandComputed pins hand-computed schedules on a 10-node cluster,
// 1 pod of 2 leaves of 5 nodes (leaf 0: nodes 0–4, leaf 1: 5–9). Costs:
// nodes 0–5 pair 10 times under leaf 0 (1000 each) and 5 times across the
// pod (3000 each), 25000 / 6 = 4166; nodes 6–9 pair 6 times under leaf 1,
// 6000 / 4 = 1500; nodes 6, 7 cost 1000 / 2 = 500.
func TestTinyHandComputed(t *testing.T) {
	topo, err := model.NewLayout(1, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, policy string
		jobs         []spec
		why          string
	}{
		{"fcfs", lan2023.FCFS, []spec{
			{id: "A", submit: 0, run: 10, nodes: 6, wantStart: 0, wantNodes: span(0, 5), wantCost: 4166},
			{id: "B", submit: 1, run: 5, nodes: 6, wantStart: 10, wantNodes: span(0, 5), wantCost: 4166},
			{id: "C", submit: 2, run: 3, nodes: 4, wantStart: 10, wantNodes: span(6, 9), wantCost: 1500},
			{id: "D", submit: 3, run: 20, nodes: 2, wantStart: 13, wantNodes: span(6, 7), wantCost: 500},
		}, "B blocks until A ends at 10; C then fits at once; D waits for C's end at 13"},
		{"bf", lan2023.BF, []spec{
			{id: "A", submit: 0, run: 10, nodes: 6, wantStart: 0, wantNodes: span(0, 5), wantCost: 4166},
			{id: "B", submit: 1, run: 5, nodes: 6, wantStart: 10, wantNodes: span(0, 5), wantCost: 4166},
			{id: "C", submit: 2, run: 3, nodes: 4, wantStart: 2, wantNodes: span(6, 9), wantCost: 1500},
			{id: "D", submit: 3, run: 20, nodes: 2, wantStart: 10, wantNodes: span(6, 7), wantCost: 500},
		}, "B's shadow time is 10; C (2+3 < 10) backfills at 2, D (3+20) does not and starts after B at 10"},
		{"bf at the shadow", lan2023.BF, []spec{
			{id: "A", submit: 0, run: 10, nodes: 6, wantStart: 0, wantNodes: span(0, 5)},
			{id: "B", submit: 1, run: 5, nodes: 6, wantStart: 10, wantNodes: span(0, 5)},
			{id: "C", submit: 2, run: 8, nodes: 4, wantStart: 10, wantNodes: span(6, 9)},
			{id: "D", submit: 3, run: 20, nodes: 2, wantStart: 15, wantNodes: span(0, 1)},
		}, "C would end at 10, the shadow time itself: not strictly before, so no backfill; D then waits for B (15) as under FCFS"},
		{"lazy release", lan2023.FCFS, []spec{
			{id: "A", submit: 0, run: 10, nodes: 4, wantStart: 0, wantNodes: span(0, 3)},
			{id: "B", submit: 0, run: 100, nodes: 2, wantStart: 0, wantNodes: span(4, 5)},
			{id: "C", submit: 10, run: 1, nodes: 2, wantStart: 10, wantNodes: span(6, 7)},
		}, "C arrives as A ends: the arrival comes first and C fits, so A's nodes 0–3 are not yet released"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := lan2023.RunEpoch(topo, model.DefaultCostModel, jobsOf(c.jobs), c.policy)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != len(c.jobs) {
				t.Fatalf("%d results for %d jobs", len(res), len(c.jobs))
			}
			for i, s := range c.jobs {
				r := res[i]
				if r.ID != s.id || r.Start != s.wantStart || !slices.Equal(r.Nodes, s.wantNodes) || r.End != s.wantStart+s.run ||
					(s.wantCost != 0 && r.Cost != s.wantCost) {
					t.Errorf("job %s: got start %d end %d nodes %v cost %d; want start %d nodes %v cost %d (%s)",
						s.id, r.Start, r.End, r.Nodes, r.Cost, s.wantStart, s.wantNodes, s.wantCost, c.why)
				}
			}
			checkSchedule(t, topo, jobsOf(c.jobs), res)
		})
	}
	// The figures of the first two cases: FCFS waits 0, 9, 8, 10 (27/4),
	// BF 0, 9, 0, 7 (16/4); both cost (4166+4166+1500+500)/4 = 2583.
	for i, c := range []struct {
		policy     string
		cost, wait int64
	}{{lan2023.FCFS, 2583, 6}, {lan2023.BF, 2583, 4}} {
		res, err := lan2023.RunEpoch(topo, model.DefaultCostModel, jobsOf(cases[i].jobs), c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if f := lan2023.Figure(res, 1, 0); f.Cost != c.cost || f.Wait != c.wait || f.Jobs != 4 {
			t.Errorf("%s figure %+v, want cost %d wait %d", c.policy, f, c.cost, c.wait)
		}
	}
}

// checkSchedule checks a whole epoch's schedule independently of the
// simulator: one window at the first arrival with every node idle and
// every job waiting, whose allocations model.Check must accept (right node
// counts, no node running two jobs at once); every job starts at or after
// its arrival, ends a run time later, and its cost is the pairwise
// definition of the CH cost.
func checkSchedule(t *testing.T, topo *model.Topology, jobs []trace.Job, res []sim.JobResult) {
	t.Helper()
	if len(jobs) == 0 {
		return
	}
	w := &model.Window{Time: jobs[0].Submit, Topology: topo, Cost: model.DefaultCostModel, Idle: span(0, topo.NumNodes()-1)}
	var allocs []model.Allocation
	for i, j := range jobs {
		r := res[i]
		if r.ID != j.ID || r.Submit != j.Submit || r.Start < j.Submit || r.End != r.Start+j.Runtime {
			t.Errorf("job %s: result %+v does not fit the job %+v", j.ID, r, j)
		}
		if want := model.DefaultCostModel.PairwiseCost(topo, r.Nodes); r.Cost != want {
			t.Errorf("job %s: cost %d, pairwise definition %d", j.ID, r.Cost, want)
		}
		w.Jobs = append(w.Jobs, model.Job{ID: j.ID, Nodes: j.Nodes, Walltime: j.Runtime, Submit: j.Submit, Queue: model.DefaultQueue})
		allocs = append(allocs, model.Allocation{Job: i, Nodes: r.Nodes, Start: r.Start})
	}
	if err := model.Check(w, allocs); err != nil {
		t.Errorf("schedule infeasible: %v", err)
	}
}

// TestFig6Published reproduces the published FCFS and BF figures of Fig. 6
// on the paper's trace: epoch 1 is 35077 and 93 for both (the paper), and
// every epoch equals the authors' result files.
func TestFig6Published(t *testing.T) {
	tr := openPaperTrace(t, lan2023.DefaultEpochs*lan2023.DefaultSlice)
	for _, policy := range []string{lan2023.FCFS, lan2023.BF} {
		figs, err := lan2023.Fig6Exact(tr, policy, lan2023.DefaultEpochs, lan2023.DefaultSlice)
		if err != nil {
			t.Fatal(err)
		}
		if len(figs) != 10 {
			t.Fatalf("%s: %d epochs", policy, len(figs))
		}
		if f := figs[0]; f.Cost != 35077 || f.Wait != 93 || f.Jobs != 300 || f.FirstJob != 0 {
			t.Errorf("%s epoch 1: cost %d wait %d over %d jobs; the paper has 35077 and 93", policy, f.Cost, f.Wait, f.Jobs)
		}
		pub := lan2023.PublishedExact(policy)
		for i, f := range figs {
			if f.Epoch != i+1 || f.FirstJob != 300*i || f.Jobs != 300 {
				t.Errorf("%s: epoch %d is %+v", policy, i+1, f)
			}
			if f.Cost != pub[i].Cost || f.Wait != pub[i].Wait {
				t.Errorf("%s epoch %d: %d / %d, published %d / %d", policy, i+1, f.Cost, f.Wait, pub[i].Cost, pub[i].Wait)
			}
		}
	}
}

// TestPaperSchedulesFeasible checks every epoch's whole schedule on the
// paper's trace, and that FCFS starts jobs in arrival order.
func TestPaperSchedulesFeasible(t *testing.T) {
	tr := openPaperTrace(t, 3000)
	topo, err := lan2023.PaperTopology()
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range []string{lan2023.FCFS, lan2023.BF} {
		backfilled := 0
		for e := range 10 {
			jobs := tr.Jobs[300*e : 300*(e+1)]
			res, err := lan2023.RunEpoch(topo, model.DefaultCostModel, jobs, policy)
			if err != nil {
				t.Fatal(err)
			}
			checkSchedule(t, topo, jobs, res)
			for i := 1; i < len(res); i++ {
				if res[i].Start < res[i-1].Start {
					if policy == lan2023.FCFS {
						t.Errorf("fcfs epoch %d: job %s starts at %d, before job %s at %d", e+1, res[i].ID, res[i].Start, res[i-1].ID, res[i-1].Start)
					}
					backfilled++
				}
			}
		}
		if policy == lan2023.BF && backfilled == 0 {
			t.Error("bf backfilled no job on the paper's trace")
		}
	}
}

// randomTrace draws n jobs like the paper's trace: arrivals 5–30 s apart,
// run times 10–1800 s, 1–40 nodes.
func randomTrace(seed uint64, n int) *trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 1))
	tr := &trace.Trace{}
	at := int64(0)
	for i := range n {
		at += 5 + rng.Int64N(26)
		run := 10 + rng.Int64N(1791)
		tr.Jobs = append(tr.Jobs, trace.Job{ID: strconv.Itoa(i + 1), Submit: at, Runtime: run, Walltime: run, Nodes: 1 + rng.IntN(40)})
	}
	return tr
}

// TestRandomFeasibleDeterministic runs both policies on seeded random
// traces, heavier than the paper's, checks the schedules and that a rerun
// gives the same figures.
func TestRandomFeasibleDeterministic(t *testing.T) {
	topo, err := lan2023.PaperTopology()
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		tr := randomTrace(seed, 600)
		for _, policy := range []string{lan2023.FCFS, lan2023.BF} {
			res, err := lan2023.RunEpoch(topo, model.DefaultCostModel, tr.Jobs, policy)
			if err != nil {
				t.Fatal(err)
			}
			checkSchedule(t, topo, tr.Jobs, res)
			a, err := lan2023.Fig6Exact(tr, policy, 2, 300)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := lan2023.Fig6Exact(tr, policy, 2, 300)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("seed %d %s: reruns differ: %+v vs %+v", seed, policy, a, b)
			}
		}
	}
}

// TestWindowDeterministic runs the window sweep on a small random trace
// one and two simulations at a time: the figures must agree, every job
// must run, and every τ must solve windows.
func TestWindowDeterministic(t *testing.T) {
	tr := randomTrace(7, 120)
	taus := []int64{10, 40}
	one, err := lan2023.Fig6Window(context.Background(), tr, taus, 2, 60, lan2023.WindowOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ticks atomic.Int32
	two, err := lan2023.Fig6Window(context.Background(), tr, taus, 2, 60, lan2023.WindowOptions{Workers: 2, Tick: func() { ticks.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if ticks.Load() != 4 {
		t.Errorf("Tick called %d times for 2 τ × 2 epochs", ticks.Load())
	}
	if !reflect.DeepEqual(one, two) {
		t.Errorf("figures depend on the workers:\n%+v\n%+v", one, two)
	}
	for i, tf := range one {
		if tf.Tau != taus[i] || len(tf.Epochs) != 2 || tf.Windows == 0 {
			t.Errorf("τ=%d: %+v", taus[i], tf)
		}
		for e, f := range tf.Epochs {
			if f.Epoch != e+1 || f.FirstJob != 60*e || f.Jobs != 60 || f.Cost < 1 {
				t.Errorf("τ=%d epoch %d: %+v", tf.Tau, e+1, f)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lan2023.Fig6Window(ctx, tr, taus, 2, 60, lan2023.WindowOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled sweep: %v", err)
	}
}

// TestWindowShape checks Fig. 6's shape on the paper's trace: windows cost
// less than FCFS and BF, and the cost falls and the wait rises as τ grows.
func TestWindowShape(t *testing.T) {
	if testing.Short() {
		t.Skip("the τ sweep takes about a second")
	}
	tr := openPaperTrace(t, 3000)
	win, err := lan2023.Fig6Window(context.Background(), tr, lan2023.DefaultTaus(), 10, 300, lan2023.WindowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fcfs, _ := lan2023.Fig6Exact(tr, lan2023.FCFS, 10, 300)
	bf, _ := lan2023.Fig6Exact(tr, lan2023.BF, 10, 300)
	base := min(lan2023.Summarise(fcfs).MeanCost, lan2023.Summarise(bf).MeanCost)
	for i, tf := range win {
		st := lan2023.Summarise(tf.Epochs)
		if st.MeanCost >= base {
			t.Errorf("τ=%d: mean cost %.1f, not below FCFS/BF %.1f", tf.Tau, st.MeanCost, base)
		}
		if i > 0 {
			prev := lan2023.Summarise(win[i-1].Epochs)
			if st.MeanCost >= prev.MeanCost || st.MeanWait <= prev.MeanWait {
				t.Errorf("τ=%d: cost %.1f wait %.1f after τ=%d's %.1f and %.1f", tf.Tau, st.MeanCost, st.MeanWait, win[i-1].Tau, prev.MeanCost, prev.MeanWait)
			}
		}
	}
	var b bytes.Buffer
	r := &lan2023.Report{Trace: paperTrace, Epochs: 10, Slice: 300, FCFS: fcfs, BF: bf, Window: win, Solver: "csp", MaxJobs: 5}
	if err := lan2023.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "cost falls as τ grows: yes; wait rises as τ grows: yes") {
		t.Errorf("shape line missing:\n%s", b.String())
	}
}

func TestErrors(t *testing.T) {
	topo, _ := model.NewLayout(1, 2, 5)
	tr := randomTrace(1, 20)
	cases := []struct {
		name string
		err  error
	}{
		{"unknown policy", func() error { _, err := lan2023.Fig6Exact(tr, "sjf", 1, 10); return err }()},
		{"no trace", func() error { _, err := lan2023.Fig6Exact(nil, lan2023.FCFS, 1, 10); return err }()},
		{"zero epochs", func() error { _, err := lan2023.Fig6Exact(tr, lan2023.FCFS, 0, 10); return err }()},
		{"too few jobs", func() error { _, err := lan2023.Fig6Exact(tr, lan2023.FCFS, 3, 10); return err }()},
		{"huge slice", func() error { _, err := lan2023.Fig6Exact(tr, lan2023.FCFS, 2, 1<<62); return err }()},
		{"too large a job", func() error {
			_, err := lan2023.RunEpoch(topo, model.DefaultCostModel, []trace.Job{{ID: "x", Runtime: 5, Nodes: 11}}, lan2023.BF)
			return err
		}()},
		{"unsorted", func() error {
			_, err := lan2023.RunEpoch(topo, model.DefaultCostModel, []trace.Job{{ID: "a", Submit: 5, Runtime: 5, Nodes: 1}, {ID: "b", Submit: 1, Runtime: 5, Nodes: 1}}, lan2023.FCFS)
			return err
		}()},
		{"zero runtime", func() error {
			_, err := lan2023.RunEpoch(topo, model.DefaultCostModel, []trace.Job{{ID: "a", Nodes: 1}}, lan2023.FCFS)
			return err
		}()},
		{"no topology", func() error { _, err := lan2023.RunEpoch(nil, model.DefaultCostModel, nil, lan2023.FCFS); return err }()},
		{"zero tau", func() error {
			_, err := lan2023.Fig6Window(context.Background(), tr, []int64{0}, 1, 10, lan2023.WindowOptions{})
			return err
		}()},
	}
	for _, c := range cases {
		if !errors.Is(c.err, lan2023.ErrConfig) {
			t.Errorf("%s: error %v, want ErrConfig", c.name, c.err)
		}
	}
}

// TestWriteReport checks the markdown statement of agreement, the "—"
// beyond the published figures, and the CSV rows.
func TestWriteReport(t *testing.T) {
	pub := lan2023.PublishedExact(lan2023.FCFS)
	var fcfs, bf []lan2023.EpochFigure
	for i, p := range pub {
		fcfs = append(fcfs, lan2023.EpochFigure{Epoch: i + 1, FirstJob: 300 * i, Jobs: 300, Cost: p.Cost, Wait: p.Wait, MeanCost: float64(p.Cost), MeanWait: float64(p.Wait)})
	}
	for i, p := range lan2023.PublishedExact(lan2023.BF) {
		bf = append(bf, lan2023.EpochFigure{Epoch: i + 1, FirstJob: 300 * i, Jobs: 300, Cost: p.Cost, Wait: p.Wait})
	}
	bf[2].Cost++
	bf = append(bf, lan2023.EpochFigure{Epoch: 11, FirstJob: 3000, Jobs: 300, Cost: 1, Wait: 2})
	r := &lan2023.Report{Trace: "t.txt", Epochs: 11, Slice: 300, FCFS: fcfs, BF: bf,
		Window: []lan2023.TauFigures{{Tau: 10, Epochs: fcfs, Windows: 7}}, Solver: "csp", MaxJobs: 5}
	var b bytes.Buffer
	if err := lan2023.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| 1 | 0–299 | 35077 | 93 | 35077 / 93 (same) | 35077 | 93 | 35077 / 93 (same) |",
		"| 3 | 600–899 | 35509 | 195 | 35509 / 195 (same) | 35433 | 195 | 35432 / 195 (**differs**) |",
		"| 11 | 3000–3299 | — | — | — | 1 | 2 | — |",
		"FCFS: all 10 epochs compared equal the published figures.",
		"BF: 1 of 10 epochs compared DIFFER from the published figures: epoch 3 (ours 35433 / 195, published 35432 / 195).",
		"| τ = 10 s |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	b.Reset()
	if err := lan2023.WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+10+11+10 {
		t.Fatalf("%d CSV rows", len(rows))
	}
	if got := strings.Join(rows[1], ","); got != "fcfs,0,1,0,300,35077,93,35077,93,35077,93" {
		t.Errorf("first CSV row %q", got)
	}
	if got := strings.Join(rows[21], ","); got != "bf,0,11,3000,300,0,0,1,2,," {
		t.Errorf("BF epoch 11 CSV row %q", got)
	}
	if got := rows[22][:3]; !slices.Equal(got, []string{"window", "10", "1"}) {
		t.Errorf("first window CSV row %q", rows[22])
	}
}
