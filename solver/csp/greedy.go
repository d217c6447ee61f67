package csp

import "slices"

// greedy places the jobs one by one, largest first, each on the cheapest
// block of free positions (wrap-around included), and offers the result.
// When the cluster is nearly full a late job may find no free block of its
// size; greedy then gives up and offers nothing. O(jobs × |Q|).
func (st *search) greedy() bool {
	return st.complete(make([][]int, len(st.g.Sizes)), "greedy")
}

// complete keeps the given blocks (disjoint, at most ε_s of each size) and
// places the remaining jobs, largest first, each on the cheapest block of
// free positions. A job that finds no free block of its size (the window
// is nearly full, or fragmented) is put into the order of blocks along Q
// at the start of the longest free run, and the whole order is then placed
// by orderedDP, which always succeeds. It offers the result and reports
// whether it improved the incumbent.
func (st *search) complete(starts [][]int, how string) bool {
	g, nq := st.g, st.nq
	used := make([]bool, nq)
	var jobs []int // size indices, one per job still to place
	for s, e := range st.eps {
		for _, i := range starts[s] {
			for d := 0; d < g.Sizes[s]; d++ {
				used[(i+d)%nq] = true
			}
		}
		for range e - len(starts[s]) {
			jobs = append(jobs, s)
		}
	}
	slices.SortStableFunc(jobs, func(a, b int) int { return g.Sizes[b] - g.Sizes[a] })
	run := make([]int, nq) // free positions from i on, circularly, capped at nq
	freeRuns(used, run)
	type stray struct{ pos, s int }
	var strays []stray
	for _, s := range jobs {
		if st.ctx != nil && st.ctx.Err() != nil {
			return false // out of time: offer nothing
		}
		r := g.Sizes[s]
		best, at := int64(inf), -1
		cost := g.Cost[s]
		run := run[:len(cost)]
		for i, c := range cost {
			if c < best && run[i] >= r {
				best, at = c, i
			}
		}
		if at < 0 {
			longest := 0 // the first longest free run
			for i := range run {
				if run[i] > run[longest] {
					longest = i
				}
			}
			strays = append(strays, stray{longest, s})
			continue
		}
		for d := 0; d < r; d++ {
			used[(at+d)%nq] = true
			run[(at+d)%nq] = 0
		}
		// The free positions just before the block now run up to it.
		for i, c := (at-1+nq)%nq, 1; c < nq && !used[i]; i, c = (i-1+nq)%nq, c+1 {
			run[i] = c
		}
		starts[s] = append(starts[s], at)
	}
	if len(strays) == 0 {
		return st.offer(starts, how)
	}
	// Order every block by position, strays at their free run, and let
	// orderedDP place them all.
	var all []stray
	for s := range starts {
		for _, i := range starts[s] {
			all = append(all, stray{i, s})
		}
	}
	all = append(all, strays...)
	slices.SortStableFunc(all, func(a, b stray) int { return a.pos - b.pos })
	order := make([]int, len(all))
	for k, b := range all {
		order[k] = b.s
	}
	_, placed := st.orderedDP(order)
	if placed == nil {
		return false
	}
	return st.offer(placed, how+", ordered dp")
}

// freeRuns sets run[i] to the number of consecutive free positions from i
// on, going round the end of Q, capped at len(used).
func freeRuns(used []bool, run []int) {
	n := len(used)
	// Two passes backwards over the doubled sequence handle wrap-around.
	next := 0
	for pass := 0; pass < 2; pass++ {
		for i := n - 1; i >= 0; i-- {
			if used[i] {
				next = 0
			} else {
				next = min(next+1, n)
			}
			run[i] = next
		}
	}
}
