package learned

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/heuristics/learn"
)

// synthetic returns a random workload of n jobs on a 64-node cluster,
// loaded enough that queues form.
func synthetic(n int, seed uint64) *rlscheduler.Workload {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := &rlscheduler.Workload{MaxNodes: 64, MaxProcs: 64}
	var t int64
	for i := range n {
		t += int64(rng.IntN(300))
		run := int64(1 + rng.IntN(3600))
		req := run + int64(rng.IntN(3600))
		w.Jobs = append(w.Jobs, rlscheduler.Job{Number: int64(i + 1), Submit: t, Run: run, Request: req, Procs: int64(1 + rng.IntN(48))})
	}
	return w
}

// TestTrainingStartsAvoidTests: no training episode overlaps a test
// sequence, and every start that avoids them is offered.
func TestTrainingStartsAvoidTests(t *testing.T) {
	starts := TrainingStarts(12000, 256, rlscheduler.Starts, rlscheduler.SequenceLength)
	if len(starts) == 0 {
		t.Fatal("no starts")
	}
	ok := map[int]bool{}
	for _, s := range starts {
		ok[s] = true
		for _, ts := range rlscheduler.Starts {
			if s < ts+rlscheduler.SequenceLength && ts < s+256 {
				t.Fatalf("episode [%d, %d) overlaps the test sequence at %d", s, s+256, ts)
			}
		}
	}
	for s := 0; s+256 <= 12000; s++ {
		clash := false
		for _, ts := range rlscheduler.Starts {
			if s < ts+rlscheduler.SequenceLength && ts < s+256 {
				clash = true
			}
		}
		if !clash && !ok[s] {
			t.Fatalf("start %d avoids the tests but is not offered", s)
		}
	}
}

func smallConfig(w *rlscheduler.Workload, seed uint64) TrainConfig {
	cfg := DefaultTrainConfig()
	cfg.Workload, cfg.Seed = w, seed
	cfg.Updates, cfg.EpisodesPerUpdate, cfg.EpisodeLen = 2, 3, 64
	cfg.TestStarts, cfg.TestLen = []int{0}, 100
	return cfg
}

func weightsOf(t *testing.T, p *RLScheduler) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteRLScheduler(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTrainDeterministic: the same seed gives the same weights byte for
// byte; another seed others; and training changed the weights.
func TestTrainDeterministic(t *testing.T) {
	w := synthetic(600, 3)
	run := func(seed uint64) []byte {
		res, err := TrainRLScheduler(context.Background(), smallConfig(w, seed))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Curve) != 2 || res.Curve[1].Steps == 0 {
			t.Fatalf("curve %+v: no decisions with a choice", res.Curve)
		}
		return weightsOf(t, res.Policy)
	}
	a, b, c := run(1), run(1), run(2)
	if !bytes.Equal(a, b) {
		t.Error("seed 1 twice gave different weights")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 gave the same weights")
	}
	init := NewRLScheduler(learn.NewRand(1, 0x726c_7472_6169_6e))
	learn.RoundWeights(init.Kernel.Params())
	if bytes.Equal(a, weightsOf(t, init)) {
		t.Error("training left the weights unchanged")
	}
}

// TestWeightsRoundTrip: a policy read back chooses as the written one
// (weights rounded to float32 by the writer), and a corrupt file is an
// error.
func TestWeightsRoundTrip(t *testing.T) {
	p := NewRLScheduler(learn.NewRand(5, 5))
	learn.RoundWeights(p.Kernel.Params())
	b := weightsOf(t, p)
	q, err := ReadRLScheduler(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for i, par := range p.Kernel.Params() {
		for k, v := range par.W {
			if q.Kernel.Params()[i].W[k] != v {
				t.Fatalf("%s[%d]: %v read back as %v", par.Name, k, v, q.Kernel.Params()[i].W[k])
			}
		}
	}
	raw := gunzipped(t, b)
	raw[len(raw)/2] ^= 1
	if _, err := ReadRLScheduler(bytes.NewReader(raw)); err == nil {
		t.Error("a flipped bit was read without error")
	}
}

func gunzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zr, err := gzipReader(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestMaskNeverPicksPadding: on queues of every length up to and beyond
// MaxVisible, the padding positions get probability exactly 0 and the
// choice (greedy and sampled) is always a visible waiting job, even with
// weights that would favour padding rows if they were computed.
func TestMaskNeverPicksPadding(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sample := range []bool{false, true} {
		p := NewRLScheduler(learn.NewRand(7, 7))
		c := NewChooser(p, Norm{MaxRequest: 7200}, sample, 3)
		for trial := range 300 {
			n := 1 + rng.IntN(MaxVisible+40)
			ws := make([]rlscheduler.Waiting, n)
			for i := range ws {
				ws[i] = rlscheduler.Waiting{Job: i, Submit: int64(rng.IntN(1000)), Request: int64(1 + rng.IntN(7200)), Nodes: 1 + rng.IntN(64)}
			}
			k := c.Choose(2000, rng.IntN(65), 64, ws)
			if k < 0 || k >= n {
				t.Fatalf("trial %d: chose %d of %d", trial, k, n)
			}
			if n == 1 {
				continue
			}
			vis := min(n, MaxVisible)
			for i := vis; i < MaxVisible; i++ {
				if c.Probabilities()[i] != 0 {
					t.Fatalf("trial %d: padding %d has probability %g", trial, i, c.Probabilities()[i])
				}
			}
			// The chosen job is among the visible ones: the MaxVisible
			// earliest submitted (stable).
			later := 0
			for _, w := range ws {
				if w.Submit < ws[k].Submit {
					later++
				}
			}
			if later >= MaxVisible {
				t.Fatalf("trial %d: chose a job with %d earlier-submitted jobs, not visible", trial, later)
			}
		}
	}
}

// TestChooserOnProtocol: the policy runs the protocol's loop on a
// sequence; the schedule passes the protocol's independent check and
// every job starts.
func TestChooserOnProtocol(t *testing.T) {
	w := synthetic(400, 9)
	p := NewRLScheduler(learn.NewRand(1, 1))
	seq := rlscheduler.Sequence{W: w, Start: 50, Len: 300}
	for _, sample := range []bool{false, true} {
		s, err := rlscheduler.ReplayChooser(context.Background(), seq, NewChooser(p, NormOf(w), sample, 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(); err != nil {
			t.Fatal(err)
		}
		for i, st := range s.Starts {
			if st < 0 {
				t.Fatalf("job %d never started", i)
			}
		}
	}
}

// BenchmarkDecide128 is one decision with 128 visible jobs (and 200
// waiting): features (of each feature set), the kernel on 128 rows, the
// masked softmax, the argmax.
func BenchmarkDecide128(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ws := make([]rlscheduler.Waiting, 200)
	for i := range ws {
		ws[i] = rlscheduler.Waiting{Job: i, Submit: int64(i * 10), Request: int64(1 + rng.IntN(7200)), Nodes: 1 + rng.IntN(64)}
	}
	for _, fs := range []int{FeatureSet1, FeatureSet2} {
		b.Run(fmt.Sprintf("features%d", fs), func(b *testing.B) {
			p := NewRLScheduler(learn.NewRand(1, 1))
			p.FeatureSet = fs
			c := NewChooser(p, Norm{MaxRequest: 7200}, false, 1)
			b.ReportAllocs()
			for b.Loop() {
				c.Choose(5000, 20, 64, ws)
			}
		})
	}
	b.Run("residual", func(b *testing.B) {
		c := NewChooser(NewResidualRLScheduler(DefaultTemperature, learn.NewRand(1, 1)), Norm{MaxRequest: 7200}, false, 1)
		b.ReportAllocs()
		for b.Loop() {
			c.Choose(5000, 20, 64, ws)
		}
	})
}

func gzipReader(b []byte) (*gzip.Reader, error) { return gzip.NewReader(bytes.NewReader(b)) }

// TestShipped: both shipped weights files read, with the design's
// sizes; a trace without shipped weights is an error.
func TestShipped(t *testing.T) {
	for _, tr := range []string{"lublin-1", "hpc2n"} {
		p, err := Shipped(tr)
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		if got := p.Kernel.NumParams(); got != 961 {
			t.Errorf("%s: %d parameters, want 961", tr, got)
		}
	}
	if _, err := Shipped("sdsc-sp2"); err == nil {
		t.Error("weights for a trace not shipped")
	}
}

// TestFeatureSet2RanksAsF1: with feature set 2, FLogArea − FAge orders
// the visible jobs as F1's key does (it is the key less a constant of
// the decision, in other units), so a linear kernel can take F1's
// choices; checked on random queues where no feature is capped.
func TestFeatureSet2RanksAsF1(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	norm := Norm{MaxRequest: 200000}
	x := make([]float64, MaxVisible*Features)
	for trial := range 500 {
		n := 2 + rng.IntN(MaxVisible-1)
		now := int64(1e6 + rng.IntN(1e7))
		ws := make([]rlscheduler.Waiting, n)
		for i := range ws {
			ws[i] = rlscheduler.Waiting{Job: i, Submit: now - int64(rng.IntN(50000)), Request: int64(1 + rng.IntN(100000)), Nodes: 1 + rng.IntN(256)}
		}
		vis, m := observe(x, nil, now, rng.IntN(257), 256, ws, norm, FeatureSet2)
		bestF, bestK := -1, -1
		var kf, kk float64
		for r, i := range vis[:m] {
			w := ws[i]
			f1 := math.Log10(float64(w.Request))*float64(w.Nodes) + 870*math.Log10(float64(w.Submit))
			k := x[r*Features+FLogArea] - x[r*Features+FAge]
			if x[r*Features+FAge] >= almostOne || x[r*Features+FLogArea] >= almostOne {
				t.Fatalf("trial %d: a capped feature", trial)
			}
			if bestF < 0 || f1 < kf {
				bestF, kf = r, f1
			}
			if bestK < 0 || k < kk {
				bestK, kk = r, k
			}
		}
		// Equal up to rounding: the two minima's F1 keys agree closely.
		w1, w2 := ws[vis[bestF]], ws[vis[bestK]]
		k1 := math.Log10(float64(w1.Request))*float64(w1.Nodes) + 870*math.Log10(float64(w1.Submit))
		k2 := math.Log10(float64(w2.Request))*float64(w2.Nodes) + 870*math.Log10(float64(w2.Submit))
		if math.Abs(k1-k2) > 1e-6*math.Abs(k1) {
			t.Fatalf("trial %d: F1 picks row %d (key %.9g), the features row %d (key %.9g)", trial, bestF, k1, bestK, k2)
		}
	}
}

// TestWeightsRoundTripFeatureSet2: a feature-set-2 policy's file reads
// back as feature set 2, with its weights, and chooses alike; a
// feature-set-1 file stays feature set 1.
func TestWeightsRoundTripFeatureSet2(t *testing.T) {
	for _, fs := range []int{FeatureSet1, FeatureSet2} {
		p := NewRLScheduler(learn.NewRand(5, 6))
		p.FeatureSet = fs
		learn.RoundWeights(p.Kernel.Params())
		q, err := ReadRLScheduler(bytes.NewReader(weightsOf(t, p)))
		if err != nil {
			t.Fatal(err)
		}
		if q.FeatureSet != fs {
			t.Fatalf("feature set %d read back as %d", fs, q.FeatureSet)
		}
		w := synthetic(300, 4)
		seq := rlscheduler.Sequence{W: w, Start: 10, Len: 250}
		a, err := rlscheduler.ReplayChooser(context.Background(), seq, NewChooser(p, NormOf(w), false, 0))
		if err != nil {
			t.Fatal(err)
		}
		b, err := rlscheduler.ReplayChooser(context.Background(), seq, NewChooser(q, NormOf(w), false, 0))
		if err != nil {
			t.Fatal(err)
		}
		if a.Mean() != b.Mean() {
			t.Fatalf("feature set %d: %v written, %v read back", fs, a.Mean(), b.Mean())
		}
	}
	if _, err := ReadRLScheduler(bytes.NewReader([]byte("not a weights file at all"))); err == nil {
		t.Error("garbage read without error")
	}
}

// TestImitationAndValidation: the warm start learns F1's choices (the
// kernel then takes most of them), training never draws an episode
// touching a validation sequence, and the weights returned are those of
// the lowest validation mean among the measured updates, whose argmax
// policy gives that mean again.
func TestImitationAndValidation(t *testing.T) {
	w := synthetic(1500, 5)
	for i := range w.Jobs {
		w.Jobs[i].Submit += 5e6 // F1's waiting term uncapped (FAge)
	}
	cfg := smallConfig(w, 3)
	cfg.FeatureSet, cfg.Imitate, cfg.ImitationEpisodes, cfg.ImitationEpochs = FeatureSet2, "f1", 4, 60
	cfg.ValStarts, cfg.ValLen, cfg.ValEvery, cfg.Updates = []int{600, 1100}, 300, 2, 5
	res, err := TrainRLScheduler(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Starts {
		for _, v := range cfg.ValStarts {
			if s < v+cfg.ValLen && v < s+cfg.EpisodeLen {
				t.Fatalf("episode start %d touches the validation sequence at %d", s, v)
			}
		}
	}
	if res.Curve[0].Update != 0 || res.Curve[0].Imitation < 0.5 {
		t.Fatalf("imitation: %+v", res.Curve[0])
	}
	best, bestU := math.Inf(1), -1
	for _, u := range res.Curve {
		if u.Val > 0 && u.Val < best {
			best, bestU = u.Val, u.Update
		}
	}
	if res.Best != bestU || res.BestVal != best {
		t.Fatalf("kept update %d (%v), the curve's best is %d (%v)", res.Best, res.BestVal, bestU, best)
	}
	if res.Policy.FeatureSet != FeatureSet2 {
		t.Fatalf("feature set %d", res.Policy.FeatureSet)
	}
	// The kept weights (rounded to float32 as written) give the kept mean
	// within rounding's reach: recomputed, not trusted.
	got, err := validationMean(context.Background(), cfg, res.Policy, NormOf(w))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-best) > 0.05*best {
		t.Fatalf("kept weights give %v on validation, recorded %v", got, best)
	}
	cfg.Imitate = "nope"
	if _, err := TrainRLScheduler(context.Background(), cfg); err == nil {
		t.Error("imitation of an unknown policy accepted")
	}
}
