package model

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCheckAsBefore holds Check to the version before its node table was
// a rank over the used-node bitset (it was a map, and every use was
// sorted): on seeded random whole-node windows and allocations, feasible
// and not (nodes busy, down, out of range, given twice, shared in time),
// both must return the same error text, or both nil. A third of the
// cases (from case 3000 on) allocate idle nodes only, the case Check
// answers without reading the running jobs, on a larger cluster too, with
// the idle list sometimes unsorted and running jobs on idle nodes.
func TestCheckAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 11))
	small, err := NewLayout(3, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	large, err := NewLayout(10, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	infeasible, idleOnly, idleFeasible := 0, 0, 0
	for it := range 4500 {
		topo, onlyIdle := small, it >= 3000
		if onlyIdle && it%2 == 0 {
			topo = large
		}
		n := topo.NumNodes()
		w := &Window{Time: 100, Topology: topo, Cost: DefaultCostModel}
		perm := rng.Perm(n)
		nIdle := rng.IntN(n + 1)
		w.Idle = slices.Sorted(slices.Values(perm[:nIdle]))
		rest := perm[nIdle:]
		for len(rest) > 0 && rng.IntN(3) > 0 {
			k := 1 + rng.IntN(len(rest))
			w.Running = append(w.Running, RunningJob{ID: fmt.Sprint("r", len(w.Running)), Nodes: rest[:k], End: 100 + int64(rng.IntN(300))})
			rest = rest[k:]
		}
		if onlyIdle && len(w.Idle) > 0 && rng.IntN(3) == 0 {
			// A running job on idle nodes (the idle list wins), and an
			// unsorted idle list.
			k := 1 + rng.IntN(len(w.Idle))
			w.Running = append(w.Running, RunningJob{ID: "on-idle", Nodes: slices.Clone(w.Idle[:k]), End: 100 + int64(rng.IntN(300))})
			if rng.IntN(2) == 0 {
				rng.Shuffle(len(w.Idle), func(i, j int) { w.Idle[i], w.Idle[j] = w.Idle[j], w.Idle[i] })
			}
		}
		for j := range 1 + rng.IntN(6) {
			w.Jobs = append(w.Jobs, Job{ID: fmt.Sprint("j", j), Nodes: 1 + rng.IntN(6), Walltime: 1 + int64(rng.IntN(200))})
		}
		var allocs []Allocation
		for range rng.IntN(6) {
			job := rng.IntN(len(w.Jobs) + 1) // sometimes unknown
			size := 1 + rng.IntN(6)
			if job < len(w.Jobs) && rng.IntN(3) > 0 {
				size = w.Jobs[job].Nodes
			}
			var nodes []int
			for range size {
				switch k := rng.IntN(n + 2); {
				case onlyIdle && len(w.Idle) > 0:
					nodes = append(nodes, w.Idle[rng.IntN(len(w.Idle))])
				case k == n+1:
					nodes = append(nodes, -1)
				case rng.IntN(4) == 0 && len(w.Idle) > 0:
					nodes = append(nodes, w.Idle[rng.IntN(len(w.Idle))])
				default:
					nodes = append(nodes, k)
				}
			}
			allocs = append(allocs, Allocation{Job: job, Nodes: nodes, Start: 90 + int64(rng.IntN(400))})
		}
		got, want := Check(w, allocs), checkBefore(w, allocs)
		if fmt.Sprint(got) != fmt.Sprint(want) || errors.Is(got, ErrInfeasible) != errors.Is(want, ErrInfeasible) {
			t.Fatalf("case %d: Check says\n%v\nbefore it said\n%v", it, got, want)
		}
		switch {
		case onlyIdle && got == nil && len(allocs) > 0:
			idleFeasible++
		case got != nil && !onlyIdle:
			infeasible++
		}
		if onlyIdle {
			idleOnly++
		}
	}
	if infeasible < 1000 || infeasible > 2900 {
		t.Errorf("%d of 3000 cases infeasible: the cases do not exercise both answers", infeasible)
	}
	if idleFeasible < idleOnly/20 || idleFeasible == idleOnly {
		t.Errorf("%d of %d idle-only cases feasible with an allocation: the cases do not exercise both answers", idleFeasible, idleOnly)
	}
}

// checkBefore is Check as it was before (commit 2052354): a map for the
// free-from times, and every use sorted.
func checkBefore(w *Window, allocs []Allocation) error {
	var problems []error
	add := func(format string, args ...any) {
		if len(problems) < maxCheckProblems {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	n := w.Topology.NumNodes()
	// freeFrom[k] is the time from which node k may run a new job: the
	// window time for an idle node, the latest end of the running jobs on
	// it, or never (a node neither idle nor running: down, reserved, ...).
	// It is kept for the nodes the allocations use only (marked in a
	// bitset first), so that checking a few jobs on a 10⁶-node window
	// does not fill a table of every node.
	const never = int64(1<<63 - 1)
	inUse := make([]uint64, (n+63)/64)
	total := 0
	for _, al := range allocs {
		total += len(al.Nodes)
		for _, k := range al.Nodes {
			if k >= 0 && k < n {
				inUse[k/64] |= 1 << (k % 64)
			}
		}
	}
	marked := func(k int) bool { return k >= 0 && k < n && inUse[k/64]&(1<<(k%64)) != 0 }
	freeFrom := make(map[int]int64, min(total, n))
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			if !marked(k) {
				continue
			}
			if f, ok := freeFrom[k]; !ok || r.End > f {
				freeFrom[k] = r.End
			}
		}
	}
	for _, k := range w.Idle {
		if marked(k) {
			freeFrom[k] = w.Time
		}
	}
	type use struct {
		node     int
		from, to int64
		job      int
	}
	uses := make([]use, 0, total)
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
			name := w.Topology.Name(k)
			f, ok := freeFrom[k]
			if !ok {
				f = never
			}
			switch {
			case f == never:
				add("job %s: node %s is neither idle nor freed by a running job", job.ID, name)
			case al.Start < f:
				add("job %s: node %s is busy until %d, the job starts at %d", job.ID, name, f, al.Start)
			}
			uses = append(uses, use{node: k, from: al.Start, to: al.Start + job.Walltime, job: al.Job})
		}
		// A node given twice within the job.
		mine := uses[first:]
		slices.SortFunc(mine, func(a, b use) int { return a.node - b.node })
		for i := 1; i < len(mine); i++ {
			if mine[i].node == mine[i-1].node {
				add("job %s: node %s given twice", job.ID, w.Topology.Name(mine[i].node))
			}
		}
	}
	// Jobs sharing a node must not overlap in time. Sort the uses by node,
	// then start, and compare each use with the earlier use of the same
	// node that ends last, so that no overlap hides behind a short job.
	slices.SortFunc(uses, func(a, b use) int {
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
	checkUnits(w, allocs, add)
	checkReservations(w, allocs, add)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInfeasible, errors.Join(problems...))
}
