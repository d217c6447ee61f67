package sched

import (
	"slices"
	"sort"
)

// A Hold is the start a plan keeps for one waiting job, the first that
// does not fit now (EASY backfilling's reservation): the jobs ranked
// behind it may start only when they do not delay it. Every field is
// derived by the adapter from the server's documents, apart from the
// planner: when each node will be empty by the running jobs' walltimes,
// the waiting jobs' order and walltimes.
type Hold struct {
	// Job is the job held for; Need the nodes it needs (All: every node
	// of Empty).
	Job  string
	Need int
	All  bool
	// Now is the cycle's time; Empty when each node that the held job may
	// have becomes empty, Now or later (a node without an entry is none
	// of its nodes).
	Now   int64
	Empty map[string]int64
	// Rank is the selection order of the waiting jobs (lower first); a
	// start whose job has no rank is not judged. Wall is a job's walltime
	// (the time it holds its nodes once started).
	Rank map[string]int
	Wall func(job string) int64
}

// A HoldViolation is a start that breaks a Hold: Start is the held job
// itself (Delays false), or a job behind it that ends after the shadow
// time (Shadow, when Need nodes are empty) and takes Took of the nodes
// empty by then, more than the Extra that the held job leaves.
type HoldViolation struct {
	Job    string
	Delays bool
	Shadow int64
	Took   []string
	Extra  int
}

// CheckHold applies a Hold to the starts of p: the held job does not
// start, and the starts ranked behind it, taken in rank order, each end
// by the shadow time or take together no more nodes empty by then than
// the extra ones. The starts ranked ahead of the held job make their
// nodes empty only when they end (Now + their walltime).
func CheckHold(h Hold, p Plan) []HoldViolation {
	hr, ok := h.Rank[h.Job]
	if !ok {
		return nil
	}
	starts := slices.Clone(p.Starts)
	sort.SliceStable(starts, func(a, b int) bool { return h.Rank[starts[a].Job] < h.Rank[starts[b].Job] })
	for _, s := range starts {
		if s.Job == h.Job {
			return []HoldViolation{{Job: h.Job}}
		}
	}
	when := make(map[string]int64, len(h.Empty))
	for k, t := range h.Empty {
		when[k] = t
	}
	for _, s := range starts {
		if r, ok := h.Rank[s.Job]; !ok || r >= hr {
			continue
		}
		for _, n := range s.Nodes {
			if t, ok := when[n]; ok {
				when[n] = max(t, h.Now+h.Wall(s.Job))
			}
		}
	}
	need := h.Need
	if h.All {
		need = len(when)
	}
	times := make([]int64, 0, len(when))
	for _, t := range when {
		times = append(times, t)
	}
	slices.Sort(times)
	if need > len(times) {
		return nil // the held job's start never comes: nothing delays it
	}
	shadow := h.Now
	if need > 0 {
		shadow = times[need-1]
	}
	extra := -need
	for _, t := range times {
		if t <= shadow {
			extra++
		}
	}
	var out []HoldViolation
	given := map[string]bool{}
	for _, s := range starts {
		if r, ok := h.Rank[s.Job]; !ok || r <= hr || h.Now+h.Wall(s.Job) <= shadow {
			continue
		}
		var take []string
		for _, n := range s.Nodes {
			if t, ok := when[n]; ok && t <= shadow && !given[n] && !slices.Contains(take, n) {
				take = append(take, n)
			}
		}
		if len(take) > extra {
			out = append(out, HoldViolation{Job: s.Job, Delays: true, Shadow: shadow, Took: take, Extra: extra})
			continue
		}
		extra -= len(take)
		for _, n := range take {
			given[n] = true
		}
	}
	return out
}
