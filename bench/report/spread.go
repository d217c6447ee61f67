package report

import (
	"math"
	"slices"
)

// A Spread summarises a sample of ratios (gaps, relative costs): its
// size, mean, 99th percentile (nearest rank) and maximum.
type Spread struct {
	N              int
	Mean, P99, Max float64
}

// SpreadOf returns the spread of xs, which it sorts; the zero Spread for
// an empty sample.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	slices.Sort(xs)
	s := Spread{N: len(xs), Max: xs[len(xs)-1]}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	s.P99 = xs[min(len(xs)-1, max(0, int(math.Ceil(0.99*float64(len(xs))))-1))]
	return s
}
