package nsa

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// TestSaveLoadRoundTrip: for every architecture, with and without the
// idle channel and relative ids, a policy written and read back computes
// exactly the outputs of the original with its weights rounded to
// float32, keeps its settings, and writes back the same bytes.
func TestSaveLoadRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for a := Arch(0); a < numArch; a++ {
		idle, rel := a%2 == 0, a%3 == 0
		p, err := NewPolicy(a, 30, idle, rel, 40, rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, par := range p.Net.Params() { // weights of every magnitude
			for i := range par.W {
				par.W[i] = rng.NormFloat64()
			}
		}
		var buf bytes.Buffer
		if err := WritePolicy(&buf, p); err != nil {
			t.Fatal(err)
		}
		file := bytes.Clone(buf.Bytes())
		got, err := ReadPolicy(&buf)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if got.Net.Arch != a || got.Idle != idle || got.Relative != rel || got.NMax != 40 || got.Net.Q != 30 || got.Net.Out != 30 {
			t.Fatalf("%s: settings changed: %+v", a, got)
		}
		want := p.Net.Copy()
		RoundWeights(want)
		x := randVec(rng, 5*p.Beta()*30)
		y1 := append([]float64(nil), want.Forward(x, 5)...)
		y2 := got.Net.Forward(x, 5)
		for i := range y1 {
			if y1[i] != y2[i] {
				t.Fatalf("%s: output %d: %v before, %v after the round trip", a, i, y1[i], y2[i])
			}
		}
		var again bytes.Buffer
		if err := WritePolicy(&again, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(file, again.Bytes()) {
			t.Fatalf("%s: writing the read policy gives other bytes", a)
		}
	}
}

// TestReadPolicyErrors: damaged files are refused with an error naming
// the field.
func TestReadPolicyErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	p, err := NewPolicy(FCN1, 16, false, false, 40, rng)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePolicy(&buf, p); err != nil {
		t.Fatal(err)
	}
	raw := gunzip(t, buf.Bytes())
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, "magic"},
		{"arch", func(b []byte) []byte { b[8] = 99; return b }, "arch"},
		{"beta", func(b []byte) []byte { b[12] = 3; return b }, "beta"},
		{"out", func(b []byte) []byte { b[20] = 7; return b }, "out"},
		{"flags", func(b []byte) []byte { b[28] = 6; return b }, "flags"},
		{"count", func(b []byte) []byte { b[32]++; return b }, "count"},
		{"short", func(b []byte) []byte { return b[:len(b)-9] }, "params"},
		{"crc", func(b []byte) []byte { b[40] ^= 1; return b }, "crc"},
		{"trailing", func(b []byte) []byte { return append(b, 0) }, "trailing"},
		{"nan", func(b []byte) []byte { copy(b[36:], []byte{0, 0, 0xc0, 0x7f}); return b }, "not finite"},
	} {
		_, err := ReadPolicy(bytes.NewReader(c.edit(bytes.Clone(raw))))
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: got %v, want an error about %q", c.name, err, c.want)
		}
	}
	if _, err := ReadPolicy(bytes.NewReader(raw)); err != nil {
		t.Errorf("the uncompressed file: %v", err)
	}
}

// TestMaskedActionsNeverChosen: with logits far larger on masked
// positions, neither the greedy nor the sampled choice ever picks one,
// and masked positions get probability exactly 0 — in maskedSoftmax and
// through a policy whose last layer favours the padding.
func TestMaskedActionsNeverChosen(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const q = 100
	p := make([]float64, q)
	z := make([]float64, q)
	for trial := range 200 {
		valid := 1 + rng.IntN(q)
		for i := range z {
			z[i] = rng.NormFloat64()
			if i >= valid {
				z[i] = 1e6
			}
		}
		maskedSoftmax(p, z, valid)
		for i := valid; i < q; i++ {
			if p[i] != 0 {
				t.Fatalf("trial %d: masked position %d has probability %g", trial, i, p[i])
			}
		}
		for _, sample := range []bool{false, true} {
			if a := pick(p, valid, sample, rng); a < 0 || a >= valid {
				t.Fatalf("trial %d: picked %d of %d valid", trial, a, valid)
			}
		}
	}
	// A policy whose biases push hard towards positions 30 and beyond, on
	// an idle sequence of 30 positions.
	pol, err := NewPolicy(CNN3, q, false, false, 40, rng)
	if err != nil {
		t.Fatal(err)
	}
	last := pol.Net.Params()[len(pol.Net.Params())-1]
	for i := 30; i < q; i++ {
		last.W[i] = 1e3
	}
	w := paperWindow(t, 1, 30, 2)
	free := make([]int, len(w.Idle))
	for i := range free {
		free[i] = i
	}
	for _, sample := range []bool{false, true} {
		c := pol.chooser(w.Topology, sample, 2)
		for range 200 {
			st := heuristics.RepairStep{Window: w, Free: free, Size: 3, Starts: min(q, len(free)), Rand: rng}
			if a := c.ChooseStart(&st); a < 0 || a >= len(free) {
				t.Fatalf("sample=%v: chose start %d on %d positions", sample, a, len(free))
			}
		}
	}
}

// paperWindow generates a window like the paper's (25×4×10 cluster).
func paperWindow(t testing.TB, seed uint64, idle, jobs int) *model.Window {
	t.Helper()
	cfg := instances.PaperGenConfig()
	cfg.Seed, cfg.Idle, cfg.Jobs = seed, idle, jobs
	w, err := instances.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestNSAFeasible: on generated windows of the paper's cluster and of
// fat-trees (idle sequences shorter and longer than q), NSA — greedy and
// sampled, with the shipped policy — returns allocations that pass
// model.Check (SolveWindow runs it; checked again here), never worse than
// Seq, its initial solution, reported as solver "nsa"; the same seed gives
// the same answer.
func TestNSAFeasible(t *testing.T) {
	ctx := context.Background()
	for i := range 60 {
		var w *model.Window
		if i%3 == 2 {
			cfg := instances.PaperGenConfig()
			cfg.Layout, cfg.FatTree = nil, &model.FatTreeSpec{K: 8}
			cfg.Seed, cfg.Idle, cfg.Jobs, cfg.MaxNodes = uint64(i), 20+i, 5, 12
			var err error
			if w, err = instances.Generate(cfg); err != nil {
				t.Fatal(err)
			}
		} else {
			w = paperWindow(t, uint64(i), 40+15*i, 1+i%6)
		}
		n := Default()
		n.Anneal.Seed = uint64(i)
		n.Anneal.Steps = 100
		n.Sample = i%2 == 1
		res, err := solver.SolveWindow(ctx, w, n, solver.Options{MaxJobs: 5})
		if err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
		if err := model.Check(w, res.Allocations); err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
		seq, err := solver.SolveWindow(ctx, w, heuristics.Seq{}, solver.Options{MaxJobs: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Objective > seq.Objective {
			t.Fatalf("window %d: nsa %d worse than seq %d", i, res.Objective, seq.Objective)
		}
		if res.Encoding != "none" && res.Solver != "nsa" {
			t.Fatalf("window %d: solver %q", i, res.Solver)
		}
		again, err := solver.SolveWindow(ctx, w, n, solver.Options{MaxJobs: 5})
		if err != nil {
			t.Fatal(err)
		}
		if again.Objective != res.Objective {
			t.Fatalf("window %d: same seed, objectives %d and %d", i, res.Objective, again.Objective)
		}
	}
}

// TestNSAWarmStartAndCancel: a warm start is never worsened, and a
// cancelled context still yields a valid answer.
func TestNSAWarmStartAndCancel(t *testing.T) {
	w := paperWindow(t, 3, 300, 5)
	ctx := context.Background()
	first, err := solver.SolveWindow(ctx, w, Default(), solver.Options{MaxJobs: 5})
	if err != nil {
		t.Fatal(err)
	}
	var multi []model.Allocation
	for _, a := range first.Allocations {
		if len(a.Nodes) > 1 {
			multi = append(multi, a)
		}
	}
	warm := Default().WithInitial(multi)
	again, err := solver.SolveWindow(ctx, w, warm, solver.Options{MaxJobs: 5})
	if err != nil {
		t.Fatal(err)
	}
	if again.Objective > first.Objective {
		t.Fatalf("warm start %d worse than its start %d", again.Objective, first.Objective)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := solver.SolveWindow(cctx, w, Default(), solver.Options{MaxJobs: 5}); err != nil {
		t.Fatalf("cancelled: %v", err)
	}
}

// trainProblems returns n generated paper-like problems (5 jobs each).
func trainProblems(t testing.TB, n int, seed uint64) []*solver.Problem {
	var out []*solver.Problem
	for i := 0; len(out) < n; i++ {
		w := paperWindow(t, seed+uint64(i), 100+(i*37)%400, 5)
		sel := model.SelectJobs(w, 5)
		if len(sel.Multi) >= 2 {
			out = append(out, solver.NewProblem(w, sel.Multi))
		}
	}
	return out
}

// TestTrainingReducesRepairCost: a short seeded PPO run (FCN-1, 256
// repair episodes per update, 48 updates, 8 generated windows) lowers the
// greedy policy's mean repair cost on fixed evaluation episodes of the
// same windows by at least 5 % (8.4 % when written), and below SA's
// uniform repair.
func TestTrainingReducesRepairCost(t *testing.T) {
	probs := trainProblems(t, 8, 500)
	cfg := DefaultTrainConfig()
	cfg.Problems, cfg.Seed, cfg.Arch = probs, 3, FCN1
	cfg.Episodes, cfg.BatchEpisodes, cfg.Minibatch = 48*256, 256, 64
	cfg.LRActor, cfg.StatesPerProblem = 3e-3, 2
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6e5a_7261_696e)) // Train's own start
	init, err := NewPolicy(cfg.Arch, cfg.Q, cfg.Idle, cfg.Relative, cfg.NMax, rng)
	if err != nil {
		t.Fatal(err)
	}
	before, err := EvaluateRepair(ctx, init, probs, 1500, 99, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Train(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	after, err := EvaluateRepair(ctx, res.Actor, probs, 1500, 99, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mean repair cost: untrained %.0f, trained %.0f, uniform %.0f", before.Policy, after.Policy, after.Uniform)
	if before.Uniform != after.Uniform {
		t.Fatalf("evaluation episodes differ: uniform %.0f and %.0f", before.Uniform, after.Uniform)
	}
	if !(after.Policy < 0.95*before.Policy) || !(after.Policy < after.Uniform) {
		t.Errorf("training did not reduce the repair cost enough: %.0f → %.0f (uniform %.0f)", before.Policy, after.Policy, after.Uniform)
	}
	if math.IsNaN(res.Curve[len(res.Curve)-1].MeanReward) {
		t.Error("NaN reward")
	}
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTrainDeterministic: the same configuration trains the same weights
// (byte for byte in the file), and another seed other weights.
func TestTrainDeterministic(t *testing.T) {
	probs := trainProblems(t, 6, 900)
	run := func(seed uint64) []byte {
		cfg := DefaultTrainConfig()
		cfg.Problems, cfg.Seed, cfg.Arch = probs, seed, CNN3
		cfg.Episodes, cfg.BatchEpisodes, cfg.Minibatch = 256, 128, 64
		res, err := Train(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WritePolicy(&buf, res.Actor); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a, b, c := run(1), run(1), run(2)
	if !bytes.Equal(a, b) {
		t.Error("seed 1 twice gave different weights")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 gave the same weights")
	}
}
