package free

import (
	"math"

	"github.com/optsched/optsched/encode/dcas"
	"github.com/optsched/optsched/model"
)

// A lagrange prices the leaves' capacity: with λ_ℓ ≥ 0 per leaf and any
// capacities cap,
//
//	Σ_j cost_j(x_j)  ≥  Σ_j φ_j(λ, cap) − Σ_ℓ λ_ℓ·cap_ℓ,
//	φ_j(λ, cap) = min over placements x of job j alone within cap of
//	              α_j·H(x) + β_j + Σ_ℓ λ_ℓ·x_ℓ,
//
// where α_j·H + β_j ≤ FromHops(n_j, H) is the linear minorant of Eq. (1)
// with its integer division (lan-code: α = c/n, β = −c·C(n,2)/n − s;
// lan-paper: α = 2c/n, β = −s; s = (n − gcd(q, n))/n with q = c or 2c,
// the most the division can drop). φ_j is the tables' (min,+)
// recursion with prices, so the bound holds for every window; the
// subgradient method at the root chooses λ, and the branch and bound
// reuses it on the capacities it leaves.
type lagrange struct {
	t   *dcas.Tree
	lam []float64 // per vertex; 0 off the leaves
	// pg and psuf are the priced tables of the last phi (see tables).
	pg   [][]float64
	psuf [][][]float64
	// x receives a traced placement (per-leaf counts) for subgradients.
	x []int
}

func newLagrange(t *dcas.Tree) *lagrange {
	nv := t.NumVertices()
	return &lagrange{t: t, lam: make([]float64, nv), pg: make([][]float64, nv), psuf: make([][][]float64, nv), x: make([]int, nv)}
}

// minorant returns α, β of the linear minorant of FromHops for n nodes.
func minorant(cm model.CostModel, n int) (alpha, beta float64) {
	if n <= 1 {
		return 0, 1
	}
	// v = c·(H − C(n,2)) (lan-code) or 2c·H (lan-paper) is a multiple of
	// q = c or 2c, so v mod n is a multiple of gcd(q, n) and ⌊v/n⌋ ≥
	// (v − n + gcd(q, n))/n: no slack at all when n divides q.
	q := cm.HopCost
	if cm.Kind == model.CostLanPaper {
		q *= 2
	}
	c, fn := float64(cm.HopCost), float64(n)
	slack := (fn - float64(gcd(q, int64(n)))) / fn
	if cm.Kind == model.CostLanPaper {
		return 2 * c / fn, -slack
	}
	return c / fn, -c*fn*(fn-1)/2/fn - slack
}

func gcd(a, b int64) int64 {
	if a < 0 {
		a = -a
	}
	for b != 0 {
		a, b = b, a%b
	}
	return max(a, 1)
}

// phi returns φ(λ, cap) for a job of n nodes (math.Inf when it does not
// fit), through its priced tables on cap, whose children with idle nodes
// kids lists. When trace is set it leaves the minimising placement's leaf
// counts in l.x.
func (l *lagrange) phi(cm model.CostModel, n int, cap []int, kids [][]int, trace bool) float64 {
	if cap[0] < n {
		return math.Inf(1)
	}
	l.tables(cm, n, cap, kids, l.pg, l.psuf)
	_, beta := minorant(cm, n)
	if trace {
		clear(l.x)
		l.trace(0, n, kids)
	}
	return l.pg[0][n] + beta
}

// trace recovers from the tables a placement attaining pg[v][m], as
// shape.trace does from the unpriced ones.
func (l *lagrange) trace(v, m int, kids [][]int) {
	if m == 0 {
		return
	}
	if l.t.IsLeaf(v) {
		l.x[v] = m
		return
	}
	rows, rem := l.psuf[v], m
	for i, c := range kids[v] {
		gc, next := l.pg[c], rows[i+1]
		bestA, best := 0, math.Inf(1)
		for a := 0; a < len(gc) && a <= rem; a++ {
			if x := gc[a] + next[rem-a]; x < best {
				bestA, best = a, x
			}
		}
		l.trace(c, bestA, kids)
		rem -= bestA
	}
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// ascend runs the subgradient method on the leaves' prices for jobs of
// sizes on capacities cap (kids: their children with idle nodes), aiming at
// the upper bound ub, for at most iters iterations or until stop reports
// true; it keeps the best prices found and returns their bound.
func (l *lagrange) ascend(cm model.CostModel, sizes []int, cap []int, kids [][]int, ub float64, iters int, stop func() bool) float64 {
	t := l.t
	nv := t.NumVertices()
	best, bestLam := math.Inf(-1), make([]float64, nv)
	use := make([]int, nv)
	theta, stall := 1.0, 0
	// Jobs of one size have the same φ and the same minimiser.
	ns, mult := group(sizes)
	for it := 0; it < iters && !stop(); it++ {
		clear(use)
		var b float64
		for i, n := range ns {
			if stop() {
				copy(l.lam, bestLam)
				return best
			}
			b += float64(mult[i]) * l.phi(cm, n, cap, kids, true)
			for v, k := range l.x {
				use[v] += mult[i] * k
			}
		}
		for v, lam := range l.lam {
			b -= lam * float64(cap[v])
		}
		if b > best {
			best = b
			copy(bestLam, l.lam)
			stall = 0
		} else if stall++; stall >= 10 {
			theta /= 2
			stall = 0
		}
		if best >= ub-1e-9 || theta < 1e-4 {
			break
		}
		var norm float64
		for v := range use {
			if t.IsLeaf(v) {
				d := float64(use[v] - cap[v])
				if d < 0 && l.lam[v] == 0 {
					d = 0 // a free leaf with spare room has no slope
				}
				norm += d * d
			}
		}
		if norm == 0 {
			break // the relaxation's placements fit: b is the optimum of the minorant
		}
		step := theta * (ub - b) / norm
		for v := range use {
			if t.IsLeaf(v) {
				l.lam[v] = max(0, l.lam[v]+step*float64(use[v]-cap[v]))
			}
		}
	}
	copy(l.lam, bestLam)
	return best
}

// ops estimates the (min,+) steps of one bound call for jobs of sizes on
// cap: the branch and bound uses the prices only where that is cheap.
func (l *lagrange) ops(sizes []int, cap []int) int {
	t, ops := l.t, 0
	for _, n := range sizes {
		for v := range cap {
			if cap[v] == 0 || t.IsLeaf(v) {
				continue
			}
			in := 0
			for _, c := range t.Children[v] {
				in += min(n, cap[c])
			}
			ops += min(n, cap[v]) * in
		}
	}
	return ops
}

// group returns the distinct sizes of sizes and how many jobs have each.
func group(sizes []int) (ns, mult []int) {
	at := make(map[int]int, len(sizes))
	for _, n := range sizes {
		i, ok := at[n]
		if !ok {
			i = len(ns)
			at[n] = i
			ns = append(ns, n)
			mult = append(mult, 0)
		}
		mult[i]++
	}
	return ns, mult
}

// tables fills, for a job of n nodes on cap, the priced tables that the
// branch and bound bounds its placements with: pg[v][m] is the least
// α·(H part) + Σ λ_ℓ·x_ℓ of m of its nodes under v (the H part as in the
// shape's tables), and psuf[v][i][m] the least Σ pg over the children
// kids[v][i], … holding m nodes. The slices are reused when large enough.
func (l *lagrange) tables(cm model.CostModel, n int, cap []int, kids [][]int, pg [][]float64, psuf [][][]float64) {
	t := l.t
	alpha, _ := minorant(cm, n)
	inf := math.Inf(1)
	for v := t.NumVertices() - 1; v >= 0; v-- {
		if cap[v] == 0 {
			pg[v] = pg[v][:0]
			continue
		}
		hi := min(n, cap[v])
		g := grow(pg[v], hi+1)
		if t.IsLeaf(v) {
			for m := 0; m <= hi; m++ {
				g[m] = alpha*float64(int64(n-1)*int64(t.Depth[v])*int64(m)-2*pairs(m)) + l.lam[v]*float64(m)
			}
			pg[v] = g
			continue
		}
		ks := kids[v]
		if cap := len(ks) + 1; len(psuf[v]) < cap {
			psuf[v] = append(psuf[v], make([][]float64, cap-len(psuf[v]))...)
		}
		rows := psuf[v][:len(ks)+1]
		last := grow(rows[len(ks)], hi+1)
		last[0] = 0
		for m := 1; m <= hi; m++ {
			last[m] = inf
		}
		rows[len(ks)] = last
		for i := len(ks) - 1; i >= 0; i-- {
			gc, next := pg[ks[i]], rows[i+1]
			row := grow(rows[i], hi+1)
			for m := 0; m <= hi; m++ {
				best := inf
				for a := 0; a < len(gc) && a <= m; a++ {
					if x := gc[a] + next[m-a]; x < best {
						best = x
					}
				}
				row[m] = best
			}
			rows[i] = row
		}
		psuf[v] = rows
		for m := 0; m <= hi; m++ {
			g[m] = rows[0][m]
			if t.Counted[v] && m >= 2 {
				g[m] -= alpha * 2 * float64(pairs(m))
			}
		}
		pg[v] = g
	}
}
