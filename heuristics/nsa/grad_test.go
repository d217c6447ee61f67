package nsa

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lossOf is a fixed random linear functional of a layer's or network's
// outputs, so that ∂loss/∂y = c.
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

// relErr compares an analytic and a numeric derivative. The floor of the
// denominator, 1e-4, makes the check absolute (|a − n| ≤ 1e-9 at the
// tolerance 1e-5) for derivatives too small for a relative one: a central
// difference with h = 1e-6 carries rounding noise of about 1e-10, which
// for a derivative of 4e-6 is already a relative 1.4e-5 (the pure-Go dot
// products of the noasm build sum in another order and reach it).
func relErr(a, n float64) float64 {
	return math.Abs(a-n) / math.Max(1e-4, math.Abs(a)+math.Abs(n))
}

// checkLayer compares the backward pass of l with central finite
// differences, for every input and every parameter entry (or a sample of
// 300 of each for large layers), on a batch of 3.
func checkLayer(t *testing.T, name string, l layer, rng *rand.Rand) {
	t.Helper()
	const batch, h, tol = 3, 1e-6, 1e-5
	x := randVec(rng, batch*l.inSize())
	c := randVec(rng, batch*l.outSize())
	f := func() float64 { return lossOf(l.forward(x, batch), c) }
	for _, p := range l.params() {
		clear(p.G)
	}
	f()
	dx := append([]float64(nil), l.backward(c, batch)...)
	pick := func(n int) []int {
		if n <= 300 {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			return idx
		}
		idx := make([]int, 300)
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		return idx
	}
	for _, i := range pick(len(x)) {
		old := x[i]
		x[i] = old + h
		fp := f()
		x[i] = old - h
		fm := f()
		x[i] = old
		if e := relErr(dx[i], (fp-fm)/(2*h)); e > tol {
			t.Fatalf("%s: ∂/∂x[%d]: backward %.9g, finite difference %.9g (rel err %.2g)", name, i, dx[i], (fp-fm)/(2*h), e)
		}
	}
	for _, p := range l.params() {
		g := append([]float64(nil), p.G...)
		for _, i := range pick(len(p.W)) {
			old := p.W[i]
			p.W[i] = old + h
			fp := f()
			p.W[i] = old - h
			fm := f()
			p.W[i] = old
			if e := relErr(g[i], (fp-fm)/(2*h)); e > tol {
				t.Fatalf("%s: ∂/∂%s[%d]: backward %.9g, finite difference %.9g (rel err %.2g)", name, p.Name, i, g[i], (fp-fm)/(2*h), e)
			}
		}
	}
}

// TestLayerGradients: every layer type's backward pass (input and
// parameter gradients) matches central finite differences, including a
// strided convolution and one whose kernel covers the whole input.
func TestLayerGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	checkLayer(t, "linear 7→5", newLinear("fc", 7, 5, 1, rng), rng)
	checkLayer(t, "tanh 11", &tanh{n: 11}, rng)
	checkLayer(t, "conv1d(4,16,10,1) on 30", newConv1d("c1", 4, 16, 10, 1, 30, 1, rng), rng)
	checkLayer(t, "conv1d(16,8,5,2) on 21", newConv1d("c2", 16, 8, 5, 2, 21, 1, rng), rng)
	checkLayer(t, "conv1d(3,2,6,3) on 6", newConv1d("c3", 3, 2, 6, 3, 6, 1, rng), rng)
}

// TestNetGradients: the whole network of every architecture of Table II
// (actor and critic shapes, β = 4 and 5) passes the same check on its
// parameters and inputs; the CNN-3 at the paper's q = 100 has the paper's
// flattened size 352.
func TestNetGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for a := Arch(0); a < numArch; a++ {
		for _, out := range []int{20, 1} {
			n, err := NewNet(a, 4+int(a)%2, 20, out, 1, rng)
			if err != nil {
				t.Fatal(err)
			}
			checkLayer(t, a.String(), netLayer{n}, rng)
		}
	}
	n, err := NewNet(CNN3, 4, 100, 100, 0.01, rng)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.layers[3].inSize(); got != 352 {
		t.Errorf("CNN-3 at q = 100 flattens to %d values, want 352", got)
	}
	checkLayer(t, "cnn3 q=100", netLayer{n}, rng)
}

// netLayer adapts a Net to the layer interface for checkLayer.
type netLayer struct{ n *Net }

func (l netLayer) forward(x []float64, b int) []float64  { return l.n.Forward(x, b) }
func (l netLayer) backward(d []float64, b int) []float64 { return l.n.Backward(d, b) }
func (l netLayer) params() []*Param                      { return l.n.Params() }
func (l netLayer) inSize() int                           { return l.n.Beta * l.n.Q }
func (l netLayer) outSize() int                          { return l.n.Out }
func (l netLayer) clone() layer                          { return netLayer{l.n.Clone()} }

// TestPPOLogitGradient: the actor loss's gradient with respect to the
// logits (clipped surrogate and entropy bonus, masked positions) matches
// finite differences, for ratios inside and outside the clip range and
// both signs of the advantage; masked logits get no gradient.
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
		lse := maskedSoftmax(p, z, valid)
		// Old log-probabilities around the current one: ratios from 0.5 to 2.
		oldLogp := z[action] - lse + math.Log(0.5+1.5*rng.Float64())
		adv := 2*rng.Float64() - 1
		ppoLogitGrad(g, p, z, valid, action, oldLogp, adv, 0.2, 0.01)
		for j := range q {
			old := z[j]
			z[j] = old + h
			lp := ppoLogitGrad(make([]float64, q), p, z, valid, action, oldLogp, adv, 0.2, 0.01)
			z[j] = old - h
			lm := ppoLogitGrad(make([]float64, q), p, z, valid, action, oldLogp, adv, 0.2, 0.01)
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

// TestFused: the fused network (CNN-3's two Linear layers multiplied out)
// computes the same outputs as the network, up to rounding, and has
// fewer parameters; networks without consecutive Linear layers are
// unchanged in size.
func TestFused(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for a := Arch(0); a < numArch; a++ {
		n, err := NewNet(a, 4, 100, 100, 1, rng)
		if err != nil {
			t.Fatal(err)
		}
		f := n.Fused()
		x := randVec(rng, 3*400)
		y := append([]float64(nil), n.Forward(x, 3)...)
		z := f.Forward(x, 3)
		for i := range y {
			if math.Abs(y[i]-z[i]) > 1e-9*(1+math.Abs(y[i])) {
				t.Fatalf("%s: output %d: %v, fused %v", a, i, y[i], z[i])
			}
		}
		if a == CNN3 && f.NumParams() >= n.NumParams() {
			t.Errorf("cnn3: fused has %d parameters, the network %d", f.NumParams(), n.NumParams())
		}
		if a != CNN3 && f.NumParams() != n.NumParams() {
			t.Errorf("%s: fusing changed the size: %d → %d", a, n.NumParams(), f.NumParams())
		}
	}
}

// TestNumParams: the weights reader's count formula agrees with the
// networks NewNet builds.
func TestNumParams(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for a := Arch(0); a < numArch; a++ {
		for _, q := range []int{14, 15, 37, 100} {
			for _, out := range []int{1, q} {
				n, err := NewNet(a, 5, q, out, 1, rng)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := numParams(a, 5, q, out); err != nil || got != n.NumParams() {
					t.Errorf("%s q=%d out=%d: formula %d (%v), network %d", a, q, out, got, err, n.NumParams())
				}
			}
		}
	}
}
