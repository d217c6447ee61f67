package learn

import (
	"fmt"
	"math/rand/v2"
	"reflect"
)

// This file is the PPO trainer the learned designs share: the recorded
// decision, its advantages and returns, the minibatch passes, the
// actor's step over rows scored by one network and the critic's step.

// Decision is what a PPO trainer records of one decision whose action is
// a choice among N scored rows: the action, its log-probability under
// the policy that took it, the critic's value, the reward that followed
// it, and (filled by the trainer) its advantage and return.
type Decision struct {
	N, Action        int
	LogP, Value      float64
	Reward, Adv, Ret float64
}

// Scorer is a network that scores rows (a *Seq): Forward returns the
// outputs of rows inputs laid one after another; Backward takes the
// gradient of the loss with respect to them.
type Scorer interface {
	Forward(x []float64, rows int) []float64
	Backward(dy []float64, rows int) []float64
}

// EpisodeGAE fills Adv and Ret of one finished episode's decisions,
// at(0) … at(n−1) in order, from their Reward and Value by GAE with γ
// and λ.
func EpisodeGAE(n int, at func(i int) *Decision, gamma, lambda float64) {
	if n == 0 {
		return
	}
	rw, vals := make([]float64, n), make([]float64, n)
	for i := range n {
		d := at(i)
		rw[i], vals[i] = d.Reward, d.Value
	}
	adv, ret := make([]float64, n), make([]float64, n)
	GAE(adv, ret, rw, vals, 0, gamma, lambda)
	for i := range n {
		d := at(i)
		d.Adv, d.Ret = adv[i], ret[i]
	}
}

// NormalizeAdv normalises the Adv of a batch's n decisions (Normalize).
func NormalizeAdv(n int, at func(i int) *Decision) {
	adv := make([]float64, n)
	for i := range n {
		adv[i] = at(i).Adv
	}
	Normalize(adv)
	for i := range n {
		at(i).Adv = adv[i]
	}
}

// Iota returns 0, 1, …, n−1.
func Iota(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// Pass shuffles idx in place with rng and calls f on its consecutive
// minibatches of size entries (the last one shorter).
func Pass(idx []int, size int, rng *rand.Rand, f func(mb []int)) {
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	for lo := 0; lo < len(idx); lo += size {
		f(idx[lo:min(lo+size, len(idx))])
	}
}

// Minibatches runs epochs passes (Pass) over the indexes of a batch of n
// decisions. Each pass shuffles the previous pass's order, or, with
// fresh, starts again from 0 … n−1: the two draw different orders from
// the same generator, and each trainer keeps the one its shipped weights
// were trained with.
func Minibatches(n, size, epochs int, fresh bool, rng *rand.Rand, f func(mb []int)) {
	idx := Iota(n)
	for e := range epochs {
		if fresh && e > 0 {
			idx = Iota(n)
		}
		Pass(idx, size, rng, f)
	}
}

// Gather returns x[:0] with the inputs of the minibatch mb's decisions
// appended in order (in(i) decision i's).
func Gather(x []float64, mb []int, in func(i int) []float64) []float64 {
	x = x[:0]
	for _, i := range mb {
		x = append(x, in(i)...)
	}
	return x
}

// PPO is the clipped-objective update of an actor that scores rows and a
// critic, with scratch reused across minibatches.
type PPO struct {
	// Clip is PPO's ε, Entropy the bonus's coefficient.
	Clip, Entropy float64
	g, p, dz, dv  []float64
}

// Actor takes one gradient step of net (through opt, the gradient scaled
// by scale) on the minibatch mb of decisions (at(i) the decision i).
// x holds their rows, rows of them, as net takes them; net's outputs are
// the decisions' logits one after another: decision k of mb starts at
// k·stride, or with stride 0 right after decision k−1's N logits
// (variable-width rows). Logits of a decision past its N are not used
// (gradient 0); mask, when set, may overwrite the logits of decision i
// before its softmax (masked actions).
func (o *PPO) Actor(net Scorer, opt *Adam, x []float64, rows, stride int, mb []int, at func(i int) *Decision, mask func(i int, z []float64), scale float64) {
	z := net.Forward(x, rows)
	o.dz = Grow(o.dz, len(z))
	clear(o.dz)
	off := 0
	for k, i := range mb {
		d := at(i)
		if stride > 0 {
			off = k * stride
		}
		if mask != nil {
			mask(i, z[off:off+max(stride, d.N)])
		}
		o.g, o.p = Grow(o.g, d.N), Grow(o.p, d.N)
		PPOLogitGrad(o.g, o.p, z[off:off+d.N], d.N, d.Action, d.LogP, d.Adv, o.Clip, o.Entropy)
		copy(o.dz[off:off+d.N], o.g)
		off += d.N
	}
	net.Backward(o.dz, rows)
	opt.Step(scale)
}

// Critic takes one gradient step of the critic net (through opt) towards
// the returns of the minibatch mb: x holds their inputs, one row each;
// the loss is ½ Σ (V − Ret)², the gradient divided by len(mb).
func (o *PPO) Critic(net Scorer, opt *Adam, x []float64, mb []int, at func(i int) *Decision) {
	v := net.Forward(x, len(mb))
	o.dv = Grow(o.dv, len(mb))
	for r, i := range mb {
		o.dv[r] = v[r] - at(i).Ret
	}
	net.Backward(o.dv, len(mb))
	opt.Step(1 / float64(len(mb)))
}

// FillZero sets every field of the struct *cfg of kind int, float64 or
// slice that is zero (a nil slice) to the same field of def, of the same
// type: a trainer's configuration takes its defaults so. Fields of other
// kinds (a uint64 seed, a bool, a pointer, a func) are left as they are.
func FillZero(cfg, def any) {
	c, d := reflect.ValueOf(cfg).Elem(), reflect.ValueOf(def)
	if c.Type() != d.Type() {
		panic(fmt.Sprintf("learn.FillZero: %s and %s", c.Type(), d.Type()))
	}
	for i := range c.NumField() {
		f := c.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Float64, reflect.Slice:
			if f.CanSet() && f.IsZero() {
				f.Set(d.Field(i))
			}
		}
	}
}
