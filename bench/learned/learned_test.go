package learned

import (
	"bytes"
	"compress/gzip"
	"context"
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
// waiting): features, the kernel on 128 rows, the masked softmax, the
// argmax.
func BenchmarkDecide128(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ws := make([]rlscheduler.Waiting, 200)
	for i := range ws {
		ws[i] = rlscheduler.Waiting{Job: i, Submit: int64(i * 10), Request: int64(1 + rng.IntN(7200)), Nodes: 1 + rng.IntN(64)}
	}
	c := NewChooser(NewRLScheduler(learn.NewRand(1, 1)), Norm{MaxRequest: 7200}, false, 1)
	b.ReportAllocs()
	for b.Loop() {
		c.Choose(5000, 20, 64, ws)
	}
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
