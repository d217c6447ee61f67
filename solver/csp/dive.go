package csp

import (
	"cmp"
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
)

// restriction is the residual problem of a dive: the blocks kept so far
// (starts per size), the positions of Q they cover, the jobs left to place
// per size, and the kept blocks' cost.
type restriction struct {
	kept     [][]int
	used     []bool
	left     []int
	keptCost int64
	banned   map[block]bool // blocks the dive has ruled out
}

func newRestriction(st *search) *restriction {
	return &restriction{kept: make([][]int, len(st.eps)), used: make([]bool, st.nq),
		left: slices.Clone(st.eps), banned: map[block]bool{}}
}

// clone returns a deep copy of rs.
func (rs *restriction) clone() *restriction {
	c := &restriction{kept: make([][]int, len(rs.kept)), used: slices.Clone(rs.used),
		left: slices.Clone(rs.left), keptCost: rs.keptCost, banned: maps.Clone(rs.banned)}
	for s := range rs.kept {
		c.kept[s] = slices.Clone(rs.kept[s])
	}
	return c
}

// blocked reports whether block (s, i) is banned or covers a taken position.
func (rs *restriction) blocked(st *search, s, i int) bool {
	if rs.banned[block{s, i}] {
		return true
	}
	for d := range st.g.Sizes[s] {
		if rs.used[(i+d)%st.nq] {
			return true
		}
	}
	return false
}

// take keeps block b when a job of its size is left and its positions are
// free, and reports whether it did.
func (rs *restriction) take(st *search, b block) bool {
	r := st.g.Sizes[b.s]
	if rs.left[b.s] == 0 || rs.blocked(st, b.s, b.i) {
		return false
	}
	for d := range r {
		rs.used[(b.i+d)%st.nq] = true
	}
	rs.left[b.s]--
	rs.kept[b.s] = append(rs.kept[b.s], b.i)
	rs.keptCost += st.g.Cost[b.s][b.i]
	return true
}

// jobs returns the number of jobs left to place.
func (rs *restriction) jobs() int {
	n := 0
	for _, e := range rs.left {
		n += e
	}
	return n
}

// seed adds prev's basic packings to ms, each restricted to its blocks
// that avoid the positions rs has taken and are not banned: they are
// packings of the residual problem, and the previous master's support is
// usually close to the new one's. Seeding only the basis, not every
// column, left the master a tenth of the columns to price: the dives made
// 3–4× more column-generation iterations in the same time (mean gap on
// the large class 0.021 → 0.013 % in a paired run).
func (rs *restriction) seed(st *search, ms *master, prev *master) {
	for j := prev.nart; j < len(prev.cols); j++ {
		if !prev.inB[j] {
			continue
		}
		out := make([][]int, len(st.eps))
		for s, is := range prev.starts[j] {
			for _, i := range is {
				if !rs.blocked(st, s, i) {
					out[s] = append(out[s], i)
				}
			}
		}
		ms.add(out, st.counts(out), float64(st.g.Objective(out)))
	}
}

// weights returns the blocks of the master's solution with their weights
// Σ_k μ_k over the packings k that use them, heaviest first (ties: by
// size, then position).
func (ms *master) weights() ([]block, map[block]float64) {
	weight := map[block]float64{}
	for r, j := range ms.basis {
		if j < ms.nart || ms.x[r] <= 1e-9 {
			continue
		}
		for s, is := range ms.starts[j] {
			for _, i := range is {
				weight[block{s, i}] += ms.x[r]
			}
		}
	}
	cands := make([]block, 0, len(weight))
	for b := range weight {
		cands = append(cands, b)
	}
	slices.SortFunc(cands, func(a, b block) int {
		return cmp.Or(cmp.Compare(weight[b], weight[a]), a.s-b.s, a.i-b.i)
	})
	return cands, weight
}

// diveTol is the relative gap between the residual master's value and
// its Lagrangian bound at which a dive's column generation stops: the
// dive needs the master's solution, not its proof.
const diveTol = 1e-4

// dive is a branch-and-price dive from the master's solution ms: it keeps
// the blocks of weight 1 and the heaviest fractional ones (a share
// 1/fixDiv of the jobs left, at least one), re-solves the master on the
// residual problem by column generation (warm-started from the previous
// multipliers and basis), and repeats until the residual problem is small
// enough for the exact residual DP, which places the rest. Re-solving
// after each fixing is what makes the kept blocks agree with each other,
// where fixAndSolve keeps fractional blocks from one LP solution.
//
// On tight windows a round's blocks often leave runs of free positions
// that no combination of the jobs left fills exactly (the residual LP is
// infeasible), or a residual whose Lagrangian bound plus the kept blocks'
// cost cannot beat the incumbent. The dive then backtracks: it undoes the
// round, halves the number of fractional blocks it keeps, and once a
// single block fails it bans that block (the other branch of the dive)
// and re-solves. It stops when the residual DP has placed the rest, when
// the banned branch cannot win either, after maxBacktracks failures, or at
// ctx's deadline. It reports whether it improved the incumbent. (Deeper
// backtracking, which goes on after a placement and undoes earlier rounds,
// did worse on the large class in the same time: 39/37/39 of 40 windows
// within 0.1 % on three seeds, against 40/39/39.)
func (st *search) dive(ctx context.Context, ms *master, lambda []float64, fixDiv, maxCells int) bool {
	return st.diveNoisy(ctx, ms, lambda, fixDiv, maxCells, nil)
}

// diveNoisy is dive with the fractional blocks ranked by weight times a
// random factor in [1 − noise, 1 + noise] when rng is not nil.
func (st *search) diveNoisy(ctx context.Context, ms *master, lambda []float64, fixDiv, maxCells int, rng *rand.Rand) bool {
	const maxBacktracks = 24
	st.stats.Dives++
	rs := newRestriction(st)
	lambda = slices.Clone(lambda)
	capQuota := 1 << 30 // fractional blocks per round, lowered by backtracking
	backtracks := 0
	for ctx.Err() == nil {
		st.stats.DiveRounds++
		snap := rs.clone()
		cands, weight := ms.weights()
		if rng != nil {
			key := make(map[block]float64, len(cands))
			for _, b := range cands {
				key[b] = weight[b]
				if weight[b] < 1-1e-6 {
					key[b] *= 1 + diveNoise*(2*rng.Float64()-1)
				}
			}
			slices.SortStableFunc(cands, func(a, b block) int { return cmp.Compare(key[b], key[a]) })
		}
		quota := min(capQuota, max(1, rs.jobs()/fixDiv))
		took, frac := false, 0
		var last block // the last fractional block kept
		for _, b := range cands {
			if weight[b] >= 1-1e-6 {
				took = rs.take(st, b) || took
			} else if frac < quota && rs.take(st, b) {
				frac++
				took, last = true, b
			}
		}
		if !took && rs.jobs() > 0 {
			st.stats.DiveEndStuck++
			return false // nothing in the master's support fits any more
		}
		starts, ok := st.placeRest(ctx, rs, maxCells)
		if ok {
			st.stats.DiveEndDP++
			return st.offer(starts, "branch-and-price dive")
		}
		var lb float64
		var next *master
		nextLambda := lambda
		if starts != nil {
			lb = math.Inf(1) // the residual DP found no placement
		} else {
			nextLambda, next, lb = st.colgenOn(ctx, lambda, rs, ms, 200)
		}
		if (math.IsInf(lb, 1) || lb+float64(rs.keptCost) >= float64(st.best)-1+1e-6) && ctx.Err() == nil {
			// Infeasible, or no better than the incumbent: undo the round
			// and keep fewer blocks, or ban the block that failed alone.
			if backtracks++; backtracks > maxBacktracks {
				st.stats.DiveEndBacktracks++
				return false
			}
			st.stats.DiveBacktracks++
			rs = snap
			if frac > 1 {
				capQuota = frac / 2
				continue
			}
			if frac == 0 {
				st.stats.DiveEndInfeasible++
				return false
			}
			rs.banned[last] = true
			nextLambda, next, lb = st.colgenOn(ctx, lambda, rs, ms, 200)
		}
		if lb+float64(rs.keptCost) >= float64(st.best)-1+1e-6 {
			st.stats.DiveEndPruned++
			return false
		}
		lambda, ms = nextLambda, next
		capQuota = 1 << 30
	}
	return false
}

// diveNoise is the spread of the random factor on fractional weights in
// the dives that follow the deterministic ones (diveNoisy).
const diveNoise = 0.3
