package csp

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// cheapestOffScan is cheapestOff as rotationBounds computed it before:
// for each boundary, a scan of every wrap. The test holds cheapestOff to
// it.
func cheapestOffScan(wraps []wrapAt, r, nq, k int) []int64 {
	out := make([]int64, max(0, k-1))
	for i := 1; i < k; i++ {
		x := i * nq / k
		c := int64(inf)
		for _, wr := range wraps {
			if wr.w >= x-nq+r && wr.w <= x {
				c = min(c, wr.c)
			}
		}
		out[i-1] = c
	}
	return out
}

// TestCheapestOffAsScan holds cheapestOff to the scan it replaced on
// random wraps (head lengths a random subset of 1 … r − 1, prices with
// ties, falling, rising or anywhere), sizes r up to |Q| and rotation
// counts k from 1 to 150: the prices must be equal at every boundary.
// Boundaries with no wrap (inf) and with one must both occur.
func TestCheapestOffAsScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 5))
	none, some := 0, 0
	for trial := range 1500 {
		nq := 2 + rng.IntN(400)
		r := 2 + rng.IntN(nq-1)
		k := 1 + rng.IntN(150)
		var wraps []wrapAt
		keep := rng.Float64()
		for w := 1; w < r; w++ {
			if rng.Float64() < keep {
				var c int64
				switch rng.IntN(3) {
				case 0:
					c = int64(rng.IntN(5)) // ties
				case 1:
					c = int64(1000 - w + rng.IntN(3)) // falling
				default:
					c = int64(rng.IntN(1 << 20))
				}
				wraps = append(wraps, wrapAt{w, c})
			}
		}
		got, want := cheapestOff(wraps, r, nq, k), cheapestOffScan(wraps, r, nq, k)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: |Q| %d, r %d, k %d, wraps %v:\n got %v\nwant %v", trial, nq, r, k, wraps, got, want)
		}
		for _, c := range want {
			if c >= inf {
				none++
			} else {
				some++
			}
		}
	}
	if none < 100 || some < 100 {
		t.Fatalf("%d boundaries without a wrap, %d with: not both covered", none, some)
	}
	t.Logf("%d boundaries without a wrap, %d with", none, some)
}
