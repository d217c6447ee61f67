package free

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/optsched/optsched/encode/dcas"
	"github.com/optsched/optsched/model"
)

// A search is the branch and bound over the jobs' count placements.
type search struct {
	ctx  context.Context
	t    *dcas.Tree
	cm   model.CostModel
	sh   *shape
	size []int // job sizes, in search order (largest first)
	cap  []int // idle nodes left under each vertex

	cur  []dcas.LeafCounts // the placement being built, per job
	best int64
	inc  []dcas.LeafCounts // the incumbent, per job
	// onBetter is called with every new incumbent.
	onBetter func(obj int64, inc []dcas.LeafCounts)

	// lg, when set, adds the Lagrangian bound with its root prices; phi
	// holds the φ_j of the current node. The nodes of depth 1 to
	// reprice − 1 re-price the leaves for the jobs left, warm-started from
	// lg's prices, for nodeAscent iterations, each depth in its own
	// nodeLg[d] (the enumeration of the depth above still reads its
	// prices).
	lg     *lagrange
	phi    []float64
	nodeLg []*lagrange
	// tt keeps, per (job depth, capacity shape), a lower bound on the cost
	// of the jobs left: placements of the earlier jobs that leave
	// isomorphic capacities lead to the same subproblem.
	tt    map[ttKey]int64
	ttGen int

	scr    []*scratch // per depth
	hopBuf []int      // Hops' scratch

	nodes   int64 // placements enumerated (leaves of a job's enumeration)
	calls   int64 // enumeration steps, for the deadline polls
	stopped bool  // the deadline or the node limit interrupted the search
	limit   int64 // node limit, 0 for none
}

type item struct{ v, m int }

type ttKey struct{ d, id int32 }

// pricedDepth is the depth up to which a job's own placements are
// bounded with priced tables (below, the few jobs left do not repay the
// tables' cost).
const pricedDepth = 2

// nodeAscent is the subgradient iterations at a node of depth 1 to
// reprice − 1 (re-priced, warm-started from the root prices).
const nodeAscent = 40

// reprice is the depth below which the nodes re-price the leaves.
const reprice = 4

// maxTT bounds the transposition table's entries.
const maxTT = 1 << 20

// margin is the rounding allowance of a real bound b summed from
// thousands of float64 terms: 1e-6 plus 1e-9 of its size (0.03 on a
// 10⁶-node window's total of 3·10⁷), so that rounding never lifts a bound
// past an integer the true bound stays below.
func margin(b float64) float64 { return 1e-6 + 1e-9*math.Abs(b) }

// cuts reports whether a real lower bound b on an integer total proves it
// at least best: b > best − 1, with the rounding margin.
func cuts(b float64, best int64) bool { return b > float64(best)-1+margin(b) }

// ceilBound turns a real lower bound on an integer cost into an integer
// one, with a margin for rounding.
func ceilBound(b float64) int64 {
	switch {
	case math.IsInf(b, 1):
		return inf
	case math.IsInf(b, -1) || math.IsNaN(b):
		return -inf
	}
	return int64(math.Ceil(b - margin(b)))
}

func newSearch(ctx context.Context, t *dcas.Tree, cm model.CostModel, size []int) *search {
	st := &search{ctx: ctx, t: t, cm: cm, sh: newShape(t), size: size,
		cap: slices.Clone(t.Cap), cur: make([]dcas.LeafCounts, len(size)), best: inf,
		tt: make(map[ttKey]int64), phi: make([]float64, len(size))}
	return st
}

// apply adds (sign +1) or removes (−1) a job's leaf counts from the
// capacities.
func (st *search) apply(lc dcas.LeafCounts, sign int) {
	for i, v := range lc.Vertex {
		for u := v; u >= 0; u = st.t.Parent[u] {
			st.cap[u] -= sign * lc.Count[i]
		}
	}
}

// jobCost prices one job's leaf counts.
func (st *search) jobCost(n int, lc dcas.LeafCounts) int64 {
	if st.hopBuf == nil {
		st.hopBuf = make([]int, st.t.NumVertices())
	}
	return st.cm.FromHops(n, st.t.Hops(lc, st.hopBuf))
}

// offer keeps counts as the incumbent when they beat it.
func (st *search) offer(obj int64, counts []dcas.LeafCounts) bool {
	if obj >= st.best {
		return false
	}
	st.best = obj
	st.inc = make([]dcas.LeafCounts, len(counts))
	for i, c := range counts {
		st.inc[i] = dcas.LeafCounts{Vertex: slices.Clone(c.Vertex), Count: slices.Clone(c.Count)}
	}
	if st.onBetter != nil {
		st.onBetter(obj, st.inc)
	}
	return true
}

// independent returns Σ_j (the least cost of job j alone on the current
// capacities) over jobs from..: a lower bound on what they add.
func (st *search) independent(from int) int64 {
	var lb, c int64
	for j := from; j < len(st.size); j++ {
		if j == from || st.size[j] != st.size[j-1] { // sorted: equal sizes are adjacent
			if st.ctx.Err() != nil {
				st.stopped = true
				return inf // no bound: the caller stops
			}
			h := st.sh.best(st.size[j], st.cap)
			if h >= inf {
				return inf
			}
			c = st.cm.FromHops(st.size[j], h)
		}
		lb += c
	}
	return lb
}

// poll reports whether the search must stop: every 256 steps it looks at
// the deadline.
func (st *search) poll() bool {
	st.calls++
	if st.stopped {
		return true
	}
	if st.calls&255 == 0 && st.ctx.Err() != nil {
		st.stopped = true
	}
	if st.limit > 0 && st.nodes >= st.limit {
		st.stopped = true
	}
	return st.stopped
}

// run searches every placement of jobs d.. on the current capacities, the
// jobs before d costing sofar; st.stopped tells whether it was cut short.
func (st *search) run(d int, sofar int64) {
	// A node prices every job left (tables of up to |V|·n² steps each):
	// look at the deadline at every one.
	if st.poll() || st.ctx.Err() != nil {
		st.stopped = true
		return
	}
	if d == len(st.size) {
		st.offer(sofar, st.cur)
		return
	}
	st.sh.update(st.cap)
	if st.ttGen != st.sh.gen || len(st.tt) > maxTT {
		clear(st.tt)
		st.ttGen = st.sh.gen
	}
	key := ttKey{int32(d), st.sh.canon[0]}
	if lb, ok := st.tt[key]; ok && sofar+lb >= st.best {
		return
	}
	rest := st.independent(d + 1)
	if rest >= inf {
		return
	}
	n := st.size[d]
	h := st.sh.best(n, st.cap)
	if h >= inf || sofar+st.cm.FromHops(n, h)+rest >= st.best {
		return
	}
	e := &enum{st: st, d: d, n: n, sofar: sofar, rest: rest}
	sc := st.scratch(d)
	if lg := st.lg; lg != nil {
		kids := st.sh.kids // the shape of st.cap (updated above)
		if d >= 1 && d < reprice && len(st.size)-d >= 2 {
			// Each depth has its own prices: the enumeration above still
			// reads its own.
			for len(st.nodeLg) <= d {
				st.nodeLg = append(st.nodeLg, newLagrange(st.t))
			}
			lg = st.nodeLg[d]
			copy(lg.lam, st.lg.lam)
			lg.ascend(st.cm, st.size[d:], st.cap, kids, float64(st.best-sofar), nodeAscent, st.poll)
		}
		// Job d's own placements, priced: with α·H + β ≤ its cost, the
		// window costs at least sofar + α·H_d + β_d + λ·x_d + lagRest.
		// Its tables also give φ_d.
		priced := d < pricedDepth
		if priced {
			lg.tables(st.cm, n, st.cap, kids, sc.pg, sc.psuf)
			_, e.beta = minorant(st.cm, n)
			e.pg, e.psuf = sc.pg, sc.psuf
		}
		var r0 float64
		for j := d; j < len(st.size); j++ {
			switch {
			case j == d && priced:
				st.phi[j] = sc.pg[0][n] + e.beta // n fits: h < inf above
			case j > d && st.size[j] == st.size[j-1]:
				st.phi[j] = st.phi[j-1] // sorted: equal sizes are adjacent
			default:
				st.phi[j] = lg.phi(st.cm, st.size[j], st.cap, kids, false)
			}
			if j > d {
				r0 += st.phi[j]
			}
		}
		for v, lam := range lg.lam {
			r0 -= lam * float64(st.cap[v])
		}
		if cuts(float64(sofar)+r0+st.phi[d], st.best) {
			st.storeTT(key, sofar)
			return
		}
		e.lagRest, e.lam = r0, lg.lam
	}
	defer st.storeTT(key, sofar)
	// The shape (ids, children order, tables) is that of the capacities
	// before job d; the enumeration reads it, and the deeper levels it
	// calls update it, so it keeps its own copy of the children orders.
	for v, k := range st.sh.kids {
		sc.kids[v] = append(sc.kids[v][:0], k...)
	}
	copy(sc.canon, st.sh.canon)
	copy(sc.capBefore, st.cap)
	for v := range sc.g {
		if sc.capBefore[v] > 0 {
			tb := st.sh.get(n, v, sc.capBefore)
			sc.g[v], sc.suf[v] = tb.g, tb.suf
		} else {
			sc.g[v], sc.suf[v] = nil, nil
		}
	}
	e.kids, e.canon, e.g, e.suf, e.capBefore = sc.kids, sc.canon, sc.g, sc.suf, sc.capBefore
	e.cands = sc.cands[:0]
	e.pend = sc.pend[:0]
	st.cur[d] = dcas.LeafCounts{}
	var plb float64 // the pending root's least priced part, as lb its H part
	if e.pg != nil {
		plb = e.pg[0][n]
	}
	e.expand(append(e.pend, item{0, n}), 0, e.g[0][n], 0, 0, plb)
	sc.cands, sc.pend = e.cands[:0], e.pend[:0]
}

// A scratch holds one depth's copy of the shape (the deeper levels
// update the search's), reused from node to node.
type scratch struct {
	pg        [][]float64
	psuf      [][][]float64
	kids      [][]int
	canon     []int32
	g         [][]int64
	suf       [][][]int64
	capBefore []int
	cands     []cand
	pend      []item
}

type cand struct {
	a  int
	lb int64
}

func (st *search) scratch(d int) *scratch {
	for len(st.scr) <= d {
		nv := st.t.NumVertices()
		st.scr = append(st.scr, &scratch{kids: make([][]int, nv), canon: make([]int32, nv),
			g: make([][]int64, nv), suf: make([][][]int64, nv), capBefore: make([]int, nv),
			pg: make([][]float64, nv), psuf: make([][][]float64, nv)})
	}
	return st.scr[d]
}

// storeTT records that the jobs left at key cost at least best − sofar,
// unless the search was cut short.
func (st *search) storeTT(key ttKey, sofar int64) {
	if st.stopped || st.sh.gen != st.ttGen {
		return
	}
	if lb := st.best - sofar; lb > st.tt[key] {
		st.tt[key] = lb
	}
}

// An enum enumerates the placements of one job, best-first by subtree,
// with the bound sofar + cost(H decided + least H of what is pending) +
// rest.
type enum struct {
	st    *search
	d, n  int
	sofar int64
	rest  int64
	// lagRest is Σ_{later j} φ_j − λ·cap on the capacities before this
	// job (0 without prices); the later jobs cost at least lagRest + λ·x
	// for this job's placement x.
	lagRest float64
	lam     []float64
	// pg and psuf are job d's priced tables (lagrange.tables), beta its
	// minorant's constant; nil without prices.
	pg   [][]float64
	psuf [][][]float64
	beta float64
	// cands and pend are stacks reused by split and expand.
	cands     []cand
	pend      []item
	kids      [][]int
	canon     []int32
	g         [][]int64
	suf       [][][]int64
	capBefore []int
}

func (e *enum) pruned(hLB int64, lamX float64) bool {
	rest := e.rest
	if e.lam != nil {
		rest = max(rest, ceilBound(e.lagRest+lamX))
	}
	return e.sofar+e.st.cm.FromHops(e.n, hLB)+rest >= e.st.best
}

// pricedOut reports whether the priced bound of a partial placement (p:
// its least α·H + λ·x) cuts it.
func (e *enum) pricedOut(p float64) bool {
	return e.pg != nil && cuts(float64(e.sofar)+p+e.beta+e.lagRest, e.st.best)
}

// expand places the pending items; h is the decided H part, lb the least
// H part of the pending items, lamX the prices of the leaves decided, ph
// the decided priced part and plb the pending items' least priced parts
// (the last two 0 without priced tables).
func (e *enum) expand(pend []item, h, lb int64, lamX, ph, plb float64) {
	st := e.st
	if st.poll() {
		return
	}
	if len(pend) == 0 {
		st.nodes++
		lc := st.cur[e.d]
		c := st.cm.FromHops(e.n, h)
		if e.pruned(h, lamX) {
			return
		}
		st.apply(lc, +1)
		st.run(e.d+1, e.sofar+c)
		st.apply(lc, -1)
		return
	}
	it := pend[len(pend)-1]
	// The deeper levels push into the popped slot and beyond; every level
	// puts back the item it popped, so a caller finds its items intact.
	pend = pend[:len(pend)-1]
	defer func() { pend[:len(pend)+1][len(pend)] = it }()
	lb -= e.g[it.v][it.m]
	if e.pg != nil {
		plb -= e.pg[it.v][it.m]
	}
	t := st.t
	if t.IsLeaf(it.v) {
		lc := &st.cur[e.d]
		lc.Add(it.v, it.m)
		if e.lam != nil {
			lamX += e.lam[it.v] * float64(it.m)
		}
		if e.pg != nil {
			ph += e.pg[it.v][it.m]
		}
		e.expand(pend, h+e.g[it.v][it.m], lb, lamX, ph, plb)
		lc.Vertex, lc.Count = lc.Vertex[:len(lc.Vertex)-1], lc.Count[:len(lc.Count)-1]
		return
	}
	if t.Counted[it.v] {
		h -= 2 * pairs(it.m)
		if e.pg != nil {
			alpha, _ := minorant(st.cm, e.n)
			ph -= alpha * 2 * float64(pairs(it.m))
		}
	}
	e.split(it.v, 0, it.m, pend, h, lb, lamX, ph, plb, -1)
}

// split chooses how many of the rem nodes left at vertex v go to its i-th
// sorted child and on; prev is the count of child i−1 (the bound of an
// isomorphic child i), −1 at the first.
func (e *enum) split(v, i, rem int, pend []item, h, lb int64, lamX, ph, plb float64, prev int) {
	kids := e.kids[v]
	if rem == 0 || i == len(kids) {
		if rem == 0 {
			e.expand(pend, h, lb, lamX, ph, plb)
		}
		return
	}
	c := kids[i]
	hi := min(rem, len(e.g[c])-1)
	if prev >= 0 && i > 0 && e.canon[kids[i-1]] == e.canon[c] {
		hi = min(hi, prev)
	}
	next := e.suf[v][i+1]
	from := len(e.cands)
	for a := 0; a <= hi; a++ {
		r := next[rem-a]
		if r >= inf {
			continue
		}
		e.cands = append(e.cands, cand{a, e.g[c][a] + r})
	}
	to := len(e.cands)
	defer func() { e.cands = e.cands[:from] }()
	// Best bound first; on ties the most nodes in this child, the
	// tightest fit of the children sorted by capacity.
	slices.SortFunc(e.cands[from:to], func(x, y cand) int {
		if c := cmp.Compare(x.lb, y.lb); c != 0 {
			return c
		}
		return cmp.Compare(y.a, x.a)
	})
	for k := from; k < to; k++ {
		cd := e.cands[k]
		if e.pruned(h+lb+cd.lb, lamX) {
			return // sorted: the rest are no better
		}
		var pa float64
		if e.pg != nil {
			if r := e.psuf[v][i+1][rem-cd.a]; math.IsInf(r, 1) || e.pricedOut(ph+plb+e.pg[c][cd.a]+r) {
				continue // not sorted by this bound: the next may pass
			}
			pa = e.pg[c][cd.a]
		}
		if cd.a > 0 {
			pend = append(pend, item{c, cd.a})
			e.split(v, i+1, rem-cd.a, pend, h, lb+e.g[c][cd.a], lamX, ph, plb+pa, cd.a)
			pend = pend[:len(pend)-1]
		} else {
			e.split(v, i+1, rem, pend, h, lb, lamX, ph, plb, 0)
		}
		if e.st.stopped {
			return
		}
	}
}
