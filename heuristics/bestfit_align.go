package heuristics

import "github.com/optsched/optsched/model"

// FitTie says how the best-fit passes (BestFitMultiWith,
// BestFitSinglesWith) break the ties their free-node counts leave.
type FitTie int

const (
	// TieFirst takes the first candidate in switch and node order (the
	// passes' original rule, BestFitMulti and BestFitSingles).
	TieFirst FitTie = iota
	// TieAlign takes, among candidates the counts do not separate, the
	// one whose switches' busy nodes end closest to the job's own
	// predicted end (the window time plus its walltime): from its leaf
	// up, the switch whose last busy node ends nearest to it. Jobs that
	// end together leave a switch whole together, so the 3- and 4-node
	// jobs of later cycles find an empty switch instead of one node here
	// and there. The running jobs' ends are their Window.Running End
	// (the walltime on PBS and Slurm); the window's own multi-node starts
	// count with their walltimes. Each job's node set is still one of the
	// same CH cost, so the window's objective is unchanged.
	TieAlign
	// TieTopFirst orders BestFitSinglesWith's candidate nodes by the
	// free-node counts from the top switch below the root down (the
	// fullest quad first, then the fullest pair), where TieFirst goes
	// from the leaf up: a single-node job then breaks a free pair of a
	// nearly full quad rather than fill a lone node of an emptier quad,
	// which keeps the emptier quad able to hold a 3-node job. On a tree
	// of one level below the root (Slurm's leaves of 4) it is TieFirst.
	// BestFitMultiWith treats it as TieFirst.
	TieTopFirst
)

// switchEnds returns, for each switch, the latest end of the busy nodes
// below it (running jobs, and the given extra nodes with their ends), or
// w.Time when none is busy.
func switchEnds(w *model.Window, extra map[int]int64) []int64 {
	t := w.Topology
	end := make([]int64, t.NumSwitches())
	for s := range end {
		end[s] = w.Time
	}
	mark := func(n int, e int64) {
		for _, s := range t.Ancestors(n) {
			end[s] = max(end[s], e)
		}
	}
	for _, r := range w.Running {
		for _, n := range r.Nodes {
			mark(n, r.End)
		}
	}
	for n, e := range extra {
		mark(n, e)
	}
	return end
}

// absDiff is |a − b|.
func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}
