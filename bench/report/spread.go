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

// A Restriction is what restricting a problem costs, over the windows
// where both the restricted and the free optimum are proven: the
// relative excess (restricted − free) / free.
type Restriction struct {
	// Windows counts the pairs; Below those where the free optimum is
	// strictly lower.
	Windows int     `json:"windows"`
	Below   int     `json:"below"`
	Mean    float64 `json:"mean"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// RestrictionOf summarises pairs of proven optima {restricted, free};
// a pair whose free optimum is not positive has no relative excess and is
// left out.
func RestrictionOf(pairs [][2]int64) Restriction {
	var r Restriction
	var gs []float64
	for _, p := range pairs {
		if p[1] <= 0 {
			continue
		}
		gs = append(gs, float64(p[0]-p[1])/float64(p[1]))
		if p[1] < p[0] {
			r.Below++
		}
	}
	sp := SpreadOf(gs)
	r.Windows, r.Mean, r.P99, r.Max = sp.N, sp.Mean, sp.P99, sp.Max
	return r
}
