package learned

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/heuristics/learn"
)

// f1Choice is F1's choice among waiting as the published loop makes it
// (rlscheduler's "f1" key on the jobs, a node per processor; the first
// in waiting among equal keys).
func f1Choice(t *testing.T, jobs []rlscheduler.Job, waiting []rlscheduler.Waiting) int {
	t.Helper()
	key, err := rlscheduler.KeyOf("f1")
	if err != nil {
		t.Fatal(err)
	}
	best := 0
	for i := 1; i < len(waiting); i++ {
		if rlscheduler.CmpKeys(key(jobs[waiting[i].Job], 0), key(jobs[waiting[best].Job], 0)) < 0 {
			best = i
		}
	}
	return best
}

// TestResidualStartsAsF1: the untrained residual policy (its kernel's
// last layer zero) takes F1's choice on random queues, of up to twice
// MaxVisible jobs, with equal keys among them, argmax, and for any
// temperature; its correction is exactly zero.
func TestResidualStartsAsF1(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	norm := Norm{MaxRequest: 200000}
	for trial := range 600 {
		p := NewResidualRLScheduler([]float64{0.001, 0.01, 0.3}[trial%3], learn.NewRand(uint64(trial), 7))
		c := NewChooser(p, norm, false, 0)
		n := 2 + rng.IntN(2*MaxVisible)
		now := int64(1e6 + rng.IntN(1e7))
		jobs := make([]rlscheduler.Job, n)
		ws := make([]rlscheduler.Waiting, n)
		for i := range ws {
			j := rlscheduler.Job{Submit: now - int64(rng.IntN(50000)), Request: int64(1 + rng.IntN(100000)), Procs: int64(1 + rng.IntN(256))}
			if i > 0 && rng.IntN(5) == 0 { // a twin: equal keys
				j = jobs[rng.IntN(i)]
			}
			jobs[i] = j
			ws[i] = rlscheduler.Waiting{Job: i, Submit: j.Submit, Request: j.Request, Nodes: int(j.Procs)}
		}
		got := c.Choose(now, rng.IntN(257), 256, ws)
		if want := f1Choice(t, jobs, ws); got != want {
			t.Fatalf("trial %d (%d waiting): residual picks %d, F1 %d", trial, n, got, want)
		}
		m := min(n, MaxVisible)
		// The probabilities are the softmax of F1's prior alone.
		var sum float64
		e := make([]float64, m)
		for r, i := range c.vis[:m] {
			e[r] = math.Exp(-(f1Key(ws[i]) - f1Key(ws[c.vis[0]])) / (f1Units(256, norm) * p.Temperature))
			sum += e[r]
		}
		for r := range m {
			if math.Abs(c.Probabilities()[r]-e[r]/sum) > 1e-9 {
				t.Fatalf("trial %d: row %d probability %v, F1's prior gives %v", trial, r, c.Probabilities()[r], e[r]/sum)
			}
		}
		z := p.Kernel.Forward(c.x[:m*Features], m)
		for r := range m {
			if z[r] != 0 {
				t.Fatalf("trial %d: untrained correction %v", trial, z[r])
			}
		}
	}
}

// TestResidualReplaysF1: on whole sequences the untrained residual
// policy's schedule is F1's, start for start; written and read back, it
// stays residual with its temperature.
func TestResidualReplaysF1(t *testing.T) {
	w := synthetic(900, 8)
	for i := range w.Jobs {
		w.Jobs[i].Submit += 5e6
	}
	p := NewResidualRLScheduler(0.02, learn.NewRand(1, 2))
	q, err := ReadRLScheduler(bytes.NewReader(weightsOf(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	if q.Residual != ResidualF1 || q.FeatureSet != FeatureSet2 || q.Temperature != p.Temperature {
		t.Fatalf("read back residual %q, feature set %d, temperature %v (wrote %v)", q.Residual, q.FeatureSet, q.Temperature, p.Temperature)
	}
	for _, start := range []int{0, 300, 600} {
		seq := rlscheduler.Sequence{W: w, Start: start, Len: 300}
		f1, err := rlscheduler.Replay(context.Background(), seq, "f1", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, pol := range []*RLScheduler{p, q} {
			s, err := rlscheduler.ReplayChooser(context.Background(), seq, NewChooser(pol, NormOf(w), false, 0))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Verify(); err != nil {
				t.Fatal(err)
			}
			if s.Mean() != f1.Mean() {
				t.Fatalf("sequence %d: residual %v, F1 %v", start, s.Mean(), f1.Mean())
			}
		}
	}
}

// TestResidualTraining: training a residual policy changes its
// correction, is deterministic by seed, validates the untrained policy
// (F1's mean) as update 0, and rejects an imitation or a bad
// temperature.
func TestResidualTraining(t *testing.T) {
	w := synthetic(1500, 5)
	for i := range w.Jobs {
		w.Jobs[i].Submit += 5e6
	}
	cfg := smallConfig(w, 3)
	cfg.Residual, cfg.Temperature = ResidualF1, 0.01
	cfg.ValStarts, cfg.ValLen, cfg.ValEvery, cfg.Updates = []int{600, 1100}, 300, 2, 4
	train := func() *TrainResult {
		res, err := TrainRLScheduler(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := train(), train()
	if !bytes.Equal(weightsOf(t, a.Policy), weightsOf(t, b.Policy)) {
		t.Fatal("two trainings of one seed differ")
	}
	if a.Policy.Residual != ResidualF1 || a.Policy.FeatureSet != FeatureSet2 {
		t.Fatalf("trained policy: residual %q, feature set %d", a.Policy.Residual, a.Policy.FeatureSet)
	}
	var f1 float64
	for _, v := range cfg.ValStarts {
		s, err := rlscheduler.Replay(context.Background(), rlscheduler.Sequence{W: w, Start: v, Len: cfg.ValLen}, "f1", false)
		if err != nil {
			t.Fatal(err)
		}
		f1 += s.Mean() / float64(len(cfg.ValStarts))
	}
	if u := a.Curve[0]; u.Update != 0 || math.Abs(u.Val-f1) > 1e-9*f1 {
		t.Fatalf("update 0 validates %v, F1 gives %v", u.Val, f1)
	}
	// The last update's correction is no longer zero.
	cfg.ValStarts = nil
	c := train().Policy
	params := c.Kernel.Params()
	nz := false
	for _, v := range params[len(params)-2].W {
		nz = nz || v != 0
	}
	if !nz {
		t.Error("the correction's last layer stayed zero")
	}
	for _, bad := range []func(*TrainConfig){
		func(c *TrainConfig) { c.Imitate = "f1" },
		func(c *TrainConfig) { c.Temperature = -1 },
		func(c *TrainConfig) { c.Residual = "sjf" },
	} {
		c := cfg
		bad(&c)
		if _, err := TrainRLScheduler(context.Background(), c); err == nil {
			t.Errorf("bad residual configuration accepted: %+v", c.Residual)
		}
	}
}
