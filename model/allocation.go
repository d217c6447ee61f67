package model

import (
	"errors"
	"fmt"
	"slices"
)

// An Allocation starts one waiting job on a set of nodes.
type Allocation struct {
	// Job is an index into Window.Jobs.
	Job int
	// Nodes are the node ids the job runs on.
	Nodes []int
	// Start is the start time, at or after the window time.
	Start int64
}

// ErrInfeasible is wrapped by every error Check returns.
var ErrInfeasible = errors.New("model: infeasible allocation")

// maxCheckProblems bounds how many problems one Check error lists.
const maxCheckProblems = 10

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
func Check(w *Window, allocs []Allocation) error {
	var problems []error
	add := func(format string, args ...any) {
		if len(problems) < maxCheckProblems {
			problems = append(problems, fmt.Errorf(format, args...))
		}
	}
	n := w.Topology.NumNodes()
	idle := make(map[int]bool, len(w.Idle))
	for _, k := range w.Idle {
		idle[k] = true
	}
	// busyUntil[k] is the latest end of the running jobs on node k.
	busyUntil := map[int]int64{}
	for _, r := range w.Running {
		for _, k := range r.Nodes {
			busyUntil[k] = max(busyUntil[k], r.End)
		}
	}
	type use struct {
		from, to int64
		job      int
	}
	uses := map[int][]use{}
	seenJob := map[int]bool{}
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
		if len(al.Nodes) != job.Nodes {
			add("job %s: got %d nodes, requested %d", job.ID, len(al.Nodes), job.Nodes)
		}
		if al.Start < w.Time {
			add("job %s: starts at %d, before the window time %d", job.ID, al.Start, w.Time)
		}
		if al.Start-w.Time > maxTime {
			add("job %s: starts at %d, more than %d s after the window time", job.ID, al.Start, int64(maxTime))
			continue
		}
		seenNode := map[int]bool{}
		for _, k := range al.Nodes {
			if k < 0 || k >= n {
				add("job %s: node id %d is not in the topology", job.ID, k)
				continue
			}
			name := w.Topology.Name(k)
			if seenNode[k] {
				add("job %s: node %s given twice", job.ID, name)
				continue
			}
			seenNode[k] = true
			if !idle[k] {
				end, running := busyUntil[k]
				switch {
				case !running:
					add("job %s: node %s is neither idle nor freed by a running job", job.ID, name)
				case al.Start < end:
					add("job %s: node %s is busy until %d, the job starts at %d", job.ID, name, end, al.Start)
				}
			}
			uses[k] = append(uses[k], use{from: al.Start, to: al.Start + job.Walltime, job: al.Job})
		}
	}
	nodes := make([]int, 0, len(uses))
	for k := range uses {
		nodes = append(nodes, k)
	}
	slices.Sort(nodes)
	for _, k := range nodes {
		us := uses[k]
		slices.SortFunc(us, func(a, b use) int {
			if a.from != b.from {
				if a.from < b.from {
					return -1
				}
				return 1
			}
			return a.job - b.job
		})
		// Compare each use with the one among the earlier uses that ends
		// last, so that no overlap hides behind a short job.
		last := 0
		for i := 1; i < len(us); i++ {
			if us[i].from < us[last].to {
				add("node %s: jobs %s and %s overlap in time", w.Topology.Name(k),
					w.Jobs[us[last].job].ID, w.Jobs[us[i].job].ID)
			}
			if us[i].to > us[last].to {
				last = i
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInfeasible, errors.Join(problems...))
}
