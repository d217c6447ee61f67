package cnf

import (
	"errors"
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
	slices.SortStableFunc(terms, func(a, b term) int {
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return 0
	})
	suffix := make([]int64, len(terms)+1)
	for i := len(terms) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + terms[i].w
	}
	memo := make([][]memoEntry, len(terms))
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

// ErrInterrupted is returned by AtMost when Encoder.Stop asked it to stop.
var ErrInterrupted = errors.New("cnf: interrupted")

// delayAtLeast returns [s_i − Lo_i ≥ v].
func (e *Encoder) delayAtLeast(i, v int) Lit {
	return -e.Start(i, e.Lo[i]+v-1)
}

// A diagram is the objective diagram over some jobs: their order, the
// largest remaining weighted delay from each level, and the memo of
// reduced nodes per level.
type diagram struct {
	order  []int
	suffix []int64
	memo   [][]memoEntry
	// coarse counts delays in units of coarse slots, rounded up: a job
	// delayed by δ slots weighs ω·coarse·⌈δ/coarse⌉ ≥ ω·δ.
	coarse int
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
	d.suffix = make([]int64, len(d.order)+1)
	for t := len(d.order) - 1; t >= 0; t-- {
		i := d.order[t]
		span := (e.Hi[i] - e.Lo[i] + coarse - 1) / coarse
		d.suffix[t] = d.suffix[t+1] + m.Jobs[i].Weight*int64(coarse)*int64(span)
	}
	d.memo = make([][]memoEntry, len(d.order))
	return d
}

// AtMost returns a literal that implies Σ_i ω_i·(s_i − Lo_i) ≤ b over all
// jobs (the objective bound; assume it). Successive calls share the
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
		e.global[c] = d
	}
	return e.atMostDiagram(d, b, maxWork)
}

// AtMostJobs returns a literal that implies Σ_{i ∈ jobs} ω_i·(s_i − Lo_i)
// ≤ b, from a diagram of its own (for a large-neighbourhood move that
// frees only these jobs).
func (e *Encoder) AtMostJobs(jobs []int, b int64) (Lit, error) {
	return e.atMostDiagram(e.newDiagram(jobs, 1), b, MaxObjectiveWork)
}

func (e *Encoder) atMostDiagram(d *diagram, b int64, maxWork int) (Lit, error) {
	m := e.M
	nodes := 0
	var tooLarge, interrupted bool
	work := 0
	var build func(t int, k int64) memoEntry
	build = func(t int, k int64) memoEntry {
		if k < 0 {
			return memoEntry{negInf, -1, -e.t}
		}
		if k >= d.suffix[t] {
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
		w := m.Jobs[i].Weight * int64(c)
		span := (e.Hi[i] - e.Lo[i] + c - 1) / c
		n := memoEntry{lo: negInf, hi: posInf}
		var kids []memoEntry
		for v := 0; v <= span; v++ {
			if work++; work%4096 == 0 && e.Stop != nil && e.Stop() {
				tooLarge, interrupted = true, true
			}
			if work > maxWork {
				tooLarge = true
			}
			c := build(t+1, k-w*int64(v))
			kids = append(kids, c)
			n.lo = max(n.lo, c.lo+w*int64(v))
			n.hi = min(n.hi, c.hi+w*int64(v))
			if c.lit == -e.t {
				break // larger delays are as forbidden
			}
		}
		if tooLarge {
			return memoEntry{k, k, e.t} // never memoised; the call fails
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
			for v := 1; v < len(kids); v++ {
				if kids[v].lit != kids[v-1].lit {
					e.add(-n.lit, -e.delayAtLeast(i, c*(v-1)+1), kids[v].lit)
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
