package learn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func lossOf(y, c []float64) float64 {
	var s float64
	for i := range y {
		s += y[i] * c[i]
	}
	return s
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*rng.Float64() - 1
	}
	return v
}

// relErr compares an analytic and a numeric derivative, absolutely below
// 1e-4 (see heuristics/nsa's check, the same).
func relErr(a, n float64) float64 {
	return math.Abs(a-n) / math.Max(1e-4, math.Abs(a)+math.Abs(n))
}

// checkLayer compares l's backward pass with central finite differences
// for every input and parameter entry, on a batch of 3.
func checkLayer(t *testing.T, name string, l Layer, rng *rand.Rand, avoidKinks bool) {
	t.Helper()
	const batch, h, tol = 3, 1e-6, 1e-5
	x := randVec(rng, batch*l.InSize())
	if avoidKinks {
		// ReLU's derivative jumps at 0: keep inputs away from it.
		for i, v := range x {
			if math.Abs(v) < 0.05 {
				x[i] = math.Copysign(0.05, v)
			}
		}
	}
	c := randVec(rng, batch*l.OutSize())
	f := func() float64 { return lossOf(l.Forward(x, batch), c) }
	ZeroGrad(l.Params())
	f()
	dx := append([]float64(nil), l.Backward(c, batch)...)
	for i := range x {
		old := x[i]
		x[i] = old + h
		fp := f()
		x[i] = old - h
		fm := f()
		x[i] = old
		if e := relErr(dx[i], (fp-fm)/(2*h)); e > tol {
			t.Fatalf("%s: ∂/∂x[%d]: backward %.9g, finite difference %.9g", name, i, dx[i], (fp-fm)/(2*h))
		}
	}
	for _, p := range l.Params() {
		g := append([]float64(nil), p.G...)
		for i := range p.W {
			old := p.W[i]
			p.W[i] = old + h
			fp := f()
			p.W[i] = old - h
			fm := f()
			p.W[i] = old
			if e := relErr(g[i], (fp-fm)/(2*h)); e > tol {
				t.Fatalf("%s: ∂/∂%s[%d]: backward %.9g, finite difference %.9g", name, p.Name, i, g[i], (fp-fm)/(2*h))
			}
		}
	}
}

// TestLayerGradients: every layer type's backward pass, and an MLP's of
// each activation, match central finite differences.
func TestLayerGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	checkLayer(t, "linear 7→5", NewLinear("fc", 7, 5, 1, rng), rng, false)
	checkLayer(t, "tanh 11", &Tanh{N: 11}, rng, false)
	checkLayer(t, "relu 11", &ReLU{N: 11}, rng, true)
	checkLayer(t, "conv1d(4,6,5,1) on 12", NewConv1d("c1", 4, 6, 5, 1, 12, 1, rng), rng, false)
	checkLayer(t, "conv1d(3,2,6,3) on 6", NewConv1d("c3", 3, 2, 6, 3, 6, 1, rng), rng, false)
	for _, act := range []Activation{ActTanh, ActReLU} {
		m, err := NewMLP("k", []int{8, 32, 16, 8, 1}, act, 1, rng)
		if err != nil {
			t.Fatal(err)
		}
		// ReLU MLP: a kink inside is crossed by a step of 1e-6 with
		// probability ~1e-5 per unit; the seed is fixed.
		checkLayer(t, "mlp 8-32-16-8-1", m, rng, act == ActReLU)
	}
}

// TestReLUZeroGradient: ReLU passes no gradient where its input was ≤ 0.
func TestReLUZeroGradient(t *testing.T) {
	r := &ReLU{N: 4}
	r.Forward([]float64{-1, 0, 2, 3}, 1)
	dx := r.Backward([]float64{5, 5, 5, 5}, 1)
	want := []float64{0, 0, 5, 5}
	for i := range want {
		if dx[i] != want[i] {
			t.Fatalf("dx = %v, want %v", dx, want)
		}
	}
}

// TestPPOLogitGradient: the clipped surrogate's gradient matches finite
// differences, inside and outside the clip, both signs of advantage;
// masked logits get none.
func TestPPOLogitGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const q, valid, h = 12, 9, 1e-6
	p := make([]float64, q)
	g := make([]float64, q)
	for trial := range 40 {
		z := randVec(rng, q)
		for i := range z {
			z[i] *= 3
		}
		action := rng.IntN(valid)
		lse := MaskedSoftmax(p, z, valid)
		oldLogp := z[action] - lse + math.Log(0.5+1.5*rng.Float64())
		adv := 2*rng.Float64() - 1
		PPOLogitGrad(g, p, z, valid, action, oldLogp, adv, 0.2, 0.01)
		for j := range q {
			old := z[j]
			z[j] = old + h
			lp := PPOLogitGrad(make([]float64, q), p, z, valid, action, oldLogp, adv, 0.2, 0.01)
			z[j] = old - h
			lm := PPOLogitGrad(make([]float64, q), p, z, valid, action, oldLogp, adv, 0.2, 0.01)
			z[j] = old
			num := (lp - lm) / (2 * h)
			if j >= valid && g[j] != 0 {
				t.Fatalf("trial %d: masked logit %d has gradient %g", trial, j, g[j])
			}
			if e := relErr(g[j], num); e > 1e-5 && math.Abs(g[j]-num) > 1e-8 {
				t.Fatalf("trial %d: ∂L/∂z[%d]: %.9g, finite difference %.9g", trial, j, g[j], num)
			}
		}
	}
}

// TestMaskedNeverPicked: masked entries get probability 0 and are never
// picked, greedy or sampled, even when their logits are the largest.
func TestMaskedNeverPicked(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	p := make([]float64, 16)
	for trial := range 200 {
		valid := 1 + rng.IntN(16)
		z := randVec(rng, 16)
		for i := valid; i < 16; i++ {
			z[i] = 1e6
		}
		MaskedSoftmax(p, z, valid)
		for i := valid; i < 16; i++ {
			if p[i] != 0 {
				t.Fatalf("trial %d: masked %d has probability %g", trial, i, p[i])
			}
		}
		for _, s := range []bool{false, true} {
			if a := Pick(p, valid, s, rng); a < 0 || a >= valid {
				t.Fatalf("trial %d: picked %d of %d valid", trial, a, valid)
			}
		}
	}
}

// TestGAE: against the definition written out, and λ = 1 gives
// advantages return − value.
func TestGAE(t *testing.T) {
	r := []float64{0, 1, 0, -2}
	v := []float64{0.5, -0.2, 0.3, 0.1}
	adv, ret := make([]float64, 4), make([]float64, 4)
	const g, l = 0.9, 0.8
	GAE(adv, ret, r, v, 0.7, g, l)
	next := append(v[1:], 0.7)
	for t0 := range r {
		var a, gr float64
		for k := t0; k < 4; k++ {
			d := r[k] + g*next[k] - v[k]
			a += math.Pow(g*l, float64(k-t0)) * d
			gr += math.Pow(g, float64(k-t0)) * r[k]
		}
		gr += math.Pow(g, float64(4-t0)) * 0.7
		if math.Abs(a-adv[t0]) > 1e-12 || math.Abs(gr-ret[t0]) > 1e-12 {
			t.Fatalf("t=%d: adv %v ret %v, want %v %v", t0, adv[t0], ret[t0], a, gr)
		}
	}
	GAE(adv, ret, r, v, 0, 1, 1)
	for i := range r {
		if math.Abs(adv[i]-(ret[i]-v[i])) > 1e-12 {
			t.Fatalf("λ=1: adv %v, ret − v %v", adv[i], ret[i]-v[i])
		}
	}
}

// TestAdamMinimises: Adam brings a quadratic's parameters to its minimum.
func TestAdamMinimises(t *testing.T) {
	p := NewParam("x", 3)
	copy(p.W, []float64{3, -2, 1})
	target := []float64{1, 1, -1}
	a := NewAdam([]*Param{p}, 0.05, 0)
	for range 2000 {
		for i := range p.W {
			p.G[i] = 2 * (p.W[i] - target[i])
		}
		a.Step(1)
	}
	for i := range p.W {
		if math.Abs(p.W[i]-target[i]) > 1e-3 {
			t.Fatalf("x = %v, want %v", p.W, target)
		}
	}
}

// TestCopyOwnsParams: Copy's parameters are equal and separate; Clone's
// shared.
func TestCopyOwnsParams(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m, _ := NewMLP("m", []int{3, 4, 2}, ActReLU, 1, rng)
	c, s := m.Copy(), m.CloneSeq()
	m.Params()[0].W[0] += 1
	if c.Params()[0].W[0] == m.Params()[0].W[0] {
		t.Error("Copy shares parameters")
	}
	if s.Params()[0].W[0] != m.Params()[0].W[0] {
		t.Error("Clone does not share parameters")
	}
}
