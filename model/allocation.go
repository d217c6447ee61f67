package model

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
)

// An Allocation starts one waiting job on a set of nodes.
type Allocation struct {
	// Job is an index into Window.Jobs.
	Job int
	// Nodes are the node ids the job runs on.
	Nodes []int
	// Start is the start time, at or after the window time.
	Start int64
	// Units, when set, makes this a units allocation of the
	// time-and-resource model of [Bridi16]: node id → number of the job's
	// units on it (its keys are exactly Nodes). nil for a whole-node
	// allocation, which uses every node of Nodes alone.
	Units map[int]int
}

// ErrInfeasible is wrapped by every error Check returns.
var ErrInfeasible = errors.New("model: infeasible allocation")

// maxCheckProblems bounds how many problems one Check error lists.
const maxCheckProblems = 10

// directShare: Check keeps its free-from times by node id, not by rank
// among the allocations' nodes, when the allocations list at least one
// node in directShare of the topology's (see Check).
const directShare = 32

// checkScratch is Check's bitsets, ranks and free-from times, kept in
// checkPool between calls: a simulator checks each of 10⁵ placements on
// a 32,768-node cluster, and a fresh set each time is mostly garbage.
type checkScratch struct {
	bits     []uint64
	rank     []int32
	freeFrom []int64
}

var checkPool = sync.Pool{New: func() any { return new(checkScratch) }}

// Check reports whether allocs is a feasible answer for window w, and if
// not, why (up to ten problems, joined; errors.Is(err, ErrInfeasible)
// holds). It is the one feasibility check of optsched and shares no code
// with any solver. An allocation is feasible when
//
//   - every allocation names a waiting job of w, and no job twice;
//   - a job gets exactly the number of nodes it requests, each a node of
//     the topology, none twice;
//   - it starts at or after the window time;
//   - each of its nodes is free at the start: idle, or left by every
//     running job on it by then;
//   - no node runs two allocated jobs at once, a job occupying its nodes
//     over [start, start + walltime).
//
// Check does not require that every job be allocated: deferring is allowed.
//
// A units allocation (Units set; see checkUnits for its rules) is held to
// the time-and-resource model instead of the node count and whole-node
// rules: its units, their node capacities at every time, exclusivity and
// place. Every allocation, of either kind, must keep off the window's
// reservations.
func Check(w *Window, allocs []Allocation) error {
	var problems []error
	add := func(format string, args ...any) {
		if len(problems) < maxCheckProblems {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	sc := checkPool.Get().(*checkScratch)
	defer checkPool.Put(sc)
	var t freeTable
	t.mark(w, allocs, sc)
	t.fill(w)
	n := t.n
	// uses holds the uses of the nodes marked twice.
	var uses []nodeSpan
	seenJob := make([]bool, len(w.Jobs))
	for a, al := range allocs {
		if al.Job < 0 || al.Job >= len(w.Jobs) {
			add("allocation %d: unknown job index %d", a, al.Job)
			continue
		}
		job := &w.Jobs[al.Job]
		if seenJob[al.Job] {
			add("job %s: allocated twice", job.ID)
			continue
		}
		seenJob[al.Job] = true
		if al.Units == nil && len(al.Nodes) != job.Nodes {
			add("job %s: got %d nodes, requested %d", job.ID, len(al.Nodes), job.Nodes)
		}
		if al.Start < w.Time {
			add("job %s: starts at %d, before the window time %d", job.ID, al.Start, w.Time)
		}
		if al.Start-w.Time > MaxTime {
			add("job %s: starts at %d, more than %d s after the window time", job.ID, al.Start, int64(MaxTime))
			continue
		}
		if al.Units != nil {
			continue // checkUnits
		}
		first := len(uses)
		for _, k := range al.Nodes {
			if k < 0 || k >= n {
				add("job %s: node id %d is not in the topology", job.ID, k)
				continue
			}
			switch f := t.freeFrom[t.slot(k)]; {
			case f == never:
				add("job %s: node %s is neither idle nor freed by a running job", job.ID, w.Topology.Name(k))
			case al.Start < f:
				add("job %s: node %s is busy until %d, the job starts at %d", job.ID, w.Topology.Name(k), f, al.Start)
			}
			if t.shared(k) {
				uses = append(uses, nodeSpan{node: k, from: al.Start, to: al.Start + job.Walltime, job: al.Job})
			}
		}
		// A node given twice within the job.
		mine := uses[first:]
		slices.SortFunc(mine, func(a, b nodeSpan) int { return a.node - b.node })
		for i := 1; i < len(mine); i++ {
			if mine[i].node == mine[i-1].node {
				add("job %s: node %s given twice", job.ID, w.Topology.Name(mine[i].node))
			}
		}
	}
	checkOverlaps(w, uses, add)
	checkUnits(w, allocs, add)
	checkReservations(w, allocs, add)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInfeasible, errors.Join(problems...))
}

// never is the free-from time of a node neither idle nor running.
const never = int64(1<<63 - 1)

// A freeTable keeps, for Check, the time from which each node the
// allocations use may run a new job: the window time for an idle node,
// the latest end of the running jobs on it, or never (a node neither idle
// nor running: down, reserved, ...). It is kept for the nodes the
// allocations use only (marked in a bitset first, each at its rank among
// the marked nodes, or at its id when they are a large share of the
// nodes), so that checking a few jobs on a 10⁶-node window does not fill
// a table of every node, and checking thousands of nodes needs no hash
// map. Nodes used more than once (marked twice) are the only ones on
// which two uses can clash, so only their uses are sorted (Check).
type freeTable struct {
	n int
	// inUse marks the nodes the allocations use, twice those used more
	// than once; left is the pass over Idle's scratch.
	inUse, twice, left []uint64
	// rank[i] counts the marked nodes below word i. When the allocations
	// cover a large share of the topology (at least one node in
	// directShare), freeFrom is indexed by node id instead (direct: a
	// marked node's slot is its id; the table is at most directShare × 8
	// bytes per allocated node), which spares the ranks and a popcount
	// per look-up; only the marked nodes' entries are ever written or
	// read.
	rank     []int32
	direct   bool
	distinct int
	freeFrom []int64
}

// mark marks the nodes of allocs and sizes the table, in sc's scratch.
func (t *freeTable) mark(w *Window, allocs []Allocation, sc *checkScratch) {
	n := w.Topology.NumNodes()
	t.n = n
	words := (n + 63) / 64
	inUse := slices.Grow(sc.bits[:0], 3*words)[:3*words]
	sc.bits = inUse
	t.left = inUse[2*words:]
	inUse = inUse[:2*words]
	clear(inUse)
	t.twice = inUse[words:]
	t.inUse = inUse[:words]
	total := 0
	for _, al := range allocs {
		total += len(al.Nodes)
		for _, k := range al.Nodes {
			if k >= 0 && k < n {
				bit := uint64(1) << (k % 64)
				t.twice[k/64] |= t.inUse[k/64] & bit
				t.inUse[k/64] |= bit
			}
		}
	}
	t.direct = total*directShare >= n
	rank := sc.rank[:0]
	if !t.direct {
		rank = slices.Grow(rank, words)[:words]
		sc.rank = rank
	}
	for i, x := range t.inUse {
		if !t.direct {
			rank[i] = int32(t.distinct)
		}
		t.distinct += bits.OnesCount64(x)
	}
	t.rank = rank
	size := t.distinct
	if t.direct {
		size = n
	}
	t.freeFrom = slices.Grow(sc.freeFrom[:0], size)[:size]
	sc.freeFrom = t.freeFrom
}

func (t *freeTable) marked(k int) bool {
	return k >= 0 && k < t.n && t.inUse[k/64]&(1<<(k%64)) != 0
}

// slot returns where marked node k's free-from time is kept: its rank,
// or its id.
func (t *freeTable) slot(k int) int {
	if t.direct {
		return k
	}
	return int(t.rank[k/64]) + bits.OnesCount64(t.inUse[k/64]&(1<<(k%64)-1))
}

func (t *freeTable) shared(k int) bool { return t.twice[k/64]&(1<<(k%64)) != 0 }

// resetFree sets every marked node's free-from time to never.
func (t *freeTable) resetFree() {
	if !t.direct {
		for i := range t.freeFrom {
			t.freeFrom[i] = never
		}
		return
	}
	for i, x := range t.inUse {
		for ; x != 0; x &= x - 1 {
			t.freeFrom[i*64+bits.TrailingZeros64(x)] = never
		}
	}
}

// fill writes every marked node's free-from time. An idle node is free
// from the window time whatever runs on it, so when every marked node is
// idle the running jobs (every busy node of the cluster) need not be
// read. Few marked nodes are looked up in Idle by binary search (a hit is
// in Idle, sorted or not; a miss, in an unsorted list, only costs the
// full pass), many by one pass over it (up to the last marked node met);
// when not every marked node is idle, the table is reset and filled from
// the running jobs, then Idle.
func (t *freeTable) fill(w *Window) {
	n, freeFrom := t.n, t.freeFrom
	allIdle := t.distinct == 0
	if t.distinct > 0 && t.distinct*16 < len(w.Idle) {
		found := 0
		for i, x := range t.inUse {
			for ; x != 0; x &= x - 1 {
				k := i*64 + bits.TrailingZeros64(x)
				if _, ok := slices.BinarySearch(w.Idle, k); !ok {
					break
				}
				freeFrom[t.slot(k)] = w.Time
				if found++; found == t.distinct {
					break // every marked node is met: the rest of Idle is not needed
				}
			}
		}
		allIdle = found == t.distinct
	} else if t.distinct > 0 {
		// left: the marked nodes not yet met in Idle.
		left := t.left
		copy(left, t.inUse)
		found := 0
		for _, k := range w.Idle {
			if k >= 0 && k < n && left[k/64]&(1<<(k%64)) != 0 {
				left[k/64] &^= 1 << (k % 64)
				freeFrom[t.slot(k)] = w.Time
				if found++; found == t.distinct {
					break // every marked node is met: the rest of Idle is not needed
				}
			}
		}
		allIdle = found == t.distinct
	}
	if allIdle {
		return
	}
	t.resetFree()
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			if !t.marked(k) {
				continue
			}
			if f := &freeFrom[t.slot(k)]; *f == never || r.End > *f {
				*f = r.End
			}
		}
	}
	for _, k := range w.Idle {
		if t.marked(k) {
			freeFrom[t.slot(k)] = w.Time
		}
	}
}

// A nodeSpan is a job's use of a node over [from, to).
type nodeSpan struct {
	node     int
	from, to int64
	job      int
}

// checkOverlaps reports the jobs that share a node and overlap in time.
// It sorts the uses by node, then start, and compares each use with the
// earlier use of the same node that ends last, so that no overlap hides
// behind a short job.
func checkOverlaps(w *Window, uses []nodeSpan, add func(string, ...any)) {
	slices.SortFunc(uses, func(a, b nodeSpan) int {
		if a.node != b.node {
			return a.node - b.node
		}
		if a.from != b.from {
			if a.from < b.from {
				return -1
			}
			return 1
		}
		return a.job - b.job
	})
	last := 0
	for i := 1; i < len(uses); i++ {
		if uses[i].node != uses[last].node {
			last = i
			continue
		}
		if uses[i].job != uses[last].job && uses[i].from < uses[last].to {
			add("node %s: jobs %s and %s overlap in time", w.Topology.Name(uses[i].node),
				w.Jobs[uses[last].job].ID, w.Jobs[uses[i].job].ID)
		}
		if uses[i].to > uses[last].to {
			last = i
		}
	}
}
