package learned

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics/learn"
)

// TestUserPredictorByHand pins the online user-ratio-cond rule.
func TestUserPredictorByHand(t *testing.T) {
	p := NewUserPredictor()
	p.Observe("u", 50, 100)
	p.Observe("u", 80, 100)
	p.Observe("", 1, 100) // no user: ignored
	for _, c := range []struct {
		user         string
		req, elapsed int64
		want         float64
		why          string
	}{
		{"u", 200, 0, 130, "median of 0.5 and 0.8 times 200"},
		{"u", 200, 60, 160, "only the run of 80 s lasted past 60 s: 0.8"},
		{"u", 200, 90, 200, "no run lasted past 90 s: the request"},
		{"u", 200, 250, 250, "past its request: the elapsed time"},
		{"v", 300, 0, 300, "an unknown user: the request"},
	} {
		if got := p.Total(c.user, c.req, c.elapsed); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Total(%s, %d, %d) = %v, want %v (%s)", c.user, c.req, c.elapsed, got, c.want, c.why)
		}
	}
}

// TestWindowGreedy: only the 5 oldest are visible; the shortest (or
// smallest area) that fits is picked; none fits: −1.
func TestWindowGreedy(t *testing.T) {
	q := []sim.QueuedJob{{Request: 50, Nodes: 1}, {Request: 10, Nodes: 9}, {Request: 30, Nodes: 2}, {Request: 40, Nodes: 1},
		{Request: 60, Nodes: 1}, {Request: 1, Nodes: 1}}
	if got := (WindowGreedy{}).Pick(0, 4, 10, q, nil); got != 2 {
		t.Errorf("sjf-5 picked %d, want 2 (job 1 does not fit, job 5 is not visible)", got)
	}
	if got := (WindowGreedy{Area: true}).Pick(0, 4, 10, q, nil); got != 3 {
		t.Errorf("saf-5 picked %d, want 3 (area 40 < 50 < 60)", got)
	}
	if got := (WindowGreedy{}).Pick(0, 0, 10, q, nil); got != -1 {
		t.Errorf("with no idle node it picked %d", got)
	}
}

// countingKiller counts the kills a Schert makes.
type countingKiller struct {
	*Schert
	kills int
}

func (c *countingKiller) Kill(now int64, idle, nodes int, q []sim.QueuedJob, r []sim.RunningJob) int {
	k := c.Schert.Kill(now, idle, nodes, q, r)
	if k >= 0 {
		c.kills++
	}
	return k
}

// TestSchertRunsChecked runs the rules and an untrained network (argmax
// and sampling, with kills) on synthetic jobs with every start through
// model.Check: every job runs once and whole, and the simulator counts
// the kills the policy made.
func TestSchertRunsChecked(t *testing.T) {
	jobs := SyntheticSchert(3, 2, 128)
	net := NewRLSchert(SchertNormOf(jobs), learn.NewRand(1, 1))
	topo, err := SchertTopology(SyntheticCores)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, c := range []struct{ rule, sample bool }{{true, false}, {false, false}, {false, true}} {
		s := NewSchert(net, true, c.sample, 7)
		s.Rule = c.rule
		k := &countingKiller{Schert: s}
		r, err := sim.Run(context.Background(), &trace.Trace{Jobs: jobs}, sim.Config{Topology: topo, Nodes: SyntheticCores,
			Policy: sim.Learned, Picker: s, Killer: k, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Jobs) != len(jobs) || r.Kills != k.kills {
			t.Fatalf("rule %v sample %v: %d of %d jobs ran; %d kills counted, the policy made %d", c.rule, c.sample, len(r.Jobs), len(jobs), r.Kills, k.kills)
		}
		for _, j := range r.Jobs {
			if j.Start < j.Submit || j.End-j.Start < 1 {
				t.Fatalf("job %s ran %d–%d, submitted %d", j.ID, j.Start, j.End, j.Submit)
			}
		}
		total += k.kills
	}
	if total == 0 {
		t.Error("no policy killed anything on a loaded workload: the kill path went untested")
	}
}

// TestTrainSchertDeterministic: the same configuration trains the same
// weights, with either picker; the weights survive a write and a read
// (float32), the picker's kind with them.
func TestTrainSchertDeterministic(t *testing.T) {
	for _, flat := range []bool{false, true} {
		t.Run(map[bool]string{false: "kernel", true: "flat"}[flat], func(t *testing.T) { trainSchertTwice(t, flat) })
	}
	if _, err := ReadRLSchert(bytes.NewReader(shippedLublin)); err == nil {
		t.Error("an rlscheduler file was read as rlschert weights")
	}
	for _, name := range []string{"hpc2n", "synthetic", "lublin-1"} {
		if _, err := ShippedRLSchert(name); err != nil {
			t.Errorf("shipped weights %s: %v", name, err)
		}
	}
	if _, err := ShippedRLSchert("kth"); err == nil {
		t.Error("weights for kth were found")
	}
}

func trainSchertTwice(t *testing.T, flat bool) {
	jobs := SyntheticSchert(2, 6, 64)
	cfg := SchertTrainConfig{Jobs: jobs, Nodes: SyntheticCores, Seed: 4, ImitationEpisodes: 3, ImitationEpochs: 3,
		Updates: 2, EpisodesPerUpdate: 2, EpisodeLen: 64, TestStarts: []int{0}, TestLen: 64, FlatPicker: flat}
	var bufs [2]bytes.Buffer
	var nets [2]*RLSchert
	for i := range bufs {
		res, err := TrainRLSchert(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Curve) != 3 || res.Curve[0].Update != 0 || res.Curve[0].Steps == 0 {
			t.Fatalf("curve %+v", res.Curve)
		}
		if slices.Contains(res.Starts, 0) {
			t.Fatal("training drew the test sequence's start")
		}
		if err := WriteRLSchert(&bufs[i], res.Policy); err != nil {
			t.Fatal(err)
		}
		nets[i] = res.Policy
	}
	if !bytes.Equal(bufs[0].Bytes(), bufs[1].Bytes()) {
		t.Error("the same configuration trained different weights")
	}
	back, err := ReadRLSchert(bytes.NewReader(bufs[0].Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Norm != nets[0].Norm || back.Flat != flat || nets[0].Flat != flat {
		t.Errorf("slot %v, flat %v read back as %v, %v", nets[0].Norm, nets[0].Flat, back.Norm, back.Flat)
	}
	for i, p := range append(nets[0].Actor.Params(), nets[0].Killer.Params()...) {
		q := append(back.Actor.Params(), back.Killer.Params()...)[i]
		if !slices.Equal(p.W, q.W) {
			t.Fatalf("parameter %s differs after a write and a read", p.Name)
		}
	}
}

// TestSchertDecisionTime: the median of one decision (the picker's
// network on 5 visible jobs, with a 60-job queue and 40 running jobs)
// is under 1 ms. The limit is the issue's; the decision takes some
// microseconds, so a busy machine does not make the test flaky.
func TestSchertDecisionTime(t *testing.T) {
	d := decisionTimes(201)
	if m := d[len(d)/2]; m > time.Millisecond {
		t.Errorf("median decision %v, want < 1 ms", m)
	}
}

// decisionTimes times n decisions on a fixed state, sorted.
func decisionTimes(n int) []time.Duration {
	net, err := ShippedRLSchert("hpc2n")
	if err != nil {
		panic(err)
	}
	s := NewSchert(net, true, false, 1)
	var q []sim.QueuedJob
	for i := range 60 {
		q = append(q, sim.QueuedJob{Submit: int64(i), Request: int64(600 + 37*i), Nodes: 1 + i%16, Key: i, User: "u"})
	}
	var r []sim.RunningJob
	for i := range 40 {
		r = append(r, sim.RunningJob{Key: 100 + i, User: "v", Start: int64(-i * 50), Request: int64(3600 + 100*i), Nodes: 5})
	}
	for i := range 30 {
		s.Pred.Observe("u", int64(300+i*10), 900)
	}
	d := make([]time.Duration, n)
	for i := range d {
		t0 := time.Now()
		s.Kill(1000, 40, 240, q, r)
		s.Pick(1000, 40, 240, q, r)
		d[i] = time.Since(t0)
	}
	slices.Sort(d)
	return d
}

// BenchmarkSchertDecision reports one decision's (kill and pick) median
// as median-ns/op.
func BenchmarkSchertDecision(b *testing.B) {
	d := decisionTimes(max(b.N, 1))
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "median-ns/op")
}

// TestShippedSchertDesigns: each shipped weights file stores the design
// the seventh round's rules chose for its trace on validation sequences
// (docs/results/2026-11-27-rlschert.md): the area rank by request on
// HPC2N and Lublin-1, the length rank by request on the synthetic
// workload, with that trace's KillRule2 thresholds. A file trained with
// the wrong flags fails here.
func TestShippedSchertDesigns(t *testing.T) {
	base := SchertDesign{Queue: true, Reserve: SchertReserveKey, RankRequest: true, MAPE: true, MarginKill: true}
	want := map[string]SchertDesign{"hpc2n": base, "lublin-1": base, "synthetic": base}
	for name, c := range map[string]struct {
		area           bool
		margin, elapse float64
	}{"hpc2n": {true, 2, 0.25}, "lublin-1": {true, 8, 0.25}, "synthetic": {false, 8, 0.25}} {
		d := want[name]
		d.Area, d.KillMargin, d.KillElapsed = c.area, c.margin, c.elapse
		want[name] = d
	}
	for name, d := range want {
		net, err := ShippedRLSchert(name)
		if err != nil {
			t.Fatal(err)
		}
		if net.Design != d {
			t.Errorf("shipped %s: design %v, want %v", name, net.Design, d)
		}
	}
}
