package csp

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"
)

// A block is a size index and a start position on Q.
type block struct{ s, i int }

// fixAndSolve is the primal heuristic of the column generation: it keeps
// the blocks that the master's solution uses with weight 1 (in every
// packing of its support) and places the other jobs optimally in the
// positions those blocks leave (residualDP). When the LP optimum is
// integral, the kept blocks are the whole solution; when it is nearly
// integral, few jobs are left to place. Should the residual problem be
// too large for the DP, more blocks are kept, heaviest first. It offers
// the result and reports whether it improved the incumbent.
func (st *search) fixAndSolve(ctx context.Context, ms *master, maxCells int) bool {
	cands, weight := ms.weights()
	rs := newRestriction(st)
	k := 0
	for ; k < len(cands) && weight[cands[k]] >= 1-1e-6; k++ {
		rs.take(st, cands[k])
	}
	st.stats.FixKeptIntegral = k
	for {
		if ctx.Err() != nil {
			return false
		}
		starts, ok := st.placeRest(ctx, rs, maxCells)
		if ok {
			return st.offer(starts, "column generation, fixed and placed")
		}
		if starts != nil || k >= len(cands) {
			return false // infeasible residual, or nothing left to keep
		}
		// Too large: keep the next heaviest block that fits.
		for k < len(cands) && !rs.take(st, cands[k]) {
			k++
		}
		k++
	}
}

// placeRest places the jobs rs leaves with the exact residual DP and
// returns the whole allocation, the kept blocks included. ok and a nil or
// non-nil starts on failure mean what they mean for residualDP.
func (st *search) placeRest(ctx context.Context, rs *restriction, maxCells int) ([][]int, bool) {
	starts, ok := st.residualDP(ctx, rs.used, rs.left, maxCells)
	if ok {
		for s := range starts {
			starts[s] = append(starts[s], rs.kept[s]...)
		}
	}
	return starts, ok
}

// residualDP places left[s] jobs of each size s in the positions of Q not
// marked used, each block inside one run of free positions (read on the
// cycle), at minimum cost: a DP over (position in the runs, multiset of
// placed sizes). ok is false when the DP would exceed maxCells (starts is
// then nil) or when the jobs cannot be placed (starts is then non-nil and
// empty).
func (st *search) residualDP(ctx context.Context, used []bool, left []int, maxCells int) (starts [][]int, ok bool) {
	g, nq := st.g, st.nq
	// The free positions in cycle order, starting after a used one (or at
	// 0 when nothing is used), with each position's run start.
	first := 0
	for i := range nq {
		if used[i] {
			first = (i + 1) % nq
			break
		}
	}
	pos, runStart := st.res.pos[:0], st.res.runStart[:0]
	defer func() { st.res.pos, st.res.runStart = pos, runStart }()
	for d := range nq {
		i := (first + d) % nq
		if used[i] {
			continue
		}
		if d > 0 && !used[(i+nq-1)%nq] && len(pos) > 0 {
			runStart = append(runStart, runStart[len(runStart)-1])
		} else {
			runStart = append(runStart, len(pos))
		}
		pos = append(pos, i)
	}
	T := len(pos)
	states, D := 1, len(left)
	stride := make([]int, D)
	for s, n := range left {
		stride[s] = states
		states *= n + 1
		if states > maxCells {
			return nil, false
		}
	}
	if (T+1)*states > maxCells {
		return nil, false
	}
	st.stats.FixResidualCells = (T + 1) * states
	// The tables are reused across calls (lns makes many small ones).
	F := grow(&st.res.F, (T+1)*states)
	ch := grow(&st.res.ch, (T+1)*states) // 0: free, s+1: block of size s ends here
	for m := 1; m < states; m++ {
		F[m] = inf
	}
	for t := 1; t <= T; t++ {
		if t&63 == 0 && ctx.Err() != nil {
			return nil, false
		}
		cur, prev := F[t*states:(t+1)*states], F[(t-1)*states:t*states]
		copy(cur, prev)
		c := ch[t*states : (t+1)*states]
		clear(c)
		for s, r := range g.Sizes {
			if left[s] == 0 || t-r < runStart[t-1] {
				continue
			}
			cost := g.Cost[s][pos[t-r]]
			from := F[(t-r)*states : (t-r+1)*states]
			// The multisets with at least one block of size s: within each
			// period stride·(left+1) of the mixed radix, all but the first
			// stride (no division per cell).
			sd, period := stride[s], stride[s]*(left[s]+1)
			for base := 0; base < states; base += period {
				for m := base + sd; m < base+period; m++ {
					f := from[m-sd]
					if f >= inf {
						continue
					}
					if v := f + cost; v < cur[m] {
						cur[m], c[m] = v, int8(s+1)
					}
				}
			}
		}
	}
	full := states - 1
	starts = make([][]int, D)
	if F[T*states+full] >= inf {
		return starts, false
	}
	for t, m := T, full; t > 0; {
		s := int(ch[t*states+m]) - 1
		if s < 0 {
			t--
			continue
		}
		t -= g.Sizes[s]
		m -= stride[s]
		starts[s] = append(starts[s], pos[t])
	}
	return starts, true
}

// lns improves the incumbent by large-neighbourhood search until ctx
// expires or budget runs out: it frees the blocks of two random runs of
// consecutive blocks along Q (so that blocks can also move between the
// two places) and re-places them optimally in the positions they and the
// free positions leave (residualDP), keeping the result when it is not
// worse. The runs grow while the incumbent resists, up to maxCells.
func (st *search) lns(ctx context.Context, rng *rand.Rand, budget time.Duration, maxCells int) {
	t0 := time.Now()
	nq := st.nq
	type blk struct{ pos, s int }
	k := 3 // blocks per run
	for it := 0; time.Since(t0) < budget && ctx.Err() == nil && !st.provenOptimal(); it++ {
		var bs []blk
		for s := range st.starts {
			for _, i := range st.starts[s] {
				bs = append(bs, blk{i, s})
			}
		}
		if len(bs) < 2 {
			return
		}
		slices.SortFunc(bs, func(a, b blk) int { return a.pos - b.pos })
		free := make([]bool, len(bs))
		left := make([]int, len(st.eps))
		for range 2 {
			a := rng.IntN(len(bs))
			for d := range min(k, len(bs)) {
				free[(a+d)%len(bs)] = true
			}
		}
		used := make([]bool, nq)
		kept := make([][]int, len(st.eps))
		for j, b := range bs {
			if free[j] {
				left[b.s]++
				continue
			}
			kept[b.s] = append(kept[b.s], b.pos)
			for d := range st.g.Sizes[b.s] {
				used[(b.pos+d)%nq] = true
			}
		}
		starts, ok := st.residualDP(ctx, used, left, maxCells)
		st.stats.LNSMoves++
		if starts == nil && !ok {
			k = max(2, k-1) // too large
			continue
		}
		if !ok {
			continue
		}
		for s := range starts {
			starts[s] = append(starts[s], kept[s]...)
		}
		if st.offer(starts, "lns") {
			k = 3
		} else if it%20 == 19 {
			k++
		}
	}
}
