package cnf

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// A term is w·l in a pseudo-Boolean sum.
type term struct {
	w int64
	l Lit
}

// memoEntry is a reduced diagram node valid for every bound in [lo, hi].
type memoEntry struct {
	lo, hi int64
	lit    Lit
}

// lookup finds the entry whose interval holds k in a list sorted by lo.
func lookup(list []memoEntry, k int64) (memoEntry, bool) {
	i, _ := slices.BinarySearchFunc(list, k, func(e memoEntry, k int64) int {
		switch {
		case e.hi < k:
			return -1
		case e.lo > k:
			return 1
		}
		return 0
	})
	if i < len(list) && list[i].lo <= k && k <= list[i].hi {
		return list[i], true
	}
	return memoEntry{}, false
}

func insert(list []memoEntry, e memoEntry) []memoEntry {
	i, _ := slices.BinarySearchFunc(list, e.lo, func(x memoEntry, k int64) int {
		switch {
		case x.lo < k:
			return -1
		case x.lo > k:
			return 1
		}
		return 0
	})
	return slices.Insert(list, i, e)
}

const (
	negInf = math.MinInt64 / 4
	posInf = math.MaxInt64 / 4
)

// atMost returns a literal that implies Σ w·l ≤ k, as a reduced BDD with
// interval memoisation (Abío et al. 2012): node(i, K) → (rest ≤ K without
// term i) and node ∧ l_i → (rest ≤ K − w_i); bounds K that share one
// Boolean function share one node.
func (e *Encoder) atMost(terms []term, k int64) Lit {
	return e.newPB(terms).atMost(e, k)
}

// A pbSum is the reduced BDD of one sum Σ w·l, whose nodes the bounds
// asked of it (atMost) share.
type pbSum struct {
	terms  []term
	suffix []int64
	memo   [][]memoEntry
}

func (e *Encoder) newPB(terms []term) *pbSum {
	p := &pbSum{terms: slices.Clone(terms)}
	slices.SortStableFunc(p.terms, func(a, b term) int { return cmp.Compare(b.w, a.w) })
	p.suffix = make([]int64, len(p.terms)+1)
	for i := len(p.terms) - 1; i >= 0; i-- {
		p.suffix[i] = p.suffix[i+1] + p.terms[i].w
	}
	p.memo = make([][]memoEntry, len(p.terms))
	return p
}

// atMost returns a literal that implies Σ w·l ≤ k.
func (p *pbSum) atMost(e *Encoder, k int64) Lit {
	terms, suffix, memo := p.terms, p.suffix, p.memo
	var build func(i int, k int64) memoEntry
	build = func(i int, k int64) memoEntry {
		if k < 0 {
			return memoEntry{negInf, -1, -e.t}
		}
		if k >= suffix[i] {
			return memoEntry{suffix[i], posInf, e.t}
		}
		if m, ok := lookup(memo[i], k); ok {
			return m
		}
		f0 := build(i+1, k)
		f1 := build(i+1, k-terms[i].w)
		n := memoEntry{lo: max(f0.lo, f1.lo+terms[i].w), hi: min(f0.hi, f1.hi+terms[i].w)}
		if f0.lit == f1.lit {
			n.lit = f0.lit
		} else {
			n.lit = e.newVar()
			e.add(-n.lit, f0.lit)
			e.add(-n.lit, -terms[i].l, f1.lit)
		}
		memo[i] = insert(memo[i], n)
		return n
	}
	return build(0, k).lit
}

// ErrTooLarge is returned by AtMost when the objective diagram would need
// more than MaxObjectiveNodes nodes, or a call more work than allowed.
var ErrTooLarge = errors.New("cnf: objective bound diagram too large")

// MaxObjectiveNodes caps the nodes one call adds to an objective diagram;
// MaxObjectiveWork caps the arcs it visits (about the clauses it writes).
const (
	MaxObjectiveNodes = 400_000
	MaxObjectiveWork  = 8_000_000
)

// ErrInterrupted is returned by the constructions that poll Encoder.Stop
// (and by ClosureStop) when it asked them to stop.
var ErrInterrupted = errors.New("cnf: interrupted")

// delayAtLeast returns [s_i − Lo_i ≥ v].
func (e *Encoder) delayAtLeast(i, v int) Lit {
	return -e.Start(i, e.Lo[i]+v-1)
}

// A diagram is the objective diagram over some jobs: their order, the
// largest remaining weighted delay from each level, and the memo of
// reduced nodes per level.
type diagram struct {
	// order lists the levels: a job i ≥ 0 for its delay, −1 − i for
	// job i's CH term (CHTerm), which comes after the delays.
	order  []int
	suffix []int64
	memo   [][]memoEntry
	// qs[t] are the possible values of level t, increasing from 0: a
	// job's delays in units of coarse slots (every slot on the grid, the
	// candidates after Compress), or its CH − 1 values; w[t] weighs them
	// (ω·coarse, or κ).
	qs [][]int64
	w  []int64
	// coarse counts delays in units of coarse slots, rounded up: a job
	// delayed by δ slots weighs ω·coarse·⌈δ/coarse⌉ ≥ ω·δ.
	coarse int
	// least[t], when set, is a lower bound on the weighted delay of the
	// jobs of levels t… in every schedule (see ObjectiveGroups): a node
	// with less budget left is false. A node is true when its budget is
	// at least top[t] = max_{t' ≥ t} (suffix[t] − suffix[t'] + least[t']):
	// no delays of levels t… then leave less than least further down.
	least, top []int64
}

// ObjectiveGroups orders the objective diagrams over all jobs group by
// group and lets them use known lower bounds: delta[g] ≤ Σ_{i∈groups[g]}
// ω_i·(s_i − Lo_i) in every schedule (for instance the optimum of the
// group's jobs alone). A diagram node whose remaining budget is below the
// bounds of the groups still ahead is then false. The schedules a bound's
// literal allows are the same, so UNSAT proves as much as before, but the
// diagrams are smaller and the solver need not rediscover the groups'
// bounds. groups must partition the jobs; call it before AtMost.
func (e *Encoder) ObjectiveGroups(groups [][]int, delta []int64) error {
	if len(groups) != len(delta) {
		return fmt.Errorf("cnf: %d groups and %d bounds", len(groups), len(delta))
	}
	if e.global != nil {
		return errors.New("cnf: ObjectiveGroups after the objective diagrams were built")
	}
	seen := make([]bool, len(e.M.Jobs))
	n := 0
	for g, jobs := range groups {
		if delta[g] < 0 {
			return fmt.Errorf("cnf: group %d: negative bound %d", g, delta[g])
		}
		for _, i := range jobs {
			if i < 0 || i >= len(seen) || seen[i] {
				return fmt.Errorf("cnf: groups do not partition the jobs (job %d)", i)
			}
			seen[i] = true
			n++
		}
	}
	if n != len(seen) {
		return fmt.Errorf("cnf: groups cover %d of %d jobs", n, len(seen))
	}
	e.groups = make([][]int, len(groups))
	for g := range groups {
		e.groups[g] = slices.Clone(groups[g])
	}
	e.groupLB = slices.Clone(delta)
	return nil
}

// newDiagram orders jobs by decreasing weight (then wider domains first).
func (e *Encoder) newDiagram(jobs []int, coarse int) *diagram {
	m := e.M
	d := &diagram{order: slices.Clone(jobs), coarse: coarse}
	slices.SortStableFunc(d.order, func(a, b int) int {
		wa, wb := m.Jobs[a].Weight, m.Jobs[b].Weight
		switch {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return (e.Hi[b] - e.Lo[b]) - (e.Hi[a] - e.Lo[a])
	})
	for _, i := range jobs {
		if e.ch != nil && e.ch[i] != nil {
			d.order = append(d.order, -1-i)
		}
	}
	e.levels(d)
	return d
}

// levels sets d's delays per level, suffix sums and empty memo for its
// order.
func (e *Encoder) levels(d *diagram) {
	c := d.coarse
	d.qs = make([][]int64, len(d.order))
	d.w = make([]int64, len(d.order))
	d.suffix = make([]int64, len(d.order)+1)
	for t := len(d.order) - 1; t >= 0; t-- {
		i := d.order[t]
		if i < 0 {
			d.qs[t], d.w[t] = e.ch[-1-i].vals, e.M.CHKappa
		} else {
			var qs []int64
			for _, s := range e.Candidates(i) {
				q := int64((s - e.Lo[i] + c - 1) / c)
				if len(qs) == 0 || qs[len(qs)-1] != q {
					qs = append(qs, q)
				}
			}
			d.qs[t], d.w[t] = qs, e.M.Jobs[i].Weight*int64(c)
		}
		d.suffix[t] = d.suffix[t+1] + d.w[t]*d.qs[t][len(d.qs[t])-1]
	}
	d.memo = make([][]memoEntry, len(d.order))
}

// AtMost returns a literal that implies Σ_i ω_i·(s_i − Lo_i) ≤ b over all
// jobs (the objective bound; assume it), plus κ·Σ_i (CH_i − 1) after
// CHTerm. Successive calls share the
// diagram's nodes.
func (e *Encoder) AtMost(b int64) (Lit, error) {
	return e.AtMostCoarse(b, 1, MaxObjectiveWork)
}

// AtMostCoarse returns a literal that implies Σ_i ω_i·c·⌈(s_i − Lo_i)/c⌉
// ≤ b, and therefore the objective bound Σ_i ω_i·(s_i − Lo_i) ≤ b: with
// c > 1 a stronger constraint whose diagram is about c² times smaller —
// its models are genuine improvements, but its UNSAT proves nothing. The
// call gives up with ErrTooLarge after visiting maxWork arcs (the nodes
// made so far are kept for the next call). Calls with one c share nodes.
func (e *Encoder) AtMostCoarse(b int64, c int, maxWork int) (Lit, error) {
	if e.global == nil {
		e.global = map[int]*diagram{}
	}
	d := e.global[c]
	if d == nil {
		jobs := make([]int, len(e.M.Jobs))
		for i := range jobs {
			jobs[i] = i
		}
		d = e.newDiagram(jobs, c)
		if e.groups != nil {
			d = e.groupDiagram(c)
		}
		e.global[c] = d
	}
	return e.atMostDiagram(d, b, maxWork)
}

// groupDiagram is the diagram over all jobs in ObjectiveGroups' order,
// with the groups' bounds.
func (e *Encoder) groupDiagram(coarse int) *diagram {
	var order []int
	var starts []int // first level of each group
	for _, g := range e.groups {
		starts = append(starts, len(order))
		order = append(order, e.newDiagram(g, coarse).order...)
	}
	d := e.newDiagram(nil, coarse)
	d.order = order
	e.levels(d)
	d.least = make([]int64, len(order)+1)
	for t := range d.least {
		for g, st := range starts {
			if st >= t {
				d.least[t] += e.groupLB[g]
			}
		}
	}
	d.top = make([]int64, len(order)+1)
	for t := len(order); t >= 0; t-- {
		d.top[t] = d.least[t]
		if t < len(order) {
			d.top[t] = max(d.least[t], d.top[t+1]+d.suffix[t]-d.suffix[t+1])
		}
	}
	return d
}

// AtMostJobs returns a literal that implies Σ_{i ∈ jobs} ω_i·(s_i − Lo_i)
// ≤ b, from a diagram of its own (for a large-neighbourhood move that
// frees only these jobs).
func (e *Encoder) AtMostJobs(jobs []int, b int64) (Lit, error) {
	return e.atMostDiagram(e.newDiagram(jobs, 1), b, MaxObjectiveWork)
}

func (e *Encoder) atMostDiagram(d *diagram, b int64, maxWork int) (Lit, error) {
	nodes := 0
	var tooLarge, interrupted bool
	work := 0
	var build func(t int, k int64) memoEntry
	build = func(t int, k int64) memoEntry {
		if k < 0 {
			return memoEntry{negInf, -1, -e.t}
		}
		if d.least != nil && k < d.least[t] {
			return memoEntry{negInf, d.least[t] - 1, -e.t}
		}
		if d.least != nil && k >= d.top[t] {
			return memoEntry{d.top[t], posInf, e.t}
		}
		if d.least == nil && k >= d.suffix[t] {
			return memoEntry{d.suffix[t], posInf, e.t}
		}
		if n, ok := lookup(d.memo[t], k); ok {
			return n
		}
		if tooLarge {
			return memoEntry{k, k, e.t} // never memoised; the call fails
		}
		i := d.order[t]
		c := d.coarse
		w := d.w[t]
		qs := d.qs[t]
		n := memoEntry{lo: negInf, hi: posInf}
		var kids []memoEntry
		for _, v := range qs {
			if work++; work%4096 == 0 && e.Stop != nil && e.Stop() {
				tooLarge, interrupted = true, true
			}
			if work > maxWork {
				tooLarge = true
			}
			c := build(t+1, k-w*v)
			kids = append(kids, c)
			n.lo = max(n.lo, c.lo+w*v)
			n.hi = min(n.hi, c.hi+w*v)
			if c.lit == -e.t {
				break // larger delays are as forbidden
			}
		}
		if tooLarge {
			return memoEntry{k, k, e.t} // never memoised; the call fails
		}
		if d.least != nil {
			n.lo = max(n.lo, d.least[t]) // below it the node is false
		}
		same := true
		for _, c := range kids {
			same = same && c.lit == kids[0].lit
		}
		if same {
			n.lit = kids[0].lit
		} else {
			n.lit = e.newVar()
			e.add(-n.lit, kids[0].lit)
			for x := 1; x < len(kids); x++ {
				if kids[x].lit == kids[x-1].lit {
					continue
				}
				if i < 0 {
					// CH − 1 ≥ qs[x].
					e.add(-n.lit, -e.ch[-1-i].lits[x], kids[x].lit)
				} else {
					// A coarse delay above qs[x−1] is at least qs[x].
					e.add(-n.lit, -e.delayAtLeast(i, c*int(qs[x-1])+1), kids[x].lit)
				}
			}
		}
		d.memo[t] = insert(d.memo[t], n)
		if nodes++; nodes > MaxObjectiveNodes {
			tooLarge = true
		}
		return n
	}
	root := build(0, b)
	switch {
	case interrupted:
		return 0, ErrInterrupted
	case tooLarge:
		return 0, ErrTooLarge
	}
	return root.lit, nil
}
