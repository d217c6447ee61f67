package csp

import (
	"context"
	"math/rand/v2"
)

// segmentDP is an exact large-neighbourhood move on an order of blocks
// (see orderedDP): the k blocks order[a:a+k] may be placed in any order,
// the others keep theirs, and every block's position is optimal for the
// result. It is the ordered DP of orderedDP with its k middle layers
// replaced by a DP over the subsets of the segment:
//
//	h[S ∪ {b}][d] = min( h[S ∪ {b}][d−1], h[S][d] + c(D(P + r(S) + d, r_b)) )
//
// where P is the size of the blocks before the segment, r(S) the size of
// the blocks of S and d ∈ [0, slack] the free positions used so far. Equal
// sizes are interchangeable, so a block joins S only after the segment's
// earlier blocks of its size. O(2^k·k·(slack+1) + n·(slack+1)).
//
// It returns the best cost, the new order and its starts per size, or a
// nil order when the blocks do not fit.
func (st *search) segmentDP(order []int, a, k int) (int64, []int, [][]int) {
	g, nq := st.g, st.nq
	n := len(order)
	total := 0
	for _, s := range order {
		total += g.Sizes[s]
	}
	slack := nq - total
	if slack < 0 || a < 0 || k < 1 || a+k > n || k > 16 {
		return inf, nil, nil
	}
	W := slack + 1
	// Prefix: blocks 0..a−1 in their order, as orderedDP.
	sc := &st.seg
	f := grow(&sc.f, (a+1)*W)
	tookF := grow(&sc.tookF, (a+1)*W)
	pre := 0
	for i := 1; i <= a; i++ {
		s := order[i-1]
		st.orderedLayer(f[(i-1)*W:i*W], f[i*W:(i+1)*W], tookF[i*W:(i+1)*W], s, pre)
		pre += g.Sizes[s]
	}
	P := pre
	// Middle: subsets of the segment.
	seg := order[a : a+k]
	full := 1<<k - 1
	size := grow(&sc.size, full+1)
	for S := 1; S <= full; S++ {
		b := lowBit(S)
		size[S] = size[S&^(1<<b)] + g.Sizes[seg[b]]
	}
	// earlier[b]: the segment's blocks before b of the same size.
	earlier := grow(&sc.earlier, k)
	for b := range k {
		for c := range b {
			if seg[c] == seg[b] {
				earlier[b] |= 1 << c
			}
		}
	}
	h := grow(&sc.h, (full+1)*W)
	ch := grow(&sc.ch, (full+1)*W) // −1: shifted from d−1; b ≥ 0: block b ends here; −2: unreachable
	for i := range h {
		h[i], ch[i] = inf, -2
	}
	copy(h[:W], f[a*W:(a+1)*W])
	for d := range W {
		ch[d] = -1
	}
	for S := 1; S <= full; S++ {
		row := h[S*W : (S+1)*W]
		crow := ch[S*W : (S+1)*W]
		for b := range k {
			if S&(1<<b) == 0 || S&earlier[b] != earlier[b] {
				continue
			}
			from := h[(S&^(1<<b))*W:]
			s := seg[b]
			base := P + size[S] - g.Sizes[s] // start of block b when d free positions came before
			cost := g.Cost[s][base:]
			for d := range W {
				if from[d] >= inf {
					continue
				}
				if v := from[d] + cost[d]; v < row[d] {
					row[d], crow[d] = v, int8(b)
				}
			}
		}
		for d := 1; d < W; d++ {
			if row[d-1] < row[d] {
				row[d], crow[d] = row[d-1], -1
			}
		}
	}
	// Suffix: blocks a+k..n−1 in their order.
	m := n - a - k
	fs := grow(&sc.fs, (m+1)*W)
	tookS := grow(&sc.tookS, (m+1)*W)
	copy(fs[:W], h[full*W:(full+1)*W])
	pre = P + size[full]
	for i := 1; i <= m; i++ {
		s := order[a+k+i-1]
		st.orderedLayer(fs[(i-1)*W:i*W], fs[i*W:(i+1)*W], tookS[i*W:(i+1)*W], s, pre)
		pre += g.Sizes[s]
	}
	best := fs[m*W+slack]
	if best >= inf {
		return inf, nil, nil
	}
	// Reconstruct, from the end.
	newOrder := make([]int, n)
	starts := make([][]int, len(g.Sizes))
	d := slack
	pre = total
	for i := m; i >= 1; i-- {
		for !tookS[i*W+d] {
			d--
		}
		s := order[a+k+i-1]
		pre -= g.Sizes[s]
		starts[s] = append(starts[s], pre+d)
		newOrder[a+k+i-1] = s
	}
	S, pos := full, a+k
	for S != 0 {
		c := ch[S*W+d]
		if c == -1 {
			d--
			continue
		}
		s := seg[c]
		pos--
		newOrder[pos] = s
		starts[s] = append(starts[s], P+size[S]-g.Sizes[s]+d)
		S &^= 1 << c
	}
	pre = P
	for i := a; i >= 1; i-- {
		for !tookF[i*W+d] {
			d--
		}
		s := order[i-1]
		pre -= g.Sizes[s]
		starts[s] = append(starts[s], pre+d)
		newOrder[i-1] = s
	}
	return best, newOrder, starts
}

// orderedLayer is one layer of orderedDP: the block of size index s that
// follows blocks of total size pre, from the previous layer prev into
// cur (took: the block ends exactly at pre + r + d).
func (st *search) orderedLayer(prev, cur []int64, took []bool, s, pre int) {
	cost := st.g.Cost[s][pre:]
	for d := range cur {
		best, tk := int64(inf), false
		if prev[d] < inf {
			best, tk = prev[d]+cost[d], true
		}
		if d > 0 && cur[d-1] < best {
			best, tk = cur[d-1], false
		}
		cur[d], took[d] = best, tk
	}
}

func lowBit(x int) int {
	b := 0
	for x&1 == 0 {
		x >>= 1
		b++
	}
	return b
}

// segmentDescent improves order by segmentDP moves over windows of k
// blocks, sliding by k/2 from a random offset, until a full sweep finds
// nothing better or ctx expires; it offers every improvement and returns
// the final order and its cost.
func (st *search) segmentDescent(ctx context.Context, order []int, k int, rng *rand.Rand) ([]int, int64) {
	n := len(order)
	cost, starts := st.orderedDP(order)
	if starts == nil {
		return order, inf
	}
	k = min(k, n)
	step := max(1, k/2)
	for improved := true; improved; {
		improved = false
		off := rng.IntN(step)
		for a := off; a+k <= n || a == off; a += step {
			if ctx.Err() != nil || st.provenOptimal() {
				return order, cost
			}
			lo := min(a, n-k)
			c, o, s := st.segmentDP(order, lo, k)
			st.stats.SegmentDPs++
			if o != nil && c < cost {
				order, cost = o, c
				st.offer(s, "segment dp")
				improved = true
			}
			if a+k >= n {
				break
			}
		}
	}
	return order, cost
}

// segmentSize picks the segment length for order: the largest k ≤ 12
// whose segmentDP does at most about 4 million steps (2^k·k·(slack+1)).
// On the large class (k=32 fat-trees, 1 s), segments of 12 cut csp's mean
// gap from 0.63–0.76 % to 0.43–0.51 % in back-to-back runs; 6, 8 and 10
// did less, and 14 spent too long per sweep.
func (st *search) segmentSize(order []int) int {
	total := 0
	for _, s := range order {
		total += st.g.Sizes[s]
	}
	W := max(1, st.nq-total+1)
	k := 12
	for k > 4 && (1<<k)*k*W > 4_000_000 {
		k--
	}
	return k
}

// segScratch holds segmentDP's tables between calls: segmentDescent calls
// it many times per solve, and the subset table alone can take megabytes.
type segScratch struct {
	f, h, fs      []int64
	tookF, tookS  []bool
	size, earlier []int
	ch            []int8
}

// grow returns *buf resized to n zeroed elements, reallocating only when
// its capacity is short.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	} else {
		*buf = (*buf)[:n]
		clear(*buf)
	}
	return *buf
}
