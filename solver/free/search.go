package free

import (
	"cmp"
	"context"
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

	nodes   int64 // placements enumerated (leaves of a job's enumeration)
	calls   int64 // enumeration steps, for the deadline polls
	stopped bool  // the deadline or the node limit interrupted the search
	limit   int64 // node limit, 0 for none
}

type item struct{ v, m int }

func newSearch(ctx context.Context, t *dcas.Tree, cm model.CostModel, size []int) *search {
	st := &search{ctx: ctx, t: t, cm: cm, sh: newShape(t), size: size,
		cap: slices.Clone(t.Cap), cur: make([]dcas.LeafCounts, len(size)), best: inf}
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
	return st.cm.FromHops(n, st.t.Hops(st.t.Expand(lc)))
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
	var lb int64
	for j := from; j < len(st.size); j++ {
		h := st.sh.best(st.size[j], st.cap)
		if h >= inf {
			return inf
		}
		lb += st.cm.FromHops(st.size[j], h)
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
	if st.poll() {
		return
	}
	if d == len(st.size) {
		st.offer(sofar, st.cur)
		return
	}
	st.sh.update(st.cap)
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
	// The shape (ids, children order, tables) is that of the capacities
	// before job d; the enumeration reads it, and the deeper levels it
	// calls update it, so it keeps its own copy of the children orders.
	e.kids = make([][]int, len(st.sh.kids))
	for v, k := range st.sh.kids {
		e.kids[v] = slices.Clone(k)
	}
	e.canon = slices.Clone(st.sh.canon)
	e.g = make([][]int64, st.t.NumVertices())
	e.suf = make([][][]int64, st.t.NumVertices())
	capBefore := slices.Clone(st.cap)
	for v := range e.g {
		if capBefore[v] > 0 {
			tb := st.sh.get(n, v, capBefore)
			e.g[v], e.suf[v] = tb.g, tb.suf
		}
	}
	e.capBefore = capBefore
	st.cur[d] = dcas.LeafCounts{}
	e.expand([]item{{0, n}}, 0, e.g[0][n])
}

// An enum enumerates the placements of one job, best-first by subtree,
// with the bound sofar + cost(H decided + least H of what is pending) +
// rest.
type enum struct {
	st        *search
	d, n      int
	sofar     int64
	rest      int64
	kids      [][]int
	canon     []int32
	g         [][]int64
	suf       [][][]int64
	capBefore []int
}

func (e *enum) pruned(hLB int64) bool {
	return e.sofar+e.st.cm.FromHops(e.n, hLB)+e.rest >= e.st.best
}

// expand places the pending items; h is the decided H part and lb the
// least H part of the pending items.
func (e *enum) expand(pend []item, h, lb int64) {
	st := e.st
	if st.poll() {
		return
	}
	if len(pend) == 0 {
		st.nodes++
		lc := st.cur[e.d]
		c := st.cm.FromHops(e.n, h)
		if e.sofar+c+e.rest >= st.best {
			return
		}
		st.apply(lc, +1)
		st.run(e.d+1, e.sofar+c)
		st.apply(lc, -1)
		return
	}
	it := pend[len(pend)-1]
	// Capped, so that what deeper levels append never overwrites the
	// items a caller still holds.
	pend = pend[: len(pend)-1 : len(pend)-1]
	lb -= e.g[it.v][it.m]
	t := st.t
	if t.IsLeaf(it.v) {
		lc := &st.cur[e.d]
		lc.Add(it.v, it.m)
		e.expand(pend, h+e.g[it.v][it.m], lb)
		lc.Vertex, lc.Count = lc.Vertex[:len(lc.Vertex)-1], lc.Count[:len(lc.Count)-1]
		return
	}
	if t.Counted[it.v] {
		h -= 2 * pairs(it.m)
	}
	e.split(it.v, 0, it.m, pend, h, lb, -1)
}

// split chooses how many of the rem nodes left at vertex v go to its i-th
// sorted child and on; prev is the count of child i−1 (the bound of an
// isomorphic child i), −1 at the first.
func (e *enum) split(v, i, rem int, pend []item, h, lb int64, prev int) {
	kids := e.kids[v]
	if rem == 0 || i == len(kids) {
		if rem == 0 {
			e.expand(pend, h, lb)
		}
		return
	}
	c := kids[i]
	hi := min(rem, len(e.g[c])-1)
	if prev >= 0 && i > 0 && e.canon[kids[i-1]] == e.canon[c] {
		hi = min(hi, prev)
	}
	next := e.suf[v][i+1]
	type cand struct {
		a  int
		lb int64
	}
	cands := make([]cand, 0, hi+1)
	for a := 0; a <= hi; a++ {
		r := next[rem-a]
		if r >= inf {
			continue
		}
		cands = append(cands, cand{a, e.g[c][a] + r})
	}
	slices.SortStableFunc(cands, func(x, y cand) int { return cmp.Compare(x.lb, y.lb) })
	for _, cd := range cands {
		if e.pruned(h + lb + cd.lb) {
			return // sorted: the rest are no better
		}
		if cd.a > 0 {
			pend = append(pend, item{c, cd.a})
			e.split(v, i+1, rem-cd.a, pend, h, lb+e.g[c][cd.a], cd.a)
			pend = pend[:len(pend)-1]
		} else {
			e.split(v, i+1, rem, pend, h, lb, 0)
		}
		if e.st.stopped {
			return
		}
	}
}
