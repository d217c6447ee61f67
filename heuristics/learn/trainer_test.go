package learn

import (
	"math"
	"slices"
	"testing"
)

// rowsNet is a Scorer that returns fixed logits and records the
// gradient it is given.
type rowsNet struct {
	z, dy []float64
	rows  int
}

func (r *rowsNet) Forward(x []float64, rows int) []float64 { r.rows = rows; return r.z }
func (r *rowsNet) Backward(dy []float64, rows int) []float64 {
	r.dy = append([]float64(nil), dy...)
	return nil
}

// TestPPOActorRows: the actor's gradient over variable-width rows
// (stride 0) and over fixed-stride rows with a mask is, per decision,
// PPOLogitGrad's on its own logits, and 0 elsewhere.
func TestPPOActorRows(t *testing.T) {
	ds := []Decision{{N: 3, Action: 1, LogP: -1.2, Adv: 0.7}, {N: 1, Action: 0, LogP: 0, Adv: -0.3}, {N: 2, Action: 0, LogP: -0.5, Adv: -1.1}}
	at := func(i int) *Decision { return &ds[i] }
	o := &PPO{Clip: 0.2, Entropy: 0.01}
	opt := NewAdam(nil, 1e-3, 0)
	want := func(z []float64, d Decision) []float64 {
		g, p := make([]float64, d.N), make([]float64, d.N)
		PPOLogitGrad(g, p, z[:d.N], d.N, d.Action, d.LogP, d.Adv, 0.2, 0.01)
		return g
	}
	// Variable width, in the minibatch's order 2, 0, 1.
	z := []float64{0.3, -0.2, 1.0, 0.5, -1.5, 2}
	net := &rowsNet{z: z}
	o.Actor(net, opt, nil, 6, 0, []int{2, 0, 1}, at, nil, 1)
	got := slices.Concat(want(z[0:], ds[2]), want(z[2:], ds[0]), want(z[5:], ds[1]))
	if net.rows != 6 || !slices.Equal(net.dy, got) {
		t.Fatalf("variable-width gradient %v, want %v", net.dy, got)
	}
	// Stride 4; decision 0's slot 2 masked.
	z = []float64{0.3, -0.2, 1.0, 9, 0.5, -1.5, 2, 9}
	ds[0].N, ds[1].N = 4, 2
	net = &rowsNet{z: append([]float64(nil), z...)}
	mask := func(i int, zr []float64) {
		if i == 0 {
			zr[2] = math.Inf(-1)
		}
	}
	o.Actor(net, opt, nil, 2, 4, []int{0, 1}, at, mask, 1)
	zm := slices.Clone(z)
	zm[2] = math.Inf(-1)
	got = slices.Concat(want(zm[0:], ds[0]), want(zm[4:], ds[1]), []float64{0, 0})
	if !slices.Equal(net.dy, got) || net.dy[2] != 0 {
		t.Fatalf("strided gradient %v, want %v", net.dy, got)
	}
}

// TestMinibatches: every pass covers each decision once in minibatches
// of at most size; with fresh the second pass starts again from 0 … n−1
// and so differs from a pass that reshuffles the first's order.
func TestMinibatches(t *testing.T) {
	passes := func(fresh bool) [][]int {
		var out [][]int
		var cur []int
		Minibatches(10, 4, 2, fresh, NewRand(7, 7), func(mb []int) {
			if len(mb) > 4 || len(mb) == 0 {
				t.Fatalf("minibatch %v", mb)
			}
			cur = append(cur, mb...)
			if len(cur) == 10 {
				out, cur = append(out, cur), nil
			}
		})
		return out
	}
	a, b := passes(false), passes(true)
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("passes %v %v", a, b)
	}
	for _, p := range append(a, b...) {
		if s := slices.Sorted(slices.Values(p)); !slices.Equal(s, Iota(10)) {
			t.Fatalf("pass %v is no permutation of 0..9", p)
		}
	}
	if !slices.Equal(a[0], b[0]) || slices.Equal(a[1], b[1]) {
		t.Errorf("first passes %v %v should agree, second %v %v differ", a[0], b[0], a[1], b[1])
	}
}

// TestEpisodeGAE: EpisodeGAE and NormalizeAdv give GAE's and
// Normalize's numbers.
func TestEpisodeGAE(t *testing.T) {
	ds := []Decision{{Reward: 1, Value: 0.5}, {Reward: 0, Value: 0.2}, {Reward: -2, Value: -1}}
	at := func(i int) *Decision { return &ds[i] }
	EpisodeGAE(3, at, 0.9, 0.8)
	adv, ret := make([]float64, 3), make([]float64, 3)
	GAE(adv, ret, []float64{1, 0, -2}, []float64{0.5, 0.2, -1}, 0, 0.9, 0.8)
	for i := range ds {
		if ds[i].Adv != adv[i] || ds[i].Ret != ret[i] {
			t.Fatalf("decision %d: adv %v ret %v, want %v %v", i, ds[i].Adv, ds[i].Ret, adv[i], ret[i])
		}
	}
	NormalizeAdv(3, at)
	Normalize(adv)
	for i := range ds {
		if ds[i].Adv != adv[i] {
			t.Fatalf("normalised adv %d: %v, want %v", i, ds[i].Adv, adv[i])
		}
	}
}

// TestFillZero: zero ints, floats and nil slices take the defaults; a
// set value, an empty non-nil slice and other kinds stay.
func TestFillZero(t *testing.T) {
	type cfg struct {
		A, B  int
		X     float64
		S, E  []int
		Seed  uint64
		Flag  bool
		Hook  func()
		inner int
	}
	def := cfg{A: 1, B: 2, X: 0.5, S: []int{9}, E: []int{8}, Seed: 3, Flag: true, inner: 4}
	c := cfg{B: 7, E: []int{}}
	FillZero(&c, def)
	if c.A != 1 || c.B != 7 || c.X != 0.5 || !slices.Equal(c.S, []int{9}) || c.E == nil || len(c.E) != 0 || c.Seed != 0 || c.Flag || c.inner != 0 {
		t.Errorf("filled %+v", c)
	}
}
