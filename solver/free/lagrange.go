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
	// g[v] is the priced table of the vertex being merged; buf holds the
	// rows, reused between calls.
	g   [][]float64
	row []float64
	// x receives a traced placement (per-leaf counts) for subgradients.
	x []int
	// arena backs trace's tables, reset at every trace.
	arena   []float64
	kidsBuf []int
}

// alloc returns n floats from the arena.
func (l *lagrange) alloc(n int) []float64 {
	if len(l.arena)+n > cap(l.arena) {
		l.arena = make([]float64, 0, max(2*cap(l.arena), len(l.arena)+n, 1024))
	}
	s := l.arena[len(l.arena) : len(l.arena)+n]
	l.arena = l.arena[:len(l.arena)+n]
	return s
}

func newLagrange(t *dcas.Tree) *lagrange {
	nv := t.NumVertices()
	return &lagrange{t: t, lam: make([]float64, nv), g: make([][]float64, nv), x: make([]int, nv)}
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
// fit). When trace is set it leaves the minimising placement's leaf
// counts in l.x.
func (l *lagrange) phi(cm model.CostModel, n int, cap []int, trace bool) float64 {
	t := l.t
	if cap[0] < n {
		return math.Inf(1)
	}
	alpha, beta := minorant(cm, n)
	for v := t.NumVertices() - 1; v >= 0; v-- {
		if cap[v] == 0 {
			l.g[v] = l.g[v][:0]
			continue
		}
		hi := min(n, cap[v])
		g := grow(l.g[v], hi+1)
		if t.IsLeaf(v) {
			for m := 0; m <= hi; m++ {
				g[m] = alpha*float64(int64(n-1)*int64(t.Depth[v])*int64(m)-2*pairs(m)) + l.lam[v]*float64(m)
			}
			l.g[v] = g
			continue
		}
		g[0] = 0
		for m := 1; m <= hi; m++ {
			g[m] = math.Inf(1)
		}
		top := 0 // the largest m reachable so far
		for _, c := range t.Children[v] {
			gc := l.g[c]
			if len(gc) == 0 {
				continue
			}
			row := grow(l.row, hi+1)
			copy(row, g)
			for m := top; m >= 0; m-- {
				if math.IsInf(g[m], 1) {
					continue
				}
				for a := 1; a < len(gc) && m+a <= hi; a++ {
					if s := g[m] + gc[a]; s < row[m+a] {
						row[m+a] = s
					}
				}
			}
			copy(g, row)
			l.row = row
			top = min(hi, top+len(gc)-1)
		}
		if t.Counted[v] {
			for m := 2; m <= hi; m++ {
				g[m] -= alpha * 2 * float64(pairs(m))
			}
		}
		l.g[v] = g
	}
	v := l.g[0][n] + beta
	if trace {
		clear(l.x)
		l.arena = l.arena[:0]
		l.trace(cm, n, 0, n, alpha)
	}
	return v
}

// trace recovers a placement attaining l.g[v][m] by recomputing the
// children's split (the merged rows are not kept).
func (l *lagrange) trace(cm model.CostModel, n, v, m int, alpha float64) {
	t := l.t
	if m == 0 {
		return
	}
	if t.IsLeaf(v) {
		l.x[v] = m
		return
	}
	from := len(l.kidsBuf)
	for _, c := range t.Children[v] {
		if len(l.g[c]) > 0 {
			l.kidsBuf = append(l.kidsBuf, c)
		}
	}
	kids := l.kidsBuf[from:len(l.kidsBuf):len(l.kidsBuf)]
	defer func() { l.kidsBuf = l.kidsBuf[:from] }()
	// suffix[i][r]: least Σ g over kids i.. holding r nodes.
	suffix := make([][]float64, len(kids)+1)
	suffix[len(kids)] = l.alloc(m + 1)
	suffix[len(kids)][0] = 0 // the arena is not zeroed
	for r := 1; r <= m; r++ {
		suffix[len(kids)][r] = math.Inf(1)
	}
	for i := len(kids) - 1; i >= 0; i-- {
		gc, next := l.g[kids[i]], suffix[i+1]
		s := l.alloc(m + 1)
		for r := range s {
			s[r] = math.Inf(1)
			for a := 0; a < len(gc) && a <= r; a++ {
				if x := gc[a] + next[r-a]; x < s[r] {
					s[r] = x
				}
			}
		}
		suffix[i] = s
	}
	rem := m
	for i, c := range kids {
		gc, next := l.g[c], suffix[i+1]
		bestA, best := 0, math.Inf(1)
		for a := 0; a < len(gc) && a <= rem; a++ {
			if x := gc[a] + next[rem-a]; x < best {
				bestA, best = a, x
			}
		}
		l.trace(cm, n, c, bestA, alpha)
		rem -= bestA
	}
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// bound returns Σ_{j in sizes} φ_j(λ, cap) − Σ_ℓ λ_ℓ·cap_ℓ.
func (l *lagrange) bound(cm model.CostModel, sizes []int, cap []int) float64 {
	var b float64
	ns, mult := group(sizes)
	for i, n := range ns {
		b += float64(mult[i]) * l.phi(cm, n, cap, false)
		if math.IsInf(b, 1) {
			return b
		}
	}
	for v, lam := range l.lam {
		b -= lam * float64(cap[v])
	}
	return b
}

// ascend runs the subgradient method on the leaves' prices for jobs of
// sizes on capacities cap, aiming at the upper bound ub, for at most iters
// iterations or until stop reports true; it keeps the best prices found
// and returns their bound.
func (l *lagrange) ascend(cm model.CostModel, sizes []int, cap []int, ub float64, iters int, stop func() bool) float64 {
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
			b += float64(mult[i]) * l.phi(cm, n, cap, true)
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
