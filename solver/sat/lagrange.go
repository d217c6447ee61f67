package sat

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/solver"
)

// timeIndexed is the time-indexed relaxation of m over given start
// candidates C_i, a linear program with a unit variable per node:
//
//	x_{i,s} ≥ 0 (s ∈ C_i), Σ_s x_{i,s} = 1              job i starts at s
//	0 ≤ y_{i,s,o} ≤ min(UnitsAt_o(s), u_i)·x_{i,s}        its units on option o
//	Σ_o y_{i,s,o} = u_i·x_{i,s}
//	Σ_{i,s: s ≤ τ < s+D_i} Σ_{o on n} a_{i,o,l}·y_{i,s,o} ≤ free_{n,l}(τ)
//	    for every node n, resource l and check time τ ∈ T = ∪_i C_i
//	minimise Σ_{i,s} ω_i·(s − EST_i)·x_{i,s}
//
// with a_{i,o,l} = r_{i,l} raised by coefficient strengthening where a
// unit of job i leaves no room for what else could use n (strengthener;
// it then depends on τ through what the running jobs leave), or for an
// exclusive job (which holds the whole node: no running job may be on
// it, and nothing else joins) cap_{n,l}/min(MaxUnits_o, u_i), and
// free_{n,l}(τ) what the running jobs leave of n at τ (nothing under an
// exclusive one). Every schedule
// of m with its starts in C_i is a 0-1 point of it (a unit needs
// UnitsAt beside the running jobs; the capacity rows hold at every time,
// here at the starts only; reservations enter through UnitsAt, pack
// through the count alone), so its optimum bounds Σ ω_i·(s_i − EST_i)
// from below. Unlike the counting relaxation (cp.Model.Pool) a unit stays
// on one node for the job's whole run, which bounds the windows whose
// delays come from nodes freed at different times; unlike the group
// bounds every job competes with every other.
//
// It is solved by Lagrangian relaxation of the capacity rows (method bound):
// for multipliers λ ≥ 0 each job alone picks the start and the cheapest
// units, and L(λ) = Σ_i min_s (ω_i(s − EST_i) + Σ_o y_o·price_{i,o}(s))
// − Σ λ·free ≤ LP optimum for every λ ≥ 0 (weak duality), so every
// iterate's value is a valid bound whether or not the subgradient
// method has converged.
type timeIndexed struct {
	m     *cp.Model
	cands [][]int // C_i, ascending
	times []int   // T, ascending
	// span[i][c] = [a, b): the check times T[a:b] job i covers when it
	// starts at cands[i][c].
	span [][][2]int
	// room[i][c][o]: min(UnitsAt_o(cands[i][c]), u_i).
	room [][][]int
	// use[i][o][g][l]: a_{i,o,l} over node segment g of the option's
	// node (see segs), strengthened (see strengthen).
	use [][][][]float64
	// segs[n] splits the check times into the segments T[segs[n][g]:
	// segs[n][g+1]] over which what the running jobs leave of node n is
	// the same (segs[n][0] = 0, the last entry len(T)): they start where
	// a running job ends.
	segs [][]int
	// free[n][l][k]: free_{n,l}(T[k]).
	free [][][]float64
	// rows are the node-resource pairs (n, l) whose capacity some
	// choice of the jobs can exceed at some check time; the others'
	// multipliers stay 0 (their best value).
	rows [][2]int
	// exhaustive turns off the pruning of start candidates whose delay
	// alone settles them (for the tests and the benchmark baseline).
	exhaustive bool
}

// newTimeIndexed builds the relaxation of m with start candidates cands
// (each ascending and within the job's domain).
func newTimeIndexed(m *cp.Model, cands [][]int) *timeIndexed {
	t := &timeIndexed{m: m, cands: cands}
	for _, c := range cands {
		t.times = append(t.times, c...)
	}
	slices.Sort(t.times)
	t.times = slices.Compact(t.times)
	index := func(s int) int { k, _ := slices.BinarySearch(t.times, s); return k }
	nl := len(m.Resources)
	t.span = make([][][2]int, len(m.Jobs))
	t.room = make([][][]int, len(m.Jobs))
	t.use = make([][][][]float64, len(m.Jobs))
	for i, j := range m.Jobs {
		t.span[i] = make([][2]int, len(cands[i]))
		t.room[i] = make([][]int, len(cands[i]))
		for c, s := range cands[i] {
			t.span[i][c] = [2]int{index(s), index(s + j.Dur)}
			t.room[i][c] = make([]int, len(j.Options))
			for o := range j.Options {
				t.room[i][c][o] = min(j.Options[o].UnitsAt(s), j.Units)
			}
		}
		t.use[i] = make([][][]float64, len(j.Options))
	}
	t.free = make([][][]float64, len(m.Nodes))
	t.segs = make([][]int, len(m.Nodes))
	onNode := make([][]int, len(m.Nodes)) // the jobs with an option on n
	for i, j := range m.Jobs {
		for _, opt := range j.Options {
			onNode[opt.Node] = append(onNode[opt.Node], i)
		}
	}
	var st strengthener
	for n, nd := range m.Nodes {
		t.free[n] = make([][]float64, nl)
		for l := range nl {
			t.free[n][l] = make([]float64, len(t.times))
		}
		// What the running jobs leave changes only where one of them
		// ends: the segments start there.
		if len(t.times) > 0 {
			t.segs[n] = append(t.segs[n], 0)
		}
		for _, r := range nd.Running {
			if k := index(r.EndSlot); k > 0 && k < len(t.times) {
				t.segs[n] = append(t.segs[n], k)
			}
		}
		slices.Sort(t.segs[n])
		t.segs[n] = append(slices.Compact(t.segs[n]), len(t.times))
		for g := 0; g+1 < len(t.segs[n]); g++ {
			ka, kb := t.segs[n][g], t.segs[n][g+1]
			f := freeAt(nd, t.times[ka])
			for l, c := range nd.Cap {
				if c > 0 {
					for k := ka; k < kb; k++ {
						t.free[n][l][k] = float64(f[l]) / float64(c)
					}
				}
			}
			// The coefficients of the jobs on n over the segment.
			coef := st.strengthen(m, onNode[n], f)
			for _, i := range onNode[n] {
				j := m.Jobs[i]
				for o, opt := range j.Options {
					if opt.Node != n {
						continue
					}
					a := make([]float64, nl)
					for l, c := range nd.Cap {
						switch {
						case c == 0:
						case j.Excl:
							a[l] = 1 / float64(min(opt.MaxUnits, j.Units))
						default:
							a[l] = float64(coef[i][l]) / float64(c)
						}
					}
					t.use[i][o] = append(t.use[i][o], a)
				}
			}
		}
	}
	// The rows: the units' most use at each check time against free.
	demand := make([][][]float64, len(m.Nodes))
	for i, j := range m.Jobs {
		if len(t.cands[i]) == 0 {
			continue
		}
		a, b := t.span[i][0][0], t.span[i][len(t.cands[i])-1][1]
		for o, opt := range j.Options {
			most := 0
			for c := range t.cands[i] {
				most = max(most, t.room[i][c][o])
			}
			if most == 0 {
				continue
			}
			t.each(opt.Node, a, b, func(g, ka, kb int) {
				for l, u := range t.use[i][o][g] {
					if u == 0 {
						continue
					}
					if demand[opt.Node] == nil {
						demand[opt.Node] = make([][]float64, nl)
					}
					d := demand[opt.Node]
					if d[l] == nil {
						d[l] = make([]float64, len(t.times))
					}
					for k := ka; k < kb; k++ {
						d[l][k] += float64(most) * u
					}
				}
			})
		}
	}
	for n, d := range demand {
		for l, dl := range d {
			for k, v := range dl {
				if v > t.free[n][l][k]+1e-9 {
					t.rows = append(t.rows, [2]int{n, l})
					break
				}
			}
		}
	}
	return t
}

// each calls fn(g, ka, kb) for every segment g of node n that meets the
// check times T[a:b], with T[ka:kb] their common part.
func (t *timeIndexed) each(n, a, b int, fn func(g, ka, kb int)) {
	segs := t.segs[n]
	for g := 0; g+1 < len(segs) && segs[g] < b; g++ {
		if ka, kb := max(a, segs[g]), min(b, segs[g+1]); ka < kb {
			fn(g, ka, kb)
		}
	}
}

// freeAt returns what the running jobs leave of node nd at slot tau, per
// resource (nothing under an exclusive one).
func freeAt(nd cp.Node, tau int) []int64 {
	f := slices.Clone(nd.Cap)
	for _, r := range nd.Running {
		if tau < r.EndSlot {
			if r.Excl {
				clear(f)
				break
			}
			for l := range f {
				f[l] -= r.Use[l]
			}
		}
	}
	for l := range f {
		f[l] = max(f[l], 0)
	}
	return f
}

// strengthenWork bounds the search of one coefficient (see strengthen);
// past it the coefficient keeps its value, which is always valid.
const strengthenWork = 2000

// A strengthener raises the capacity rows' coefficients (coefficient
// strengthening, as MIP presolvers do, here from the node's other
// resources). On a node with free amounts F, take the row of resource l,
// Σ_j a_j·y_j ≤ F_l, with y_j job j's units on the node and a_j = r_{j,l}
// to start. When at most one unit of job k fits in F (y_k ≤ 1), let M_k be
// the most Σ_{j≠k} a_j·y_j of units that fit in F − r_k beside it (every
// resource counted, the units of each job at most u_j, no exclusive job);
// then Σ_j a'_j·y_j ≤ F_l with a'_k = max(a_k, F_l − M_k) holds for every
// integer point: y_k = 0 leaves the row as it was, y_k = 1 leaves the
// others at most M_k. Done for one k after another, each M_k with the
// coefficients raised so far, every row stays valid. A unit of 8 cores
// and 2 GPUs on a node with 16 cores and 2 GPUs free then counts as the
// node's 16 cores, since no other GPU unit fits beside it, where the LP
// would let two half units of two such jobs share it. On a 7-job window of
// bench cp this raises the time-indexed LP from 106.9 to 124.8 (optimum
// 136; CBC's own preprocessing reaches 128.6).
type strengthener struct {
	others []int
	work   int
}

// strengthen returns coef[i][l], the strengthened a_{i,l} of every job i
// of jobs (each once; non-exclusive ones; exclusive jobs keep their own
// coefficients) on a node with free amounts F; coef[i] is nil for the
// jobs not in jobs.
func (st *strengthener) strengthen(m *cp.Model, jobs []int, F []int64) [][]int64 {
	coef := make([][]int64, len(m.Jobs))
	for _, i := range jobs {
		coef[i] = slices.Clone(m.Jobs[i].Req)
	}
	rest := make([]int64, len(F))
	for _, k := range jobs {
		jk := m.Jobs[k]
		if jk.Excl || min(fitUnits(jk.Req, F), jk.Units) != 1 {
			continue
		}
		st.others = st.others[:0]
		for _, j := range jobs {
			if j != k && !m.Jobs[j].Excl {
				st.others = append(st.others, j)
			}
		}
		for l := range F {
			if jk.Req[l] == 0 {
				continue // (not in the row)
			}
			for q := range rest {
				rest[q] = F[q] - jk.Req[q]
			}
			st.work = 0
			most, ok := st.most(m, coef, l, 0, 0, rest, F[l]-coef[k][l])
			if ok && F[l]-most > coef[k][l] {
				coef[k][l] = F[l] - most
			}
		}
	}
	return coef
}

// most returns the largest Σ coef[j][l]·y_j, from cur on, over the units
// y_j ≤ u_j of the jobs others[d:] that fit in rest, or a value of at
// least stop once it finds one; ok is false past strengthenWork steps.
func (st *strengthener) most(m *cp.Model, coef [][]int64, l, d int, cur int64, rest []int64, stop int64) (int64, bool) {
	if st.work++; st.work > strengthenWork {
		return 0, false
	}
	if d == len(st.others) || cur >= stop {
		return cur, true
	}
	j := m.Jobs[st.others[d]]
	a := coef[st.others[d]][l]
	best := cur
	for y := min(fitUnits(j.Req, rest), j.Units); y >= 0; y-- {
		if y > 0 && a == 0 {
			continue // no gain in this row; y = 0 leaves the most room
		}
		for q := range rest {
			rest[q] -= int64(y) * j.Req[q]
		}
		v, ok := st.most(m, coef, l, d+1, cur+int64(y)*a, rest, stop)
		for q := range rest {
			rest[q] += int64(y) * j.Req[q]
		}
		if !ok {
			return 0, false
		}
		if best = max(best, v); best >= stop {
			break
		}
	}
	return best, true
}

// fitUnits is how many units of requirement req fit in free.
func fitUnits(req, free []int64) int {
	n := math.MaxInt
	for l, r := range req {
		if r > 0 {
			n = min(n, int(free[l]/r))
		}
	}
	return n
}

// prices sets price[o] to the Lagrangian price of one unit of job i on
// option o over the check times its start candidate c covers, from the
// multipliers' prefix sums cum; +Inf where no unit fits.
func (t *timeIndexed) prices(i, c int, cum [][][]float64, price []float64) {
	a, b := t.span[i][c][0], t.span[i][c][1]
	for o, opt := range t.m.Jobs[i].Options {
		if t.room[i][c][o] == 0 {
			price[o] = math.Inf(1)
			continue
		}
		var q float64
		if cn := cum[opt.Node]; cn != nil {
			t.each(opt.Node, a, b, func(g, ka, kb int) {
				for l, u := range t.use[i][o][g] {
					if u != 0 && cn[l] != nil {
						q += u * (cn[l][kb] - cn[l][ka])
					}
				}
			})
		}
		price[o] = q
	}
}

// place returns the least price of job i's units at start candidate c —
// the cheapest options first, each up to its room — and records the
// units per option in units when not nil. It stops early with a value
// of at least limit once the price reaches limit, and returns +Inf when
// the units do not fit.
func (t *timeIndexed) place(i, c int, price []float64, taken []bool, limit float64, units []int) float64 {
	clear(taken)
	if units != nil {
		clear(units)
	}
	var v float64
	for left := t.m.Jobs[i].Units; left > 0 && v < limit; {
		pick := -1
		for o, q := range price {
			if !taken[o] && !math.IsInf(q, 1) && (pick < 0 || q < price[pick]) {
				pick = o
			}
		}
		if pick < 0 {
			return math.Inf(1)
		}
		taken[pick] = true
		k := min(left, t.room[i][c][pick])
		v += float64(k) * price[pick]
		left -= k
		if units != nil {
			units[pick] = k
		}
	}
	return v
}

// stallIters: iterations without a better L(λ) before θ is halved.
const stallIters = 20

// deflect is the Camerini–Fratta–Maffioli factor γ: the step follows
// d = g + β·d_prev with β = γ·max(0, −g·d_prev)/‖d_prev‖², which damps
// the zigzag of plain subgradient steps; d_prev starts again from 0
// whenever θ halves (without it the bound stopped lower on small
// windows: above LB on 215 instead of 244 of TestTimeIndexedBoundBelowBruteForce's
// 480 pairs).
const deflect = 1.5

// choice is one job's answer to its Lagrangian subproblem: the start
// candidate and the units per option.
type choice struct {
	c     int
	units []int
}

// bound runs the subgradient method (Held, Wolfe and Crowder's step
// θ·(ub − L)/‖d‖² along the deflected direction d of Camerini, Fratta
// and Maffioli (see deflect), θ halved after stallIters iterations
// without a better L)
// on the multipliers until ctx ends, iters iterations are done, L
// reaches ub (the incumbent's Σ ω_i (s_i − EST_i): nothing better
// exists) or θ vanishes, and returns the best L(λ) rounded down to a
// bound on the integer optimum: ⌈L − ε⌉ with ε covering the rounding of
// its floating-point sum. ok is false when some job has no start at all
// in the relaxation (no schedule within the candidates).
//
// It also bounds every start by reduced cost: with job i held at
// candidate c, L(λ) − v_i + v_i(c) (v_i its subproblem's least value,
// v_i(c) its least at c) still bounds every schedule within the
// candidates that starts i at c. fixLB[i][c] is the largest such bound,
// rounded as above, over the iterates that raised the best L (see
// fixing).
func (t *timeIndexed) bound(ctx context.Context, ub int64, iters int) (lb int64, fixLB [][]int64, ok bool) {
	m := t.m
	nl, nk := len(m.Resources), len(t.times)
	// λ, its prefix sums and the slack, for t.rows only (nil
	// elsewhere).
	lambda := make([][][]float64, len(m.Nodes))
	slack := make([][][]float64, len(m.Nodes))
	cum := make([][][]float64, len(m.Nodes))
	dir := make([][][]float64, len(m.Nodes)) // the deflected direction
	for _, r := range t.rows {
		n, l := r[0], r[1]
		if lambda[n] == nil {
			lambda[n], slack[n], cum[n] = make([][]float64, nl), make([][]float64, nl), make([][]float64, nl)
		}
		lambda[n][l], slack[n][l], cum[n][l] = make([]float64, nk), make([]float64, nk), make([]float64, nk+1)
		if dir[n] == nil {
			dir[n] = make([][]float64, nl)
		}
		dir[n][l] = make([]float64, nk)
	}
	choices := make([]choice, len(m.Jobs))
	jobVal := make([]float64, len(m.Jobs)) // v_i
	fixLB = make([][]int64, len(m.Jobs))
	for i, j := range m.Jobs {
		choices[i].units = make([]int, len(j.Options))
		fixLB[i] = make([]int64, len(t.cands[i]))
	}
	var price []float64
	var taken []bool
	best, bestMag := math.Inf(-1), 0.0
	theta, stall := 2.0, 0
	freeTerm := 0.0 // Σ λ·free
	for it := 0; it < iters && ctx.Err() == nil; it++ {
		// L(λ) = Σ_i (job i's subproblem) − Σ λ·free; mag bounds the
		// magnitude of its terms for the rounding error.
		// (The multipliers' part, Σ λ·free, and their prefix sums cum
		// came with the last update.)
		val, mag := -freeTerm, freeTerm
		for i, j := range m.Jobs {
			if cap(price) < len(j.Options) {
				price, taken = make([]float64, len(j.Options)), make([]bool, len(j.Options))
			}
			price, taken = price[:len(j.Options)], taken[:len(j.Options)]
			jobBest, jobC := math.Inf(1), -1
			for c, s := range t.cands[i] {
				d := float64(j.Weight) * float64(s-j.EST)
				if d >= jobBest && !t.exhaustive {
					break // prices are never negative, and the candidates ascend
				}
				t.prices(i, c, cum, price)
				v := d + t.place(i, c, price, taken, jobBest, nil)
				if v < jobBest {
					jobBest, jobC = v, c
				}
			}
			if jobC < 0 {
				return 0, nil, false
			}
			jobVal[i] = jobBest
			val += jobBest
			mag += math.Abs(jobBest)
			// The argmin's units, for the subgradient.
			choices[i].c = jobC
			t.prices(i, jobC, cum, price)
			t.place(i, jobC, price, taken, math.Inf(1), choices[i].units)
		}
		if val > best {
			best, bestMag, stall = val, mag, 0
			t.fix(val, mag, jobVal, cum, ub, fixLB)
		} else if stall++; stall >= stallIters {
			theta, stall = theta/2, 0
			for _, r := range t.rows {
				clear(dir[r[0]][r[1]])
			}
		}
		if best >= float64(ub) || theta < 1e-4 {
			break
		}
		// The slack free − usage of the subproblems' answer (minus a
		// subgradient of L), projected: rows at λ = 0 with slack stay.
		t.slack(slack, choices)
		var norm, dot, dnorm float64
		for _, r := range t.rows {
			n, l := r[0], r[1]
			for k, g := range slack[n][l] {
				if g > 0 && lambda[n][l][k] == 0 {
					slack[n][l][k] = 0
					continue
				}
				norm += g * g
				dot += g * dir[n][l][k]
				dnorm += dir[n][l][k] * dir[n][l][k]
			}
		}
		if norm == 0 {
			break // no row violated and none to relax: λ cannot move
		}
		beta := 0.0
		if dot < 0 && dnorm > 0 {
			beta = -deflect * dot / dnorm
		}
		norm = 0
		for _, r := range t.rows {
			n, l := r[0], r[1]
			d := dir[n][l]
			for k, g := range slack[n][l] {
				d[k] = g + beta*d[k]
				norm += d[k] * d[k]
			}
		}
		step := theta * max(float64(ub)-val, 1) / norm
		freeTerm = 0
		for _, r := range t.rows {
			n, l := r[0], r[1]
			lam, c, free := lambda[n][l], cum[n][l], t.free[n][l]
			for k, g := range dir[n][l] {
				v := max(0, lam[k]-step*g)
				lam[k] = v
				freeTerm += v * free[k]
				c[k+1] = c[k] + v // c[k] = Σ_{k' < k} λ_{n,l,T[k']}
			}
		}
	}
	if math.IsInf(best, -1) {
		return 0, fixLB, true
	}
	return int64(math.Ceil(best - 1e-9*bestMag - 1e-6)), fixLB, true
}

// slack sets slack to free − usage of the subproblems' answer choices on
// t.rows (minus a subgradient of L).
func (t *timeIndexed) slack(slack [][][]float64, choices []choice) {
	for _, r := range t.rows {
		copy(slack[r[0]][r[1]], t.free[r[0]][r[1]])
	}
	for i, j := range t.m.Jobs {
		ch := choices[i]
		a, b := t.span[i][ch.c][0], t.span[i][ch.c][1]
		for o, u := range ch.units {
			if u == 0 {
				continue
			}
			n := j.Options[o].Node
			if slack[n] == nil {
				continue
			}
			t.each(n, a, b, func(sg, ka, kb int) {
				for l, g := range slack[n] {
					if x := t.use[i][o][sg][l] * float64(u); x != 0 && g != nil {
						for k := ka; k < kb; k++ {
							g[k] -= x
						}
					}
				}
			})
		}
	}
}

// fix raises fixLB[i][c] to the iterate's bound with job i held at
// candidate c, ⌈L − v_i + v_i(c) − ε⌉ for the iterate's L = val (terms
// of magnitude at most mag) and v_i = jobVal[i] (see bound); where
// L − v_i plus the delay of c alone reaches ub, to that (prices are
// never negative, and any bound from ub up rules the start out).
func (t *timeIndexed) fix(val, mag float64, jobVal []float64, cum [][][]float64, ub int64, fixLB [][]int64) {
	var price []float64
	var taken []bool
	for i, j := range t.m.Jobs {
		if cap(price) < len(j.Options) {
			price, taken = make([]float64, len(j.Options)), make([]bool, len(j.Options))
		}
		price, taken = price[:len(j.Options)], taken[:len(j.Options)]
		rest := val - jobVal[i]
		for c, s := range t.cands[i] {
			v := float64(j.Weight) * float64(s-j.EST)
			if rest+v < float64(ub) || t.exhaustive {
				// (Past ub the delay alone bounds it high enough: no
				// schedule better than the incumbent starts i there.)
				t.prices(i, c, cum, price)
				v += t.place(i, c, price, taken, math.Inf(1), nil)
			}
			if math.IsInf(v, 1) {
				fixLB[i][c] = math.MaxInt64 // no room at c: no schedule starts i there
				continue
			}
			fixLB[i][c] = max(fixLB[i][c], int64(math.Ceil(rest+v-1e-9*(mag+math.Abs(v))-1e-6)))
		}
	}
}

// fixing is the time-indexed relaxation's reduced-cost fixing: lb[i][c]
// bounds Σ ω_k (s_k − EST_k) of every schedule within the relaxation's
// candidates that starts job i at cands[i][c]. Since those candidates
// hold every left-justified schedule no worse than the incumbent the
// relaxation saw (tiCandidates), a search for a schedule with that sum
// at most b below it may leave out every start whose bound exceeds b:
// some such schedule, if any, is left-justified and starts no job there.
type fixing struct {
	cands [][]int
	lb    [][]int64
}

// at returns the bound for job i starting at slot t: 0 (nothing known)
// when t is not one of the relaxation's candidates.
func (f *fixing) at(i, t int) int64 {
	if k, ok := slices.BinarySearch(f.cands[i], t); ok {
		return f.lb[i][k]
	}
	return 0
}

// over returns per job the slots of starts[i] whose bound exceeds b,
// and how many there are.
func (f *fixing) over(starts func(i int) []int, b int64) ([][]int, int) {
	out, n := make([][]int, len(f.cands)), 0
	for i := range f.cands {
		for _, t := range starts(i) {
			if f.at(i, t) > b {
				out[i] = append(out[i], t)
				n++
			}
		}
	}
	return out, n
}

// timeIndexedBound returns the time-indexed relaxation's Lagrangian
// bound on optimum − LowerBound(m) (0 when it is too large to take on)
// and its reduced-cost fixing (nil when it did not run; see
// timeIndexed.bound), over tiCandidates's starts for the incumbent best
// (the bound is best's own when the fixing leaves some job no start);
// stats gets their number (ti_candidates) and how many the incumbent
// rules out (ti_fixed).
func (s Solver) timeIndexedBound(ctx context.Context, m *cp.Model, best *incumbent, st *solver.SATStats) (int64, *fixing, error) {
	cands, err := s.tiCandidates(m, best.w)
	if err != nil || cands == nil {
		return 0, nil, err
	}
	u := best.w - LowerBound(m)
	b, lb, ok := newTimeIndexed(m, cands).bound(ctx, u, tiIters)
	if !ok {
		// Cannot happen (an optimal schedule lies within the starts);
		// no bound rather than a wrong one.
		return 0, nil, nil
	}
	f := &fixing{cands: cands, lb: lb}
	dead, n := f.over(func(i int) []int { return cands[i] }, u-1)
	for i, c := range cands {
		st.TICandidates += len(c)
		if len(dead[i]) == len(c) {
			b = u // job i has no start in a schedule better than best
		}
	}
	st.TIFixed += n
	return b, f, nil
}

// tiCandidates returns the time-indexed relaxation's start candidates
// for an incumbent of weighted queue time w, those of the search
// (cnf.Closure within Domains(m, w), or the grid with Solver.Grid or when
// the closure is over its work limit): they hold every left-justified
// schedule no worse than w, so if a schedule better than w exists one
// of them is optimal. nil when there are more than tiMaxStarts.
func (s Solver) tiCandidates(m *cp.Model, w int64) ([][]int, error) {
	lo, hi := Domains(m, w)
	var cands [][]int
	if !s.Grid {
		c, err := cnf.Closure(m, lo, hi, nil, closureWork)
		if err != nil && !errors.Is(err, cnf.ErrClosureTooLarge) {
			return nil, err
		}
		cands = c
	}
	if cands == nil {
		cands = make([][]int, len(m.Jobs))
		for i := range cands {
			for t := lo[i]; t <= hi[i] && t-lo[i] < tiMaxStarts; t++ {
				cands[i] = append(cands[i], t)
			}
		}
	}
	n := 0
	for _, c := range cands {
		n += len(c)
	}
	if n > tiMaxStarts {
		return nil, nil
	}
	return cands, nil
}
