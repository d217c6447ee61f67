package csp

import (
	"context"
	"math"
	"slices"
)

// cyclicPricer solves the Lagrangian subproblem exactly on the cycle of
// positions:
//
//	v(λ) = min over packings P of Q, read circularly, of Σ_{b∈P} (c_b − λ_{s(b)})
//
// A packing of the cycle either has no block running past the end of Q
// (a packing of the line [0, |Q|): one DP) or exactly one, covering the
// w first and r − w last positions; the rest is then a packing of the line
// [w, |Q| − r + w). One forward DP per head length w serves every size
// r > w. A head length is skipped when G[e] − G[w] (a lower bound on the
// best packing of [w, e), since G[e] ≤ G[w] + that packing) cannot beat
// the best value found so far.
type cyclicPricer struct {
	st  *search
	G   []float64 // line DP from 0: G[p] = best packing of [0, p)
	H   []float64 // line DP from the current head length w
	cg  []int16   // choices of G: -1 position left free, s a block
	chh []int16
	// cost[s·|Q|+i] is c(D(i, r_s)) as a float (+Inf for a block over a
	// position a dive has taken); active lists the sizes with jobs and
	// size their node counts; eps are the counts to place.
	cost   []float64
	active []int
	size   []int
	eps    []int
}

// newCyclicPricer returns the pricer of st's problem, or of the residual
// problem rs of a dive when rs is not nil.
func newCyclicPricer(st *search, rs *restriction) *cyclicPricer {
	n := st.nq + 1
	pr := &cyclicPricer{st: st, G: make([]float64, n), H: make([]float64, n),
		cg: make([]int16, n), chh: make([]int16, n), cost: make([]float64, len(st.eps)*st.nq), eps: st.eps}
	var taken []int // taken[i]: positions in [0, i) that the dive has taken
	if rs != nil {
		pr.eps = rs.left
		taken = make([]int, 2*st.nq+1)
		for i := range 2 * st.nq {
			taken[i+1] = taken[i]
			if rs.used[i%st.nq] {
				taken[i+1]++
			}
		}
	}
	for s, r := range st.g.Sizes {
		if pr.eps[s] > 0 {
			pr.active = append(pr.active, s)
			pr.size = append(pr.size, r)
		}
		for i, c := range st.g.Cost[s] {
			pr.cost[s*st.nq+i] = float64(c)
			if taken != nil && taken[i+r] > taken[i] {
				pr.cost[s*st.nq+i] = math.Inf(1)
			}
		}
	}
	if rs != nil {
		for b := range rs.banned {
			pr.cost[b.s*st.nq+b.i] = math.Inf(1)
		}
	}
	return pr
}

// line fills T[p] for p in [a, last] with the best packing of [a, p).
func (pr *cyclicPricer) line(T []float64, C []int16, lambda []float64, a, last int) {
	nq := pr.st.nq
	T[a], C[a] = 0, -1
	for p := a + 1; p <= last; p++ {
		best, ch := T[p-1], int16(-1)
		for k, s := range pr.active {
			r := pr.size[k]
			if p-r < a {
				continue
			}
			if v := T[p-r] + pr.cost[s*nq+p-r] - lambda[s]; v < best {
				best, ch = v, int16(s)
			}
		}
		T[p], C[p] = best, ch
	}
}

// back appends the blocks of T's packing of [a, p) to starts.
func (pr *cyclicPricer) back(C []int16, a, p int, starts [][]int) {
	sizes := pr.st.g.Sizes
	for p > a {
		if s := C[p]; s >= 0 {
			p -= sizes[s]
			starts[s] = append(starts[s], p)
		} else {
			p--
		}
	}
}

// price returns v(λ) and an optimal packing's block starts per size (a
// wrapping block starts after |Q| − r). ok is false when ctx expired.
func (pr *cyclicPricer) price(ctx context.Context, lambda []float64) (v float64, starts [][]int, ok bool) {
	st := pr.st
	g, nq := st.g, st.nq
	pr.line(pr.G, pr.cg, lambda, 0, nq)
	best, bw, bs := pr.G[nq], 0, -1
	maxR := 0
	for s, r := range g.Sizes {
		if pr.eps[s] > 0 {
			maxR = max(maxR, r)
		}
	}
	for w := 1; w < maxR; w++ {
		if w&7 == 0 && ctx.Err() != nil {
			return 0, nil, false
		}
		// Which wrapping blocks with head w could beat best?
		last := -1
		for s, r := range g.Sizes {
			if r <= w || pr.eps[s] == 0 {
				continue
			}
			e := nq - r + w
			if e < w {
				continue
			}
			if pr.G[e]-pr.G[w]+pr.cost[s*nq+e]-lambda[s] < best-1e-9 {
				last = max(last, e)
			}
		}
		if last < 0 {
			continue
		}
		st.stats.ColgenWrapDPs++
		pr.line(pr.H, pr.chh, lambda, w, last)
		for s, r := range g.Sizes {
			if r <= w || pr.eps[s] == 0 {
				continue
			}
			e := nq - r + w
			if e < w || e > last {
				continue
			}
			if val := pr.H[e] + pr.cost[s*nq+e] - lambda[s]; val < best-1e-9 {
				best, bw, bs = val, w, s
			}
		}
	}
	starts = make([][]int, len(g.Sizes))
	if bs < 0 {
		pr.back(pr.cg, 0, nq, starts)
		return best, starts, true
	}
	// Recompute the winning head length's DP (later ones overwrote H).
	e := nq - g.Sizes[bs] + bw
	pr.line(pr.H, pr.chh, lambda, bw, e)
	pr.back(pr.chh, bw, e, starts)
	starts[bs] = append(starts[bs], e)
	return best, starts, true
}

// colgen raises the bound to the Lagrangian dual of the count constraints
// over packings of the cycle, by column generation on the Dantzig–Wolfe
// master
//
//	min Σ_k c_k μ_k   s.t.   Σ_k n_{k,s} μ_k = ε_s  (every size s),
//	                         Σ_k μ_k = 1,  μ ≥ 0,
//
// k ranging over the packings generated so far (n_{k,s}: its blocks of
// size s). Its duals (π_s, π_0) price the next packing with cyclicPricer;
// every pricing at multipliers λ gives the valid bound
// L(λ) = Σ_s λ_s ε_s + v(λ). Pricing is done at a point between the best
// multipliers so far and the master's duals (Wentges smoothing), which
// damps the duals' oscillation. The dual's value is at least the LP bound
// of the strong M_SCAS program (its packings are integral and read on the
// cycle), and equal to it when the optimum is unique. Packings with exactly
// ε_s blocks of each size are feasible allocations and are offered as
// incumbents, as is the Lagrangian heuristic's repair of the master's
// heaviest packing. It returns the multipliers of the best bound.
func (st *search) colgen(ctx context.Context, lambda []float64) ([]float64, *master) {
	lambda, ms, _ := st.colgenOn(ctx, lambda, nil, nil, 2000)
	return lambda, ms
}

// colgenOn runs column generation on st's problem (rs nil) or on the
// residual problem rs of a dive, for at most maxIter iterations, seeding
// the master with prev's packings restricted to the residual when prev is
// not nil. On a residual problem the bounds stay local (they are not
// bounds of the window) and the run stops once its best bound plus the
// kept blocks' cost cannot beat the incumbent. It returns the multipliers
// of its best bound, the master and that bound (−Inf when none).
func (st *search) colgenOn(ctx context.Context, lambda []float64, rs *restriction, prev *master, maxIter int) ([]float64, *master, float64) {
	D := len(st.eps)
	pr := newCyclicPricer(st, rs)
	eps := pr.eps
	var ms *master
	var offset float64 // cost of the kept blocks
	if rs == nil {
		ms = newMaster(st, lambda)
		if st.best < inf {
			ms.add(st.starts, st.counts(st.starts), float64(st.best))
		}
	} else {
		offset = float64(rs.keptCost)
		ms = newMasterFor(eps, float64(st.best), lambda)
		if prev != nil {
			rs.seed(st, ms, prev)
		}
	}
	// full returns a packing of the residual problem with the kept blocks.
	full := func(starts [][]int) [][]int {
		if rs == nil {
			return starts
		}
		out := make([][]int, D)
		for s := range out {
			out[s] = append(slices.Clone(rs.kept[s]), starts[s]...)
		}
		return out
	}
	// done reports whether the bound meets the incumbent.
	done := func(bound float64) bool {
		if rs == nil {
			return st.provenOptimal()
		}
		return bound+offset >= float64(st.best)-1+1e-6
	}
	bestL, bestLambda := math.Inf(-1), slices.Clone(lambda)
	point := make([]float64, D)
	// α = 0.8 took 20–35 % fewer iterations than 0.5 or 0.95 on tight
	// k=32 fat-tree windows.
	const alpha = 0.8
	for it := 0; it < maxIter; it++ {
		if ctx.Err() != nil {
			break
		}
		pi, pi0, z := ms.solve()
		if rs == nil {
			st.stats.ColgenIterations = it + 1
			st.stats.ColgenMaster = z
		} else {
			st.stats.DiveColgenIterations++
		}
		tol := 1e-6
		if rs != nil {
			tol = diveTol
		}
		if !ms.artificial() && z-bestL <= tol*max(1, math.Abs(z)) {
			break // the master's value meets the bound: the dual is solved
		}
		a := alpha
		if it == 0 {
			a = 0
		}
		for {
			for s := range point {
				point[s] = a*bestLambda[s] + (1-a)*pi[s]
			}
			v, starts, ok := pr.price(ctx, point)
			if !ok {
				return bestLambda, ms, bestL
			}
			L := v
			for s, e := range eps {
				L += point[s] * float64(e)
			}
			if L > bestL {
				bestL = L
				copy(bestLambda, point)
			}
			if rs == nil && L > st.bound+1e-9 {
				st.raise(L, "column generation")
			}
			cnt := st.counts(starts)
			c := float64(st.g.Objective(starts))
			if slices.Equal(cnt, eps) {
				st.offer(full(starts), "column generation")
			}
			if done(bestL) {
				return bestLambda, ms, bestL
			}
			// Add the column when it prices out at the master's duals.
			rc := c - pi0
			for s, n := range cnt {
				rc -= pi[s] * float64(n)
			}
			if rc < -1e-7*max(1, math.Abs(c)) {
				ms.add(starts, cnt, c)
				if len(ms.cols) > 8*ms.m+400 {
					ms.purge(4*ms.m + 200)
				}
				break
			}
			if a == 0 {
				// No column prices out at the duals themselves: the master
				// is optimal, and without artificials its value is the
				// dual bound. With them, the dual box binds: widen it.
				if ms.artificial() {
					if ms.width > 8 {
						return bestLambda, ms, math.Inf(1) // infeasible residual
					}
					ms.widen()
					break
				}
				if rs == nil {
					st.raise(z-1e-9*math.Abs(z)-1e-6, "column generation, master optimal")
				}
				return bestLambda, ms, max(bestL, z-1e-9*math.Abs(z)-1e-6)
			}
			a = 0 // mispricing: price at the duals themselves
		}
		if rs == nil && it%10 == 9 {
			st.repair(ms.heaviest(), "column generation heuristic")
		}
	}
	return bestLambda, ms, bestL
}

// counts returns the number of blocks of each size in starts.
func (st *search) counts(starts [][]int) []int {
	c := make([]int, len(starts))
	for s := range starts {
		c[s] = len(starts[s])
	}
	return c
}
