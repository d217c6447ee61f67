package nsa

import "github.com/optsched/optsched/heuristics/learn"

// adam is learn.Adam (β₁ = 0.9, β₂ = 0.999, ε = 1e-8, a clip of the
// gradients' global norm).
type adam = learn.Adam

func newAdam(params []*Param, lr, maxNorm float64) *adam { return learn.NewAdam(params, lr, maxNorm) }
