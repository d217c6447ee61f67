package learn

import "math"

// Adam is the Adam optimiser (Kingma and Ba, 2015) with β₁ = 0.9,
// β₂ = 0.999, ε = 1e-8, as torch.optim.Adam's defaults, and an optional
// clip of the gradients' global norm.
type Adam struct {
	// LR is the learning rate; MaxNorm clips the global gradient norm
	// (0: no clip).
	LR, MaxNorm float64
	t           int
	params      []*Param
	m, v        [][]float64
}

// NewAdam returns an optimiser of params.
func NewAdam(params []*Param, lr, maxNorm float64) *Adam {
	a := &Adam{LR: lr, MaxNorm: maxNorm, params: params}
	for _, p := range params {
		a.m = append(a.m, make([]float64, len(p.W)))
		a.v = append(a.v, make([]float64, len(p.W)))
	}
	return a
}

// Step applies one update from the accumulated gradients (scaled by
// scale, e.g. 1/batch) and clears them. It returns the gradient norm
// before clipping.
func (a *Adam) Step(scale float64) float64 {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	var ss float64
	for _, p := range a.params {
		for _, g := range p.G {
			ss += g * g
		}
	}
	norm := math.Sqrt(ss) * scale
	if a.MaxNorm > 0 && norm > a.MaxNorm {
		scale *= a.MaxNorm / norm
	}
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	for k, p := range a.params {
		m, v := a.m[k], a.v[k]
		for i, g := range p.G {
			g *= scale
			m[i] = b1*m[i] + (1-b1)*g
			v[i] = b2*v[i] + (1-b2)*g*g
			p.W[i] -= a.LR * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
		}
		clear(p.G)
	}
	return norm
}
