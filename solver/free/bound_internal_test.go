package free

import (
	"math"
	"testing"
)

// TestBoundRounding: a real bound just below an integer, or above it by
// less than float64 rounding over a large total, never rounds up past it.
func TestBoundRounding(t *testing.T) {
	cases := []struct {
		b    float64
		want int64
	}{
		{10, 10},
		{10.5, 11},
		{10.0000001, 10},     // rounding noise above 10
		{3e7 + 0.01, 3e7},    // noise of a 10⁶-node window's total
		{3e7 + 0.5, 3e7 + 1}, // a real half unit
		{math.Inf(1), inf},   // no fit
		{math.Inf(-1), -inf}, // no bound
	}
	for _, c := range cases {
		if got := ceilBound(c.b); got != c.want {
			t.Errorf("ceilBound(%v) = %d, want %d", c.b, got, c.want)
		}
	}
	if cuts(99.0000001, 100) || !cuts(99.5, 100) || cuts(3e7-1+0.01, 3e7) {
		t.Error("cuts: rounding noise cut a node, or a real bound did not")
	}
}
