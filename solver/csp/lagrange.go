package csp

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// lagrange bounds large problems by relaxing the count constraints
//
//	L(λ) = Σ_s λ_s·ε_s + min over packings P of Σ_{b∈P} (c_b − λ_{s(b)})
//
// where a packing is any set of disjoint blocks along Q. Wrapping blocks
// are priced apart: an optimal allocation has at most one, and its other
// blocks form a packing of the line, so adding min(0, min over wrapping
// blocks of c_b − λ) to the best packing of the line keeps L a lower bound.
// The packing is a shortest path, one DP over positions. λ follows
// subgradient steps (Polyak, with halving step scale); along the way the
// packings seed the primal heuristic (repair). The subgradient's λ then
// starts column generation (colgen, up to 40 % of the time left), which
// solves the Lagrangian dual over packings of the cycle and whose master
// solution gives the fix-and-place incumbent (fixAndSolve). When the gap
// is small, an exact branch and bound on reduced costs (rcSearch) tries to
// close it with 20 % of what is left; the rest goes to re-ordering blocks
// exactly (segmentDescent), large-neighbourhood moves (lns) and annealing
// the order. It returns true when
// the incumbent is proven optimal.
func (st *search) lagrange(ctx context.Context) bool {
	g, nq, D := st.g, st.nq, len(st.eps)
	lambda := st.trivialLambda()
	G := make([]float64, nq+1)
	ch := make([]int16, nq+1)
	count := make([]int, D)
	grad := make([]float64, D)
	theta := 2.0
	sinceImprove := 0
	rng := rand.New(rand.NewPCG(1, 2))
	bestLambda := slices.Clone(lambda)
	for it := 0; it < 3000; it++ {
		if ctx.Err() != nil {
			break
		}
		// Shortest path: G[p] = best packing of [0, p).
		G[0] = 0
		for p := 1; p <= nq; p++ {
			G[p], ch[p] = G[p-1], -1
			for s, r := range g.Sizes {
				if p >= r {
					if v := G[p-r] + float64(g.Cost[s][p-r]) - lambda[s]; v < G[p] {
						G[p], ch[p] = v, int16(s)
					}
				}
			}
		}
		wrapMin := 0.0
		for s, r := range g.Sizes {
			for i := nq - r + 1; i < nq; i++ {
				wrapMin = min(wrapMin, float64(g.Cost[s][i])-lambda[s])
			}
		}
		L := G[nq] + wrapMin
		for s, e := range st.eps {
			L += lambda[s] * float64(e)
		}
		// The packing's blocks.
		clear(count)
		kept := make([][]int, D)
		for p := nq; p > 0; {
			if s := ch[p]; s >= 0 {
				count[s]++
				kept[s] = append(kept[s], p-g.Sizes[s])
				p -= g.Sizes[s]
			} else {
				p--
			}
		}
		if L > st.bound+1e-9 {
			st.raise(L, "lagrange")
			copy(bestLambda, lambda)
			sinceImprove = 0
		} else if sinceImprove++; sinceImprove >= 15 {
			theta /= 2
			sinceImprove = 0
		}
		// A packing with the right counts is a feasible allocation.
		norm := 0.0
		for s := range grad {
			grad[s] = float64(st.eps[s] - count[s])
			norm += grad[s] * grad[s]
		}
		if it%5 == 0 || norm == 0 {
			st.repair(ctx, kept, rng, "lagrangian heuristic")
		}
		if st.provenOptimal() || theta < 1e-3 {
			break
		}
		if norm == 0 {
			break // λ is optimal for the dual: nothing more to gain
		}
		step := theta * (float64(st.best) - L) / norm
		for s := range lambda {
			lambda[s] += step * grad[s]
		}
		st.stats["lagrange_iterations"] = float64(it + 1)
	}
	if !st.provenOptimal() && ctx.Err() == nil {
		cctx, cancel := share(ctx, 4)
		var ms *master
		bestLambda, ms = st.colgen(cctx, bestLambda, rng)
		cancel()
		if !st.provenOptimal() && ctx.Err() == nil {
			st.fixAndSolve(ctx, ms, 2_000_000)
		}
	}
	// The exact search pays off when the gap is already small, or the
	// window is (it explores the relaxation's near-optimal paths).
	if !st.provenOptimal() && ctx.Err() == nil && (st.gap() <= 0.001 || st.jobs() <= 30) {
		if rs := newRCSearch(st, bestLambda); rs != nil {
			rctx, cancel := share(ctx, 2)
			rs.prove(rctx)
			cancel()
		}
	}
	// Improve the incumbent by simulated annealing over the order of
	// blocks along Q, with most of the time that is left.
	if !st.provenOptimal() && ctx.Err() == nil {
		budget := 2 * time.Second
		if dl, ok := ctx.Deadline(); ok {
			budget = time.Until(dl) - time.Until(dl)/20 - 5*time.Millisecond
		}
		// First an exact re-ordering of every run of segmentSize blocks
		// (segmentDescent), then annealing over the order with the rest.
		t0 := time.Now()
		order, _ := st.segmentDescent(ctx, st.orderOf(st.starts), st.segmentSize(st.orderOf(st.starts)), rng)
		budget -= time.Since(t0)
		// Half of the rest to large-neighbourhood moves (two runs of
		// blocks re-placed exactly, so blocks also move between places),
		// the other half to annealing the order: together 0.18 % mean gap
		// against 0.21 % for annealing alone on the large class.
		t1 := time.Now()
		st.lns(ctx, rng, budget/2, 200_000)
		budget -= time.Since(t1)
		order = st.orderOf(st.starts)
		st.anneal(ctx, order, rng, budget)
	}
	return st.provenOptimal()
}

// trivialLambda returns the multipliers λ_s = cheapest block of size s,
// at which L(λ) is the trivial bound.
func (st *search) trivialLambda() []float64 {
	lambda := make([]float64, len(st.eps))
	for s := range lambda {
		lambda[s] = float64(st.minc[s])
	}
	return lambda
}

// gap returns (incumbent − bound) / incumbent.
func (st *search) gap() float64 {
	if st.best <= 0 || st.best >= inf {
		return math.Inf(1)
	}
	return (float64(st.best) - st.bound) / float64(st.best)
}

// jobs returns the number of jobs to place.
func (st *search) jobs() int {
	n := 0
	for _, e := range st.eps {
		n += e
	}
	return n
}

// provenOptimal reports whether the incumbent meets the bound (costs are
// integers, so the bound rounds up).
func (st *search) provenOptimal() bool {
	return float64(st.best) <= math.Ceil(st.bound-1e-6)
}

// orderOf lists the incumbent's blocks' sizes in position order.
func (st *search) orderOf(starts [][]int) []int {
	type blk struct{ pos, s int }
	var bs []blk
	for s := range starts {
		for _, i := range starts[s] {
			bs = append(bs, blk{i, s})
		}
	}
	slices.SortFunc(bs, func(a, b blk) int { return a.pos - b.pos })
	out := make([]int, len(bs))
	for k, b := range bs {
		out[k] = b.s
	}
	return out
}

// improveOrder places the blocks of order optimally for that order (orderedDP),
// offers the result, and then tries local moves on the order (swap two
// blocks, or move one), keeping improvements, until tries moves in a row
// have not improved it.
func (st *search) improveOrder(ctx context.Context, order []int, rng *rand.Rand, tries int) {
	cost, starts := st.orderedDP(order)
	if starts == nil {
		return
	}
	st.offer(starts, "ordered dp")
	n := len(order)
	if n < 2 {
		return
	}
	for t := 0; t < tries; t++ {
		if t&7 == 0 && ctx.Err() != nil {
			return
		}
		if st.provenOptimal() {
			return
		}
		cand := slices.Clone(order)
		a, b := rng.IntN(n), rng.IntN(n)
		if rng.IntN(2) == 0 {
			cand[a], cand[b] = cand[b], cand[a]
		} else {
			x := cand[a]
			cand = slices.Delete(cand, a, a+1)
			cand = slices.Insert(cand, min(b, len(cand)), x)
		}
		if slices.Equal(cand, order) {
			continue
		}
		c, s := st.orderedDP(cand)
		st.stats["ordered_dps"]++
		if s != nil && c <= cost {
			if c < cost {
				st.offer(s, "local search")
				t = 0
			}
			order, cost = cand, c
		}
	}
}

// anneal improves the incumbent by simulated annealing over the order of
// blocks along Q: a move swaps two blocks or moves one (mostly to a nearby
// place), each order is priced by orderedDP, and a worse order is accepted
// with probability exp(−Δ/T), T falling geometrically from 0.05 % of the
// starting cost to a thousandth of that over the budget (0.05 % did best
// of 0.01, 0.05 and 0.2 % on tight k=32 fat-tree windows).
func (st *search) anneal(ctx context.Context, order []int, rng *rand.Rand, budget time.Duration) {
	n := len(order)
	cost, starts := st.orderedDP(order)
	if starts == nil || n < 2 || budget <= 0 {
		return
	}
	st.offer(starts, "ordered dp")
	t0 := time.Now()
	T0 := 0.0005 * float64(cost)
	T := T0
	cand := make([]int, n)
	// Stop early once the incumbent has not improved for many moves: small
	// problems are done long before a generous time limit.
	stall, lastBest := 0, st.best
	maxStall := 20000 + 200*n
	for it := 0; ; it++ {
		if stall++; st.best < lastBest {
			stall, lastBest = 0, st.best
		}
		if it&63 == 0 {
			el := time.Since(t0)
			if el >= budget || ctx.Err() != nil || st.provenOptimal() || stall > maxStall {
				break
			}
			T = T0 * math.Pow(1e-3, float64(el)/float64(budget))
		}
		copy(cand, order)
		a := rng.IntN(n)
		b := rng.IntN(n)
		if rng.IntN(4) > 0 { // mostly local moves
			b = min(n-1, max(0, a+rng.IntN(11)-5))
		}
		if a == b || cand[a] == cand[b] {
			continue
		}
		if rng.IntN(2) == 0 {
			cand[a], cand[b] = cand[b], cand[a]
		} else {
			x := cand[a]
			if a < b {
				copy(cand[a:b], cand[a+1:b+1])
			} else {
				copy(cand[b+1:a+1], cand[b:a])
			}
			cand[b] = x
		}
		c, s := st.orderedDP(cand)
		st.stats["anneal_moves"]++
		if s == nil {
			continue
		}
		if c <= cost || rng.Float64() < math.Exp(-float64(c-cost)/T) {
			order, cand = cand, order
			cost = c
			if c < st.best {
				st.offer(s, "annealing")
			}
		}
	}
}

// orderedDP places blocks of the given sizes, in that order along Q and
// without wrapping, at minimum total cost:
//
//	f[k][p] = min( f[k][p−1], f[k−1][p−r_k] + c(D(p−r_k, r_k)) )
//
// Block k can only start between the sizes before it and |Q| minus the
// sizes after it, so only slack+1 positions per block are visited
// (slack = |Q| − Σ r): O(len(order) × slack).
func (st *search) orderedDP(order []int) (int64, [][]int) {
	g, nq := st.g, st.nq
	n := len(order)
	total := 0
	for _, s := range order {
		total += g.Sizes[s]
	}
	slack := nq - total
	if slack < 0 {
		return inf, nil
	}
	W := slack + 1
	// f[k][d]: first k blocks placed within [0, pre[k]+d), d ∈ [0, slack].
	f := make([]int64, (n+1)*W)
	took := make([]bool, (n+1)*W)
	pre := 0
	for k := 1; k <= n; k++ {
		s := order[k-1]
		r := g.Sizes[s]
		for d := 0; d < W; d++ {
			// Either block k ends at pre+r+d (starts at pre+d) ...
			best := f[(k-1)*W+d] + g.Cost[s][pre+d]
			tk := true
			// ... or it ends earlier.
			if d > 0 && f[k*W+d-1] < best {
				best, tk = f[k*W+d-1], false
			}
			f[k*W+d], took[k*W+d] = best, tk
		}
		pre += r
	}
	starts := make([][]int, len(g.Sizes))
	d := slack
	for k := n; k >= 1; k-- {
		for !took[k*W+d] {
			d--
		}
		pre -= g.Sizes[order[k-1]]
		starts[order[k-1]] = append(starts[order[k-1]], pre+d)
	}
	return f[n*W+slack], starts
}

// share returns a context whose deadline is tenths/10 of the time left
// before ctx's deadline (ctx itself when it has none).
func share(ctx context.Context, tenths int) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, time.Now().Add(time.Until(dl)*time.Duration(tenths)/10))
}

// repair is the Lagrangian heuristic: keep a relaxed packing's cheapest
// blocks, up to ε_s of each size, place the other jobs greedily, then
// re-place every block optimally for the resulting order.
func (st *search) repair(ctx context.Context, kept [][]int, rng *rand.Rand, how string) {
	for s := range kept {
		slices.SortFunc(kept[s], func(a, b int) int { return int(st.g.Cost[s][a] - st.g.Cost[s][b]) })
		kept[s] = kept[s][:min(len(kept[s]), st.eps[s])]
	}
	if st.complete(kept, how) {
		st.improveOrder(ctx, st.orderOf(st.starts), rng, 0)
	}
}
