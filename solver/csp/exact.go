package csp

import (
	"context"
	"fmt"
)

// table is the exact DP over (position, multiset of placed sizes). A
// multiset m is a mixed-radix number with digit cnt_s(m) ∈ [0, ε_s] at
// stride[s]. For a start position a, row p (a ≤ p) holds
//
//	F[p][m] = min cost of placing exactly m in positions [a, p)
//	        = min( F[p−1][m],  min_s F[p−r_s][m − e_s] + c(D(p−r_s, r_s)) )
//
// with no block running past the end of Q; choice records the argmin for
// reconstruction (0: position p−1 left free; s+1: a block of size s ends
// at p).
type table struct {
	st     *search
	S      int
	stride []int
	digit  []uint8 // digit[m*D+s] = cnt_s(m)
	F      []int64
	choice []uint8
	a      int
}

func newTable(st *search, states int) *table {
	D := len(st.eps)
	t := &table{st: st, S: states, stride: make([]int, D), digit: make([]uint8, states*D)}
	k := 1
	for s, e := range st.eps {
		t.stride[s] = k
		k *= e + 1
	}
	for m := 0; m < states; m++ {
		for s, e := range st.eps {
			t.digit[m*D+s] = uint8((m / t.stride[s]) % (e + 1))
		}
	}
	return t
}

// run fills rows a..last. It returns false if ctx expired first.
func (t *table) run(ctx context.Context, a, last int) bool {
	st, S, D := t.st, t.S, len(t.stride)
	rows := last - a + 1
	if need := rows * S; cap(t.F) < need {
		t.F = make([]int64, need)
		t.choice = make([]uint8, need)
	}
	t.F, t.choice, t.a = t.F[:rows*S], t.choice[:rows*S], a
	for m := range S {
		t.F[m] = inf
	}
	t.F[0] = 0
	sizes, cost := st.g.Sizes, st.g.Cost
	for row := 1; row < rows; row++ {
		if row&63 == 0 && ctx.Err() != nil {
			return false
		}
		p := a + row
		cur, prev := t.F[row*S:(row+1)*S], t.F[(row-1)*S:row*S]
		ch := t.choice[row*S : (row+1)*S]
		copy(cur, prev)
		clear(ch)
		for s, r := range sizes {
			if row < r {
				continue
			}
			from := t.F[(row-r)*S : (row-r+1)*S]
			c := cost[s][p-r]
			stride := t.stride[s]
			for m := stride; m < S; m++ {
				if t.digit[m*D+s] == 0 {
					continue
				}
				f := from[m-stride]
				if f >= inf {
					continue
				}
				if v := f + c; v < cur[m] {
					cur[m] = v
					ch[m] = uint8(s + 1)
				}
			}
		}
	}
	return true
}

// at returns F[p][m].
func (t *table) at(p, m int) int64 { return t.F[(p-t.a)*t.S+m] }

// starts reconstructs the blocks of F[p][m], appending them to out.
func (t *table) starts(p, m int, out [][]int) {
	sizes := t.st.g.Sizes
	for p > t.a {
		c := t.choice[(p-t.a)*t.S+m]
		if c == 0 {
			p--
			continue
		}
		s := int(c - 1)
		p -= sizes[s]
		m -= t.stride[s]
		out[s] = append(out[s], p)
	}
}

// exact solves the problem to optimality by the DP; it returns true when
// the incumbent is proven optimal, false if ctx expired first.
func (st *search) exact(ctx context.Context, states int) bool {
	t := newTable(st, states)
	full := states - 1 // every digit at its maximum: the whole multiset
	nq := st.nq
	// No block wraps: one DP over all of Q.
	if !t.run(ctx, 0, nq) {
		return false
	}
	if v := t.at(nq, full); v < st.best {
		st.offer(t.collect(nq, full, -1, -1), "dp")
	}
	// One block wraps, covering the w first positions of Q and the r − w
	// last ones. For each w, one DP over positions [w, |Q|−1] serves all
	// sizes r > w. Skip a (w, r) whose cheapest completion cannot beat the
	// incumbent.
	//
	// The rest of such a placement lies in [w, e), e = |Q| − r + w, so it
	// costs at least F[e][rest] of the DP just run, which may place it
	// anywhere in [0, e): kept, for each size, at the rows the wrapping
	// blocks end at, it prunes most wraps (on a large, mostly idle
	// cluster the non-wrapping optimum is seldom beaten, and each wrap is
	// a DP over all of Q).
	maxR := 0
	for _, r := range st.g.Sizes {
		maxR = max(maxR, r)
	}
	restAt := make([][]int64, len(st.g.Sizes))
	for s, r := range st.g.Sizes {
		if st.eps[s] == 0 {
			continue
		}
		restAt[s] = make([]int64, r)
		for w := 1; w < r && w <= nq; w++ {
			restAt[s][w] = t.at(nq-r+w, full-t.stride[s])
		}
	}
	for w := 1; w < maxR; w++ {
		last := -1
		for s, r := range st.g.Sizes {
			if r > w && st.eps[s] > 0 && st.wrapBound(s, w) < st.best &&
				st.g.Cost[s][nq-r+w]+restAt[s][w] < st.best {
				last = max(last, nq-r+w)
			}
		}
		if last < w {
			continue
		}
		st.stats["wrap_dps"]++
		if !t.run(ctx, w, last) {
			return false
		}
		for s, r := range st.g.Sizes {
			if r <= w || st.eps[s] == 0 {
				continue
			}
			e := nq - r + w
			if e > last {
				continue
			}
			rest := full - t.stride[s]
			f := t.at(e, rest)
			if f >= inf {
				continue
			}
			if v := f + st.g.Cost[s][e]; v < st.best {
				st.offer(t.collect(e, rest, s, e), fmt.Sprintf("dp, wrap w=%d", w))
			}
		}
	}
	st.raise(float64(st.best), "dp complete")
	return true
}

// wrapBound is a lower bound on any placement whose wrapping block has
// size index s and covers w head positions.
func (st *search) wrapBound(s, w int) int64 {
	e := st.nq - st.g.Sizes[s] + w
	lb := st.g.Cost[s][e]
	for s2, n := range st.eps {
		if s2 == s {
			n--
		}
		lb += int64(n) * st.minc[s2]
	}
	return lb
}

// collect reconstructs F[p][m]'s blocks, plus a wrapping block of size
// index ws at position wp when ws ≥ 0.
func (t *table) collect(p, m, ws, wp int) [][]int {
	out := make([][]int, len(t.stride))
	t.starts(p, m, out)
	if ws >= 0 {
		out[ws] = append(out[ws], wp)
	}
	return out
}
