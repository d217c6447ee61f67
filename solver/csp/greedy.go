package csp

import (
	"context"
	"slices"
)

// greedy places the jobs one by one, largest first, each on the cheapest
// block of free positions (wrap-around included), and offers the result.
// When the cluster is nearly full a late job may find no free block of its
// size; complete then places every block by orderedDP. O(jobs × |Q|).
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
	g := st.g
	var jobs []int // size indices, one per job still to place
	for s, e := range st.eps {
		for range e - len(starts[s]) {
			jobs = append(jobs, s)
		}
	}
	slices.SortStableFunc(jobs, func(a, b int) int { return g.Sizes[b] - g.Sizes[a] })
	strays, ok := placeGreedy(st.ctx, g.Sizes, g.Cost, st.nq, starts, jobs)
	if !ok {
		return false // out of time: offer nothing
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

// stray is a block of size index s at position pos of Q.
type stray struct{ pos, s int }

// span is the positions [lo, hi) of Q.
type span struct{ lo, hi int }

// placeGreedy places jobs (size indices) in order, each at the first
// position i of cost[s] with the least price whose block of sizes[s]
// positions from i (circularly, on a cycle of nq positions) is free of the
// blocks in starts and of those placed before it, and appends it to
// starts[s]. A job with no such position is not placed: it is returned as
// a stray at the first position i of cost[s] with the longest free run from
// i (circularly, capped at nq; position 0 when every position is used). It
// reports false when ctx ended before every job was tried.
//
// The used positions are kept as sorted disjoint spans, and each job scans
// only the positions from which its block fits: O(jobs × (|Q| + blocks))
// without a table of free runs.
func placeGreedy(ctx context.Context, sizes []int, cost [][]int64, nq int, starts [][]int, jobs []int) ([]stray, bool) {
	var used []span // sorted by lo, disjoint, non-empty, within [0, nq)
	for s := range starts {
		for _, i := range starts[s] {
			used = addSpan(used, i, sizes[s], nq)
		}
	}
	used = mergeSpans(used)
	var strays []stray
	var fit []span // the positions a block fits from, ascending
	for _, s := range jobs {
		if ctx != nil && ctx.Err() != nil {
			return nil, false
		}
		r, c := sizes[s], cost[s]
		fit = fitSpans(fit[:0], used, nq, r, len(c))
		best, at := int64(inf), -1
		for _, f := range fit {
			for i, v := range c[f.lo:f.hi] {
				if v < best {
					best, at = v, f.lo+i
				}
			}
		}
		if at < 0 {
			strays = append(strays, stray{longestRun(used, nq, len(c)), s})
			continue
		}
		used = mergeSpans(addSpan(used, at, r, nq))
		starts[s] = append(starts[s], at)
	}
	return strays, true
}

// addSpan appends to used the positions of the block of r positions from
// lo (circularly on nq: two spans when it wraps), unmerged.
func addSpan(used []span, lo, r, nq int) []span {
	if hi := lo + r; hi > nq {
		return append(used, span{lo, nq}, span{0, hi - nq})
	}
	return append(used, span{lo, lo + r})
}

// mergeSpans sorts spans by lo and merges those that overlap or touch.
func mergeSpans(sp []span) []span {
	slices.SortFunc(sp, func(a, b span) int { return a.lo - b.lo })
	out := sp[:0]
	for _, x := range sp {
		if n := len(out); n > 0 && x.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	return out
}

// fitSpans appends to dst, ascending, the positions i < lim from which r
// positions (circularly on nq) avoid every span of used (sorted, disjoint,
// merged).
func fitSpans(dst, used []span, nq, r, lim int) []span {
	push := func(lo, hi int) {
		hi = min(hi, lim)
		if lo < hi {
			dst = append(dst, span{lo, hi})
		}
	}
	if len(used) == 0 {
		if r <= nq {
			push(0, nq)
		}
		return dst
	}
	// The free gap round the end of Q: [tail, nq) then [0, head).
	head, tail := used[0].lo, used[len(used)-1].hi
	wrap := (nq - tail) + head
	push(0, head-r+1) // from the head part: i + r ≤ head
	for k := 0; k+1 < len(used); k++ {
		lo, hi := used[k].hi, used[k+1].lo
		push(lo, hi-r+1)
	}
	if wrap >= r {
		// From the tail part: i + r ≤ nq + head.
		push(tail, min(nq, nq+head-r+1))
	}
	return dst
}

// longestRun is the first position i < lim with the longest run of free
// positions from i (circularly, capped at nq), or 0 when every position is
// used or none is before lim.
func longestRun(used []span, nq, lim int) int {
	if len(used) == 0 {
		return 0
	}
	head, tail := used[0].lo, used[len(used)-1].hi
	best, at := 0, 0
	consider := func(i, run int) {
		if i < lim && run > best {
			best, at = run, i
		}
	}
	// Runs fall along a gap, so each gap's longest run before lim is at
	// its first position before lim; gaps are taken in order of position.
	wrap := (nq - tail) + head
	if head > 0 {
		consider(0, head) // position 0 is free: its run ends at head
	}
	for k := 0; k+1 < len(used); k++ {
		consider(used[k].hi, used[k+1].lo-used[k].hi)
	}
	if tail < nq {
		consider(tail, wrap)
	}
	return at
}
