package cnf

import (
	"errors"
	"fmt"
	"slices"

	"github.com/optsched/optsched/encode/cp"
)

// ErrClosureTooLarge is returned by Closure when computing the event
// closure would take more than its work limit; the caller keeps the grid.
var ErrClosureTooLarge = errors.New("cnf: event closure over its work limit")

// Closure returns, for each job i, the sorted candidate start slots of
// the compressed time domain within [lo_i, hi_i]: the least sets C_i with
//
//	C_i ⊇ {lo_i} ∪ E_i ∪ extra_i,
//	C_i ⊇ (C_k + D_k) ∩ [lo_i, hi_i]  for every other job k that may use
//	                                    one of i's nodes,
//
// E_i being the static events on i's nodes within i's range: the slots at
// which its units are released beside the running jobs (cp.Option.Release),
// the first slots after its forbidden ranges, and the ends of the running
// jobs and reservations on them. It is the event-slot closure of the
// window time, the running jobs' and reservations' ends under adding the
// waiting jobs' durations, restricted to chains of jobs that share nodes
// and to each job's range.
//
// Exactness: for a regular objective such as Σ ω_i s_i (ω_i > 0), every
// schedule can be shifted left, one job one slot at a time, with no
// objective increase, until it is left-justified: each job starts at lo_i
// or at a slot where something on one of its nodes ends — a running job,
// a reservation, a release, or another waiting job k (s_k + D_k) — else
// every job running on its nodes at s − 1 still runs at s, and the job
// fits at s − 1 (see LeftJustified). Taking the starts in time order, each
// start of a left-justified schedule whose starts lie in [lo, hi] is then
// in C: lo_i, a static event, or s_k + D_k with s_k ∈ C_k. So every bound
// Σ ω_i s_i ≤ B that some schedule within the ranges meets is met by one
// with starts in C, and an encoding restricted to C keeps the optimum and
// every UNSAT proof of a bound (the ranges themselves must hold every
// schedule of interest, as Domains' do). extra adds slots (an incumbent's
// starts, say) and may be nil; slots outside [lo_i, hi_i] are ignored.
//
// Work is bounded by limit set insertions times neighbours; beyond it
// Closure returns ErrClosureTooLarge.
func Closure(m *cp.Model, lo, hi []int, extra [][]int, limit int) ([][]int, error) {
	return ClosureStop(m, lo, hi, extra, limit, nil)
}

// ClosureStop is Closure that polls stop (when not nil) once per job and
// every 4,096 units of work, and gives up with ErrInterrupted when it
// returns true.
func ClosureStop(m *cp.Model, lo, hi []int, extra [][]int, limit int, stop func() bool) ([][]int, error) {
	stopped := func() bool { return stop != nil && stop() }
	n := len(m.Jobs)
	if len(lo) != n || len(hi) != n {
		return nil, fmt.Errorf("cnf: closure of %d jobs with %d lows and %d highs", n, len(lo), len(hi))
	}
	nodesOf := make([]map[int]bool, n)
	for i, j := range m.Jobs {
		nodesOf[i] = map[int]bool{}
		for _, o := range j.Options {
			nodesOf[i][o.Node] = true
		}
	}
	// Neighbours: the jobs whose ends may let i start.
	var byNode = make([][]int, len(m.Nodes))
	for i := range m.Jobs {
		for nd := range nodesOf[i] {
			byNode[nd] = append(byNode[nd], i)
		}
	}
	nbrs := make([][]int, n) // nbrs[k]: the jobs i ≠ k sharing a node with k
	for k := range m.Jobs {
		if stopped() {
			return nil, ErrInterrupted
		}
		seen := map[int]bool{k: true}
		for nd := range nodesOf[k] {
			for _, i := range byNode[nd] {
				if !seen[i] {
					seen[i] = true
					nbrs[k] = append(nbrs[k], i)
				}
			}
		}
		slices.Sort(nbrs[k])
	}
	in := make([][]bool, n) // in[i][s − lo_i]
	type item struct{ job, slot int }
	var queue []item
	add := func(i, s int) {
		if s < lo[i] || s > hi[i] || in[i][s-lo[i]] {
			return
		}
		in[i][s-lo[i]] = true
		queue = append(queue, item{i, s})
	}
	for i, j := range m.Jobs {
		in[i] = make([]bool, hi[i]-lo[i]+1)
		add(i, lo[i])
		for _, o := range j.Options {
			for _, r := range o.Release {
				add(i, r)
			}
			for _, f := range o.Forbid {
				add(i, f[1]+1)
			}
			nd := &m.Nodes[o.Node]
			for _, r := range nd.Running {
				add(i, r.EndSlot)
			}
			for _, rv := range nd.Reserved {
				if end := rv[1] - m.Window.Time; end > 0 {
					add(i, int((end+m.Grid-1)/m.Grid))
				}
			}
		}
		if extra != nil {
			for _, s := range extra[i] {
				add(i, s)
			}
		}
	}
	work := 0
	for len(queue) > 0 {
		it := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		end := it.slot + m.Jobs[it.job].Dur
		before := work
		work += len(nbrs[it.job]) + 1
		if work > limit {
			return nil, ErrClosureTooLarge
		}
		if work>>12 != before>>12 && stopped() {
			return nil, ErrInterrupted
		}
		for _, i := range nbrs[it.job] {
			add(i, end)
		}
	}
	out := make([][]int, n)
	for i := range in {
		for k, ok := range in[i] {
			if ok {
				out[i] = append(out[i], lo[i]+k)
			}
		}
	}
	return out, nil
}

// Compress restricts every job's start to its candidate slots cands[i]
// (sorted, distinct, the first lo_i, all within [lo_i, hi_i]; Closure's
// answer): the order encoding then has one variable per candidate, and
// [s_i ≤ s] for any s is the variable of the largest candidate ≤ s. Hi_i
// becomes the last candidate. The pair blocks, dominance clauses and
// objective diagrams only visit candidates. Call after New and before
// Base; see Closure for why the optimum and every bound's answer are
// kept.
func (e *Encoder) Compress(cands [][]int) error {
	if e.t != 0 {
		return errors.New("cnf: Compress after Base")
	}
	if len(cands) != len(e.M.Jobs) {
		return fmt.Errorf("cnf: %d candidate lists for %d jobs", len(cands), len(e.M.Jobs))
	}
	for i, c := range cands {
		if len(c) == 0 || c[0] != e.Lo[i] {
			return fmt.Errorf("cnf: job %s: candidates %v do not start at %d", e.M.Jobs[i].ID, c, e.Lo[i])
		}
		for k := 1; k < len(c); k++ {
			if c[k] <= c[k-1] {
				return fmt.Errorf("cnf: job %s: candidates not increasing at %d", e.M.Jobs[i].ID, k)
			}
		}
		if c[len(c)-1] > e.Hi[i] {
			return fmt.Errorf("cnf: job %s: candidate %d above %d", e.M.Jobs[i].ID, c[len(c)-1], e.Hi[i])
		}
	}
	e.cand = make([][]int, len(cands))
	for i, c := range cands {
		e.cand[i] = slices.Clone(c)
		e.Hi[i] = c[len(c)-1]
	}
	return nil
}

// Compressed reports whether Compress restricted the starts.
func (e *Encoder) Compressed() bool { return e.cand != nil }

// NumCandidates returns len(Candidates(i)) without building the list.
func (e *Encoder) NumCandidates(i int) int {
	if e.cand != nil {
		return len(e.cand[i])
	}
	return e.Hi[i] - e.Lo[i] + 1
}

// Candidates returns job i's possible start slots in increasing order:
// Lo_i … Hi_i on the grid, the candidates after Compress.
func (e *Encoder) Candidates(i int) []int {
	if e.cand != nil {
		return e.cand[i]
	}
	out := make([]int, 0, e.Hi[i]-e.Lo[i]+1)
	for s := e.Lo[i]; s <= e.Hi[i]; s++ {
		out = append(out, s)
	}
	return out
}

// IsCandidate reports whether job i may start at slot s.
func (e *Encoder) IsCandidate(i, s int) bool {
	if s < e.Lo[i] || s > e.Hi[i] {
		return false
	}
	if e.cand == nil {
		return true
	}
	_, ok := slices.BinarySearch(e.cand[i], s)
	return ok
}

// candidatesIn returns job i's candidates in [a, b].
func (e *Encoder) candidatesIn(i, a, b int) []int {
	if a > b {
		return nil
	}
	if e.cand == nil {
		a, b = max(a, e.Lo[i]), min(b, e.Hi[i])
		if a > b {
			return nil
		}
		out := make([]int, 0, b-a+1)
		for s := a; s <= b; s++ {
			out = append(out, s)
		}
		return out
	}
	c := e.cand[i]
	from, _ := slices.BinarySearch(c, a)
	to, ok := slices.BinarySearch(c, b)
	if ok {
		to++
	}
	return c[from:to]
}
