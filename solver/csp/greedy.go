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
// free positions. It offers the result and reports whether it improved the
// incumbent.
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
	for _, s := range jobs {
		r := g.Sizes[s]
		freeRuns(used, run)
		best, at := int64(inf), -1
		for i, c := range g.Cost[s] {
			if run[i] >= r && c < best {
				best, at = c, i
			}
		}
		if at < 0 {
			return false
		}
		for d := 0; d < r; d++ {
			used[(at+d)%nq] = true
		}
		starts[s] = append(starts[s], at)
	}
	return st.offer(starts, how)
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
