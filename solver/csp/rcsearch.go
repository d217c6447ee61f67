package csp

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"slices"
)

// rcSearch is an exact branch and bound on the CSP graph with fixed
// Lagrangian multipliers λ (the best found by colgen): a depth-first walk
// along Q that at each position leaves it free or starts a block of a size
// that still has jobs, pruning a partial path when
//
//	reduced cost so far + B(p, free positions left) + Σ_s λ_s ε_s ≥ incumbent
//
// where B is the best reduced-cost packing of the rest of the line leaving
// at most that many positions free (a backward DP without the count
// constraints, so a valid bound on every completion). Children are tried
// cheapest bound first, so the first dive follows the relaxation. Two
// paths that reach the same position with the same remaining counts have
// the same future: a memo keeps the cheapest and prunes the others. The
// wrapping block of the cycle is a root branch: each (size, head length)
// whose bound can beat the incumbent is searched as a line with one job
// of that size already placed. Every complete path is a feasible
// allocation and tightens the incumbent. The target widens in rounds
// (prove): a round that explores every root under target T either finds
// the optimum or proves that nothing costs ≤ T, which raises the bound.
// The walk stops at ctx's deadline.
type rcSearch struct {
	st      *search
	lambda  []float64
	konst   float64 // Σ_s λ_s ε_s
	W       int     // free-position columns of B (1: not counted)
	B       []float64
	a, e    int // the line being searched: positions [a, e)
	rem     []int
	path    [][]int
	stride  [][2]uint64
	memo    map[rcKey]float64
	F       int // free positions of a complete allocation
	roots   []rcRoot
	left    int // jobs still to place
	nodes   int
	stopped bool
	ctx     context.Context
	ub      float64 // incumbent − 1 + ε: a new path must cost at most this
}

type rcKey struct {
	p      int32
	hi, lo uint64
}

const (
	rcMaxMemo  = 2_000_000
	rcMaxCells = 4_000_000
)

// rcRoot is a root branch: the line without a wrapping block (s < 0), or
// the line left by a wrapping block of size index s over w head positions.
type rcRoot struct {
	s, w int
	lb   float64 // lower bound on its paths (exact once searched)
}

// newRCSearch prepares the search with multipliers lambda, or returns nil
// when the jobs do not fit.
func newRCSearch(st *search, lambda []float64) *rcSearch {
	g, nq, D := st.g, st.nq, len(st.eps)
	total := 0
	for s, e := range st.eps {
		total += e * g.Sizes[s]
	}
	F := nq - total
	if F < 0 {
		return nil
	}
	rs := &rcSearch{st: st, lambda: lambda, rem: make([]int, D), path: make([][]int, D),
		memo: map[rcKey]float64{}, F: F}
	for s, e := range st.eps {
		rs.konst += lambda[s] * float64(e)
	}
	rs.W = F + 1
	if (nq+1)*rs.W > rcMaxCells {
		rs.W = 1
	}
	rs.B = make([]float64, (nq+1)*rs.W)
	// Mixed-radix keys for the remaining counts, over 128 bits; without
	// room the memo is off.
	rs.stride = make([][2]uint64, D)
	var hi, lo uint64 = 0, 1
	memoOK := true
	for s, e := range st.eps {
		rs.stride[s] = [2]uint64{hi, lo}
		h1, l1 := bits.Mul64(lo, uint64(e+1))
		h2, l2 := bits.Mul64(hi, uint64(e+1))
		if h2 != 0 {
			memoOK = false
			break
		}
		var c uint64
		lo = l1
		hi, c = bits.Add64(h1, l2, 0)
		if c != 0 {
			memoOK = false
			break
		}
	}
	if !memoOK {
		rs.memo = nil
	}
	// Root branches: the line without a wrapping block, and every wrapping
	// block whose bound can beat the incumbent, cheapest bound first.
	roots := []rcRoot{{s: -1}}
	maxR := 0
	for s, r := range g.Sizes {
		if st.eps[s] > 0 {
			maxR = max(maxR, r)
		}
	}
	// G[p]: best reduced-cost packing of [0, p). The best packing of
	// [w, e) costs at least G[e] − G[w], since G[e] ≤ G[w] + that packing.
	G := make([]float64, nq+1)
	for p := 1; p <= nq; p++ {
		G[p] = G[p-1]
		for s, r := range g.Sizes {
			if p >= r && st.eps[s] > 0 {
				G[p] = min(G[p], G[p-r]+float64(g.Cost[s][p-r])-lambda[s])
			}
		}
	}
	roots[0].lb = G[nq] + rs.konst
	for w := 1; w < maxR; w++ {
		for s, r := range g.Sizes {
			if r <= w || st.eps[s] == 0 {
				continue
			}
			e := nq - r + w
			if lb := float64(g.Cost[s][e]) - lambda[s] + G[e] - G[w] + rs.konst; lb < float64(st.best)-1+1e-6 {
				roots = append(roots, rcRoot{s: s, w: w, lb: lb})
			}
		}
	}
	slices.SortStableFunc(roots, func(x, y rcRoot) int { return cmp.Compare(x.lb, y.lb) })
	st.stats.RCRoots = len(roots)
	rs.roots = roots
	return rs
}

// prove runs the exact search until ctx expires and reports whether the
// incumbent is proven optimal.
func (rs *rcSearch) prove(ctx context.Context) bool {
	st, roots := rs.st, rs.roots
	rs.ctx, rs.stopped = ctx, false
	// Widen the target step by step, from just above the root bound: a
	// narrow target prunes hard, and when the LP bound is tight the
	// optimum lies just above it. A search that exhausts every root under
	// target T either found the optimum or proves that none costs ≤ T.
	delta := 1.0
	for {
		low := math.Inf(1)
		for _, rt := range roots {
			low = min(low, rt.lb)
		}
		T := math.Min(float64(st.best)-1, math.Ceil(max(st.bound, low)-1e-6)+delta-1)
		found := false
		for i := range roots {
			rt := &roots[i]
			rs.ub = math.Min(T, float64(st.best)-1) + 1e-6
			if rt.lb > rs.ub {
				continue
			}
			if rs.root(&rt.lb, rt.s, rt.w) {
				found = true
			}
			st.stats.RCNodes = rs.nodes
			if rs.stopped {
				return false
			}
		}
		st.stats.RCRounds++
		st.log("reduced-cost round: target %.0f, %d nodes", T, rs.nodes)
		if found || T >= float64(st.best)-1 {
			st.raise(float64(st.best), "reduced-cost search complete")
			return true
		}
		st.raise(T+1, "reduced-cost search")
		delta *= 4
	}
}

// root searches one root branch: the line [0, |Q|) when s < 0, else the
// line left by a wrapping block of size index s covering w head positions.
// It reports whether it improved the incumbent.
func (rs *rcSearch) root(lb *float64, s, w int) bool {
	st, g, F := rs.st, rs.st.g, rs.F
	before := st.best
	copy(rs.rem, st.eps)
	rs.left = 0
	for _, n := range rs.rem {
		rs.left += n
	}
	for k := range rs.path {
		rs.path[k] = rs.path[k][:0]
	}
	acc := 0.0
	if s < 0 {
		rs.a, rs.e = 0, st.nq
	} else {
		r := g.Sizes[s]
		rs.a, rs.e = w, st.nq-r+w
		rs.rem[s]--
		rs.left--
		rs.path[s] = append(rs.path[s], rs.e)
		acc = float64(g.Cost[s][rs.e]) - rs.lambda[s]
	}
	rs.backward()
	// The root's exact bound, for the next rounds' filter.
	*lb = max(*lb, acc+rs.bound(rs.a, F)+rs.konst)
	if *lb > rs.ub {
		return false
	}
	if rs.memo != nil {
		clear(rs.memo)
	}
	var khi, klo uint64
	for k, n := range rs.rem {
		for range n {
			klo, khi = add128(klo, khi, rs.stride[k])
		}
	}
	rs.dfs(rs.a, F, acc, khi, klo)
	return st.best < before
}

func add128(lo, hi uint64, s [2]uint64) (uint64, uint64) {
	l, c := bits.Add64(lo, s[1], 0)
	h, _ := bits.Add64(hi, s[0], c)
	return l, h
}

func sub128(lo, hi uint64, s [2]uint64) (uint64, uint64) {
	l, b := bits.Sub64(lo, s[1], 0)
	h, _ := bits.Sub64(hi, s[0], b)
	return l, h
}

// backward fills B[p][f] for p in [a, e]: the best reduced-cost packing
// of [p, e) with at most f positions left free (any number when W = 1).
func (rs *rcSearch) backward() {
	g, W, st := rs.st.g, rs.W, rs.st
	B := rs.B
	for f := range W {
		B[rs.e*W+f] = 0
	}
	for p := rs.e - 1; p >= rs.a; p-- {
		row := B[p*W : (p+1)*W]
		next := B[(p+1)*W : (p+2)*W]
		if W == 1 {
			row[0] = next[0]
		} else {
			row[0] = math.Inf(1)
			copy(row[1:], next[:W-1])
		}
		for s, r := range g.Sizes {
			if p+r > rs.e || st.eps[s] == 0 {
				continue
			}
			c := float64(g.Cost[s][p]) - rs.lambda[s]
			to := B[(p+r)*W : (p+r+1)*W]
			for f := range W {
				if v := to[f] + c; v < row[f] {
					row[f] = v
				}
			}
		}
	}
}

// bound returns B(p, f).
func (rs *rcSearch) bound(p, f int) float64 {
	if rs.W == 1 {
		return rs.B[p]
	}
	return rs.B[p*rs.W+min(f, rs.W-1)]
}

// dfs extends a path at position p with f free positions left and reduced
// cost acc; (khi, klo) is the remaining counts' key.
func (rs *rcSearch) dfs(p, f int, acc float64, khi, klo uint64) {
	st, g := rs.st, rs.st.g
	if rs.nodes++; rs.nodes&1023 == 0 && rs.ctx.Err() != nil {
		rs.stopped = true
	}
	if rs.stopped {
		return
	}
	if rs.left == 0 {
		// Every job placed: the rest of the line stays free.
		if st.offer(rs.path, "reduced-cost search") {
			rs.ub = float64(st.best) - 1 + 1e-6
		}
		return
	}
	if p >= rs.e || acc+rs.bound(p, f)+rs.konst > rs.ub {
		return
	}
	if rs.memo != nil {
		k := rcKey{int32(p), khi, klo}
		if old, ok := rs.memo[k]; ok && old <= acc+1e-9 {
			return
		}
		if len(rs.memo) < rcMaxMemo {
			rs.memo[k] = acc
		}
	}
	// Children, cheapest bound first: a block of size s at p, or p free.
	type child struct {
		s  int // -1: free
		lb float64
	}
	var buf [48]child
	kids := buf[:0]
	if f > 0 {
		kids = append(kids, child{-1, acc + rs.bound(p+1, f-1)})
	}
	for s, r := range g.Sizes {
		if rs.rem[s] == 0 || p+r > rs.e {
			continue
		}
		c := acc + float64(g.Cost[s][p]) - rs.lambda[s]
		kids = append(kids, child{s, c + rs.bound(p+r, f)})
	}
	slices.SortFunc(kids, func(x, y child) int { return cmp.Or(cmp.Compare(x.lb, y.lb), x.s-y.s) })
	for _, k := range kids {
		if k.lb+rs.konst > rs.ub || rs.stopped {
			return
		}
		if k.s < 0 {
			rs.dfs(p+1, f-1, acc, khi, klo)
			continue
		}
		r := g.Sizes[k.s]
		rs.rem[k.s]--
		rs.left--
		rs.path[k.s] = append(rs.path[k.s], p)
		lo, hi := sub128(klo, khi, rs.stride[k.s])
		rs.dfs(p+r, f, acc+float64(g.Cost[k.s][p])-rs.lambda[k.s], hi, lo)
		rs.path[k.s] = rs.path[k.s][:len(rs.path[k.s])-1]
		rs.rem[k.s]++
		rs.left++
	}
}
