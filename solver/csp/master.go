package csp

import (
	"cmp"
	"math"
	"slices"
)

// master is colgen's restricted master LP
//
//	min c·μ  s.t.  A μ = b,  μ ≥ 0
//
// with one row per size (b_s = ε_s) and the convexity row (b = 1), solved
// by a revised primal simplex that keeps the basis inverse explicitly: the
// master has a few dozen rows, so a dense m×m inverse is cheap and adding
// a column keeps the current basis primal feasible (the next solve goes on
// from it). It starts from an artificial basis. The size rows' artificials
// (one each way) cost λ_s ± h_s, which boxes the duals around the
// Lagrangian multipliers colgen starts from; the box widens while it binds
// and is dropped in the end, so that the master's final value is the
// unstabilised one. The convexity row's artificial costs bigM. Dantzig's
// rule, switching to Bland's after a run of degenerate pivots; the inverse
// is recomputed from the basis every refactorEvery pivots.
type master struct {
	m      int
	b      []float64
	cols   [][]float64 // column vectors, length m; the first m are artificial
	cost   []float64
	starts [][][]int // packing of each column (nil for artificials)
	basis  []int     // basic column of each row
	inB    []bool
	binv   []float64 // m×m, row-major
	x      []float64 // values of the basic variables
	pi     []float64
	since  int // pivots since the last refactorisation
	tmp    []float64
	nart   int // artificial columns, first in cols
	next   int // where partial pricing starts
	bigM   float64
	width  float64 // dual box half-width, relative to |λ|
	center []float64
}

const refactorEvery = 64

func newMaster(st *search, lambda []float64) *master {
	// bigM: more than any packing with ε_s blocks of each size can cost.
	var top float64
	for s, e := range st.eps {
		mx := int64(0)
		for _, c := range st.g.Cost[s] {
			mx = max(mx, c)
		}
		top += float64(mx) * float64(e+1)
	}
	return newMasterFor(st.eps, top, lambda)
}

// newMasterFor returns the master of counts eps whose packings cost at
// most top, its dual box centred on lambda.
func newMasterFor(eps []int, top float64, lambda []float64) *master {
	D := len(eps)
	m := D + 1
	ms := &master{m: m, b: make([]float64, m), basis: make([]int, m), binv: make([]float64, m*m),
		x: make([]float64, m), pi: make([]float64, m), tmp: make([]float64, m), nart: 2*D + 1}
	for s, e := range eps {
		ms.b[s] = float64(e)
	}
	ms.b[D] = 1
	ms.bigM = 100 * (top + 1)
	// Artificials: +e_s and −e_s for every size row (the dual box), then
	// +e for the convexity row. The +e columns form the first basis.
	for i := range 2*D + 1 {
		col := make([]float64, m)
		switch {
		case i < D:
			col[i] = 1
		case i < 2*D:
			col[i-D] = -1
		default:
			col[D] = 1
		}
		ms.cols = append(ms.cols, col)
		ms.cost = append(ms.cost, ms.bigM)
		ms.starts = append(ms.starts, nil)
		ms.inB = append(ms.inB, false)
	}
	for r := range m {
		j := r
		if r == D {
			j = 2 * D
		}
		ms.basis[r], ms.inB[j] = j, true
		ms.binv[r*m+r] = 1
		ms.x[r] = ms.b[r]
	}
	ms.box(lambda, 0.1)
	return ms
}

// box sets the dual box of the size rows to [λ_s − h_s, λ_s + h_s], with
// h_s = width·|λ_s| + 1, through the costs of their artificial columns
// (du Merle et al.'s stabilisation: the duals stay near λ while the
// master has few columns). The convexity row's artificial keeps bigM.
func (ms *master) box(lambda []float64, width float64) {
	D := ms.m - 1
	ms.width = width
	ms.center = slices.Clone(lambda)
	for s, l := range lambda {
		h := width*math.Abs(l) + 1
		ms.cost[s] = l + h
		ms.cost[D+s] = -(l - h)
	}
}

// widen doubles the dual box around the same centre; once it is wider
// than the costs themselves it is dropped (artificials cost bigM).
func (ms *master) widen() {
	if ms.width >= 8 {
		for j := range ms.nart - 1 {
			ms.cost[j] = ms.bigM
		}
		ms.width = math.Inf(1)
		return
	}
	ms.box(ms.center, 2*ms.width)
}

// add appends a packing's column: its counts per size, 1 in the convexity
// row, and its cost.
func (ms *master) add(starts [][]int, counts []int, cost float64) {
	col := make([]float64, ms.m)
	for s, n := range counts {
		col[s] = float64(n)
	}
	col[ms.m-1] = 1
	cp := make([][]int, len(starts))
	for s := range starts {
		cp[s] = slices.Clone(starts[s])
	}
	ms.cols = append(ms.cols, col)
	ms.cost = append(ms.cost, cost)
	ms.starts = append(ms.starts, cp)
	ms.inB = append(ms.inB, false)
}

// duals sets pi = c_B B⁻¹.
func (ms *master) duals() {
	m := ms.m
	clear(ms.pi)
	for r, j := range ms.basis {
		c := ms.cost[j]
		row := ms.binv[r*m : (r+1)*m]
		for i, v := range row {
			ms.pi[i] += c * v
		}
	}
}

// solve optimises the master from the current basis and returns the
// duals of the size rows, the dual of the convexity row and the optimal
// value.
func (ms *master) solve() (pi []float64, pi0, z float64) {
	m := ms.m
	degenerate := 0
	for iter := 0; iter < 50*len(ms.cols)+1000; iter++ {
		ms.duals()
		// Partial pricing: scan the columns in sections of 64 from a
		// rotating start, and take the best column of the first section
		// that has one (all sections when none has: the optimality test).
		enter, best := -1, 0.0
		n := len(ms.cols)
		for k := range n {
			if k%64 == 0 && enter >= 0 {
				break
			}
			j := (ms.next + k) % n
			col := ms.cols[j]
			if ms.inB[j] {
				continue
			}
			rc := ms.cost[j]
			for i, a := range col {
				if a != 0 {
					rc -= ms.pi[i] * a
				}
			}
			if rc >= -1e-9*max(1, math.Abs(ms.cost[j])) {
				continue
			}
			if degenerate > 2*m { // Bland: the first improving column
				enter = j
				break
			}
			if rc < best {
				enter, best = j, rc
			}
		}
		if enter < 0 {
			break
		}
		ms.next = (enter + 1) % n
		d := ms.tmp
		for r := range m {
			row := ms.binv[r*m : (r+1)*m]
			v := 0.0
			for i, a := range ms.cols[enter] {
				if a != 0 {
					v += row[i] * a
				}
			}
			d[r] = v
		}
		leave, ratio := -1, math.Inf(1)
		for r := range m {
			if d[r] <= 1e-9 {
				continue
			}
			q := ms.x[r] / d[r]
			if q < ratio-1e-12 || (q <= ratio+1e-12 && leave >= 0 && ms.basis[r] < ms.basis[leave]) {
				leave, ratio = r, q
			}
		}
		if leave < 0 {
			break // unbounded: cannot happen with the convexity row
		}
		if ratio <= 1e-12 {
			degenerate++
		} else {
			degenerate = 0
		}
		ms.pivot(enter, leave, d, ratio)
	}
	ms.duals()
	for r, j := range ms.basis {
		z += ms.cost[j] * ms.x[r]
	}
	return ms.pi[:m-1], ms.pi[m-1], z
}

// pivot brings column enter into the basis in place of row leave's
// variable; d = B⁻¹·a_enter.
func (ms *master) pivot(enter, leave int, d []float64, theta float64) {
	m := ms.m
	for r := range m {
		if r != leave {
			ms.x[r] = max(0, ms.x[r]-theta*d[r])
		}
	}
	ms.x[leave] = theta
	lr := ms.binv[leave*m : (leave+1)*m]
	p := d[leave]
	for i := range lr {
		lr[i] /= p
	}
	for r := range m {
		if r == leave || d[r] == 0 {
			continue
		}
		row, f := ms.binv[r*m:(r+1)*m], d[r]
		for i, v := range lr {
			row[i] -= f * v
		}
	}
	ms.inB[ms.basis[leave]] = false
	ms.inB[enter] = true
	ms.basis[leave] = enter
	if ms.since++; ms.since >= refactorEvery {
		ms.refactor()
	}
}

// refactor recomputes B⁻¹ from the basic columns by Gauss–Jordan
// elimination with partial pivoting, and x = B⁻¹ b. A numerically
// singular basis keeps the updated inverse.
func (ms *master) refactor() {
	m := ms.m
	ms.since = 0
	a := make([]float64, m*m) // B, row-major
	for r, j := range ms.basis {
		for i, v := range ms.cols[j] {
			a[i*m+r] = v
		}
	}
	inv := make([]float64, m*m)
	for i := range m {
		inv[i*m+i] = 1
	}
	for c := range m {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(a[r*m+c]) > math.Abs(a[p*m+c]) {
				p = r
			}
		}
		if math.Abs(a[p*m+c]) < 1e-12 {
			return
		}
		if p != c {
			for i := range m {
				a[p*m+i], a[c*m+i] = a[c*m+i], a[p*m+i]
				inv[p*m+i], inv[c*m+i] = inv[c*m+i], inv[p*m+i]
			}
		}
		f := a[c*m+c]
		for i := range m {
			a[c*m+i] /= f
			inv[c*m+i] /= f
		}
		for r := range m {
			if r == c || a[r*m+c] == 0 {
				continue
			}
			g := a[r*m+c]
			for i := range m {
				a[r*m+i] -= g * a[c*m+i]
				inv[r*m+i] -= g * inv[c*m+i]
			}
		}
	}
	copy(ms.binv, inv)
	for r := range m {
		v := 0.0
		for i, bi := range ms.b {
			v += inv[r*m+i] * bi
		}
		ms.x[r] = max(0, v)
	}
}

// artificial reports whether an artificial variable is basic at a
// positive value (the master is not yet feasible without them).
func (ms *master) artificial() bool {
	for r, j := range ms.basis {
		if j < ms.nart && ms.x[r] > 1e-9 {
			return true
		}
	}
	return false
}

// heaviest returns a copy of the packing with the largest weight in the
// master's solution, or an empty packing.
func (ms *master) heaviest() [][]int {
	bj, bx := -1, 0.0
	for r, j := range ms.basis {
		if j >= ms.nart && ms.x[r] > bx {
			bj, bx = j, ms.x[r]
		}
	}
	out := make([][]int, ms.m-1)
	if bj >= 0 {
		for s := range out {
			out[s] = slices.Clone(ms.starts[bj][s])
		}
	}
	return out
}

// purge drops the non-basic packings with the largest reduced costs at
// the current duals, keeping keep of them (and every basic and artificial
// column): pricing the master's columns at every pivot is most of its
// cost, and columns far from pricing out rarely come back.
func (ms *master) purge(keep int) {
	ms.duals()
	type cand struct {
		j  int
		rc float64
	}
	var cs []cand
	for j := ms.nart; j < len(ms.cols); j++ {
		if ms.inB[j] {
			continue
		}
		rc := ms.cost[j]
		for i, a := range ms.cols[j] {
			rc -= ms.pi[i] * a
		}
		cs = append(cs, cand{j, rc})
	}
	if len(cs) <= keep {
		return
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.rc, b.rc), a.j-b.j) })
	drop := make([]bool, len(ms.cols))
	for _, c := range cs[keep:] {
		drop[c.j] = true
	}
	at := make([]int, len(ms.cols))
	n := 0
	for j := range ms.cols {
		if drop[j] {
			continue
		}
		at[j] = n
		ms.cols[n], ms.cost[n], ms.starts[n], ms.inB[n] = ms.cols[j], ms.cost[j], ms.starts[j], ms.inB[j]
		n++
	}
	ms.cols, ms.cost, ms.starts, ms.inB = ms.cols[:n], ms.cost[:n], ms.starts[:n], ms.inB[:n]
	for r, j := range ms.basis {
		ms.basis[r] = at[j]
	}
}
