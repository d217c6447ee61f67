package learned

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/bench/predict"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics/learn"
)

// TestUserPredictorMAPE: the online user-mape rule agrees with
// bench/predict's UserMAPE on random histories (each user's jobs
// observed in end order, as bench/predict's history orders them).
func TestUserPredictorMAPE(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		p := NewUserPredictor()
		p.MAPE = true
		var hist []predict.Job
		var end int64
		for i := range rng.IntN(60) {
			run, req := int64(1+rng.IntN(1000)), int64(1+rng.IntN(1500))
			end += int64(1 + rng.IntN(5))
			hist = append(hist, predict.Job{ID: string(rune('a' + i%26)), User: "u", Start: end - run, Run: run, Request: req})
			p.Observe("u", run, req)
		}
		h := predict.NewHistory(hist)
		for range 10 {
			req, el := int64(1+rng.IntN(1500)), int64(rng.IntN(1200))
			want := float64(el) + predict.UserMAPE{K: PredictK}.Remaining(h, end, predict.Running{User: "u", Request: req, Elapsed: el})
			if got := p.Total("u", req, el); math.Abs(got-max(want, 1)) > 1e-9 {
				t.Fatalf("trial %d: Total(req %d, elapsed %d) = %v, bench/predict's user-mape %v", trial, req, el, got, want)
			}
		}
	}
}

// TestQueueRuleIsEASY: the Queue design's rule, reserving for the job of
// the lowest key and ranking by the request (or request × nodes), is
// bench/sim's SJF (or SAF) with EASY backfilling where the requests
// bound the run times (the synthetic workload's are exact): the same
// start for every job, every start through model.Check.
func TestQueueRuleIsEASY(t *testing.T) {
	jobs := SyntheticSchert(11, 3, 128)
	topo, err := SchertTopology(SyntheticCores)
	if err != nil {
		t.Fatal(err)
	}
	for _, area := range []bool{false, true} {
		net := NewRLSchert(SchertNormOf(jobs), learn.NewRand(1, 1))
		net.Design = SchertDesign{Queue: true, Reserve: SchertReserveKey, RankRequest: true, Area: area, MAPE: true, MarginKill: true}
		s := NewSchert(net, false, false, 0)
		s.Rule = true
		got, err := sim.Run(context.Background(), &trace.Trace{Jobs: jobs}, sim.Config{Topology: topo, Nodes: SyntheticCores,
			Policy: sim.Learned, Picker: s, Killer: s, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		pol := map[bool]string{false: "sjf", true: "saf"}[area]
		want, err := sim.Run(context.Background(), &trace.Trace{Jobs: jobs}, sim.Config{Topology: topo, Nodes: SyntheticCores, Policy: pol, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		start := map[string]int64{}
		for _, j := range want.Jobs {
			start[j.ID] = j.Start
		}
		if len(got.Jobs) != len(jobs) {
			t.Fatalf("%s: %d of %d jobs ran", pol, len(got.Jobs), len(jobs))
		}
		for _, j := range got.Jobs {
			if start[j.ID] != j.Start {
				t.Fatalf("%s: job %s started at %d, bench/sim's %s at %d", pol, j.ID, j.Start, pol, start[j.ID])
			}
		}
	}
}

// TestQueueWindowByHand pins the visible set and the valid actions of a
// Queue design: slot 0 the reservation's holder, slots 1–4 the others
// that may start without delaying it, by rank.
func TestQueueWindowByHand(t *testing.T) {
	net := NewRLSchert(SchertNorm{Slot: 10}, learn.NewRand(1, 1))
	net.Design = SchertDesign{Queue: true, Reserve: SchertReserveKey, RankRequest: true, MAPE: true}
	s := NewSchert(net, false, false, 0)
	s.Rule = true
	// 10 nodes, 4 idle; one running job of 6 nodes requested to end at
	// 100; now 50. Waiting, in arrival order: A 8 nodes request 50, B 6
	// nodes 20, C 2 nodes 500, D 3 nodes 30, E 4 nodes 200, F 5 nodes 10.
	q := []sim.QueuedJob{{Key: 0, Request: 50, Nodes: 8}, {Key: 1, Request: 20, Nodes: 6}, {Key: 2, Request: 500, Nodes: 2},
		{Key: 3, Request: 30, Nodes: 3}, {Key: 4, Request: 200, Nodes: 4}, {Key: 5, Request: 10, Nodes: 5}}
	r := []sim.RunningJob{{Key: 9, Start: 0, Request: 100, Nodes: 6}}
	// F, the shortest request, holds the reservation and does not fit:
	// its shadow time is 100 with 10 − 5 = 5 nodes spare. D (ends at 80),
	// E and C (within the spare) may start, by request; A and B do not fit.
	s.observe(50, 4, 10, q, r)
	o := &s.obs
	if want := [SchertVisible]int{5, 3, 4, 2, -1}; o.vis != want {
		t.Fatalf("visible %v, want %v", o.vis, want)
	}
	if want := [SchertVisible + 1]bool{false, true, true, true, false, true}; o.valid != want {
		t.Fatalf("valid %v, want %v", o.valid, want)
	}
	if got := s.Pick(50, 4, 10, q, r); got != 3 {
		t.Errorf("the rule picked queue index %d, want 3 (D, the shortest request that may start)", got)
	}
	// 2 idle nodes, two running jobs of 4 nodes requested to end at 100
	// and 400: F's shadow is 100 with 1 node spare, so C (2 nodes, ends
	// at 550) would delay it, and nothing else fits: only F is visible.
	s.observe(50, 2, 10, q, []sim.RunningJob{{Key: 9, Start: 0, Request: 100, Nodes: 4}, {Key: 8, Start: 0, Request: 400, Nodes: 4}})
	if want := [SchertVisible]int{5, -1, -1, -1, -1}; o.vis != want {
		t.Fatalf("visible %v, want %v", o.vis, want)
	}
	if o.valid[0] || o.valid[1] {
		t.Fatalf("valid %v", o.valid)
	}
}

// TestKillRule2ByHand: KillRule2 kills a running job (predicted length
// 1,000 s, its request) for a waiting job that would fit in its nodes
// only with the margin, and never after 10 % of its predicted length.
func TestKillRule2ByHand(t *testing.T) {
	net := NewRLSchert(SchertNorm{Slot: 10}, learn.NewRand(1, 1))
	net.Design = SchertDesign{Queue: true, Reserve: SchertReserveKey, RankRequest: true, MarginKill: true}
	for _, c := range []struct {
		waitReq, elapsed int64
		kill             bool
		why              string
	}{
		{10, 10, true, "gain 990/10 = 99 > 2 × (10 + 10)/1000"},
		{900, 10, false, "gain 990/900 = 1.1 < 2 × (10 + 900)/1000 = 1.82"},
		{10, 150, false, "run 15 % of its predicted length"},
	} {
		s := NewSchert(net, true, false, 0)
		s.Rule = true
		q := []sim.QueuedJob{{Key: 0, Request: c.waitReq, Nodes: 6}}
		r := []sim.RunningJob{{Key: 9, Start: 1000 - c.elapsed, Request: 1000, Nodes: 6}}
		got := s.Kill(1000, 2, 8, q, r)
		if (got == 0) != c.kill {
			t.Errorf("waiting request %d, elapsed %d: kill %v, want %v (%s)", c.waitReq, c.elapsed, got == 0, c.kill, c.why)
		}
	}
}

// TestSchertDesignFile: a design's weights file keeps the design; the
// paper's design is still written in the first format.
func TestSchertDesignFile(t *testing.T) {
	for _, d := range []SchertDesign{{}, NewSchertDesign, {Queue: true, Reserve: SchertReserveNone, Area: true, MAPE: true},
		{Queue: true, Reserve: SchertReserveOldest, RankRequest: true}} {
		net := NewRLSchert(SchertNorm{Slot: 7}, learn.NewRand(2, 2))
		net.Design = d
		var b bytes.Buffer
		if err := WriteRLSchert(&b, net); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRLSchert(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		if back.Design != d || back.Norm != net.Norm {
			t.Errorf("design %v slot %v read back as %v, %v", d, net.Norm, back.Design, back.Norm)
		}
	}
}
