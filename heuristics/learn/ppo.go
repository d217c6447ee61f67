package learn

import (
	"math"
	"math/rand/v2"
)

// NewRand returns the seeded generator of a trainer: PCG with the seed
// and a stream constant, the same numbers on every machine.
func NewRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// MaskedSoftmax writes into p the softmax of the first valid logits; the
// others (masked: padding, or actions not allowed) are set to the lowest
// value before the softmax, so their probability is exactly 0. It
// returns log Σ exp over the valid logits. p has at least valid entries;
// every entry of p past valid is set to 0.
func MaskedSoftmax(p, logits []float64, valid int) float64 {
	m := math.Inf(-1)
	for _, z := range logits[:valid] {
		m = max(m, z)
	}
	var s float64
	for i := range p {
		if i < valid {
			p[i] = math.Exp(logits[i] - m)
			s += p[i]
		} else {
			p[i] = 0
		}
	}
	for i := 0; i < valid; i++ {
		p[i] /= s
	}
	return m + math.Log(s)
}

// Pick chooses an action from the probabilities p over the first valid
// entries: the most probable (greedy, lowest index among ties) or a draw
// from rng.
func Pick(p []float64, valid int, sample bool, rng *rand.Rand) int {
	if !sample {
		best := 0
		for i := 1; i < valid; i++ {
			if p[i] > p[best] {
				best = i
			}
		}
		return best
	}
	u := rng.Float64()
	for i := 0; i < valid; i++ {
		u -= p[i]
		if u < 0 {
			return i
		}
	}
	// Rounding left u ≥ 0: the last valid action with positive mass.
	for i := valid - 1; i > 0; i-- {
		if p[i] > 0 {
			return i
		}
	}
	return 0
}

// Entropy returns −Σ p log p over the first valid probabilities.
func Entropy(p []float64, valid int) float64 {
	var h float64
	for i := 0; i < valid; i++ {
		if p[i] > 0 {
			h -= p[i] * math.Log(p[i])
		}
	}
	return h
}

// PPOLogitGrad writes into g the gradient with respect to the logits z of
// one sample's actor loss (Schulman et al. 2017, the clipped objective,
// with an entropy bonus)
//
//	L = −min(ρA, clip(ρ, 1−ε, 1+ε)·A) − c·H(π),  ρ = π(a|s) / π_old(a|s),
//
// over the first valid logits (the others are masked: gradient 0), using
// p as scratch, and returns L.
func PPOLogitGrad(g, p, z []float64, valid, action int, oldLogp, adv, clip, entCoef float64) float64 {
	lse := MaskedSoftmax(p, z, valid)
	logp := z[action] - lse
	ratio := math.Exp(logp - oldLogp)
	clipped := min(max(ratio, 1-clip), 1+clip)
	loss := -min(ratio*adv, clipped*adv)
	// ∂L/∂logπ(a) = −ρA where the unclipped term is the minimum, else 0.
	var dlogp float64
	if ratio*adv <= clipped*adv {
		dlogp = -ratio * adv
	}
	var h float64
	for j := 0; j < valid; j++ {
		if p[j] > 0 {
			h -= p[j] * math.Log(p[j])
		}
	}
	loss -= entCoef * h
	clear(g)
	for j := 0; j < valid; j++ {
		// ∂logπ(a)/∂z_j = 1[j=a] − p_j ; ∂H/∂z_j = −p_j (log p_j + H).
		d := -p[j] * dlogp
		if j == action {
			d += dlogp
		}
		if p[j] > 0 {
			d += entCoef * p[j] * (math.Log(p[j]) + h)
		}
		g[j] = d
	}
	return loss
}

// GAE computes generalised advantage estimates (Schulman et al. 2016)
// of one episode: with δ_t = r_t + γ·V_{t+1} − V_t (V after the last
// step: last, 0 for a finished episode), A_t = Σ_k (γλ)^k δ_{t+k}, and
// the critic's targets, the discounted returns G_t = Σ_k γ^k r_{t+k} +
// γ^{T−t}·last. adv and ret have len(rewards) entries.
func GAE(adv, ret, rewards, values []float64, last, gamma, lambda float64) {
	a, g := 0.0, last
	next := last
	for t := len(rewards) - 1; t >= 0; t-- {
		delta := rewards[t] + gamma*next - values[t]
		a = delta + gamma*lambda*a
		adv[t] = a
		g = rewards[t] + gamma*g
		ret[t] = g
		next = values[t]
	}
}

// Normalize shifts and scales v to mean 0 and standard deviation 1
// (divided by the population standard deviation plus 1e-8).
func Normalize(v []float64) {
	if len(v) == 0 {
		return
	}
	var am, as float64
	for _, x := range v {
		am += x
	}
	am /= float64(len(v))
	for _, x := range v {
		as += (x - am) * (x - am)
	}
	as = math.Sqrt(as/float64(len(v))) + 1e-8
	for i := range v {
		v[i] = (v[i] - am) / as
	}
}
