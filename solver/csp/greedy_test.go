package csp

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// placeGreedyTable is the greedy scan placeGreedy replaced: a table of
// free runs (freeRuns) kept up to date as blocks are placed, and every
// position scanned for every job.
func placeGreedyTable(sizes []int, cost [][]int64, nq int, starts [][]int, jobs []int) []stray {
	used := make([]bool, nq)
	for s := range starts {
		for _, i := range starts[s] {
			for d := 0; d < sizes[s]; d++ {
				used[(i+d)%nq] = true
			}
		}
	}
	run := make([]int, nq)
	freeRuns(used, run)
	var strays []stray
	for _, s := range jobs {
		r := sizes[s]
		best, at := int64(inf), -1
		cost := cost[s]
		run := run[:len(cost)]
		for i, c := range cost {
			if c < best && run[i] >= r {
				best, at = c, i
			}
		}
		if at < 0 {
			longest := 0
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
		for i, c := (at-1+nq)%nq, 1; c < nq && !used[i]; i, c = (i-1+nq)%nq, c+1 {
			run[i] = c
		}
		starts[s] = append(starts[s], at)
	}
	return strays
}

// freeRuns sets run[i] to the number of consecutive free positions from i
// on, going round the end of Q, capped at len(used).
func freeRuns(used []bool, run []int) {
	n := len(used)
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

// TestPlaceGreedyAsTable holds placeGreedy (free spans) to the table scan
// it replaced on random cycles: random sizes, prices with many ties, some
// blocks placed beforehand (wrapping ones included), jobs that fill the
// cycle or overflow it (strays).
// The starts placed and the strays must be the same.
func TestPlaceGreedyAsTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 3))
	var placed, strays, wraps int
	for trial := range 20000 {
		nq := 1 + rng.IntN(40)
		ns := 1 + rng.IntN(4)
		sizes := make([]int, ns)
		cost := make([][]int64, ns)
		for s := range sizes {
			sizes[s] = 1 + rng.IntN(min(nq, 1+rng.IntN(12)))
			cost[s] = make([]int64, nq)
			top := 1 + rng.IntN(6)
			for i := range cost[s] {
				cost[s][i] = int64(rng.IntN(top))
			}
		}
		// Blocks placed beforehand: disjoint, any of them may wrap.
		pre := make([][]int, ns)
		used := make([]bool, nq)
		for range rng.IntN(4) {
			s := rng.IntN(ns)
			i := rng.IntN(nq)
			ok := true
			for d := 0; d < sizes[s]; d++ {
				ok = ok && !used[(i+d)%nq]
			}
			if !ok {
				continue
			}
			for d := 0; d < sizes[s]; d++ {
				used[(i+d)%nq] = true
			}
			pre[s] = append(pre[s], i)
		}
		var jobs []int
		for range rng.IntN(8) {
			jobs = append(jobs, rng.IntN(ns))
		}
		if trial%2 == 0 {
			slices.SortStableFunc(jobs, func(a, b int) int { return sizes[b] - sizes[a] })
		}
		a, b := clone2(pre), clone2(pre)
		got, ok := placeGreedy(nil, sizes, cost, nq, a, jobs)
		if !ok {
			t.Fatal("placeGreedy without a context gave up")
		}
		want := placeGreedyTable(sizes, cost, nq, b, jobs)
		if !slices.Equal(got, want) || !equal2(a, b) {
			t.Fatalf("trial %d: nq %d, sizes %v, prices %v, before %v, jobs %v:\nspans: starts %v, strays %v\ntable: starts %v, strays %v",
				trial, nq, sizes, cost, pre, jobs, a, got, b, want)
		}
		for s := range a {
			for _, i := range a[s][len(pre[s]):] {
				placed++
				if i+sizes[s] > nq {
					wraps++
				}
			}
		}
		strays += len(got)
	}
	t.Logf("%d blocks placed (%d wrapping), %d strays", placed, wraps, strays)
	if placed < 10000 || strays < 1000 || wraps < 1000 {
		t.Fatalf("too few cases exercised: %d placed, %d wrapping, %d strays", placed, wraps, strays)
	}
}

func clone2(x [][]int) [][]int {
	y := make([][]int, len(x))
	for i := range x {
		y[i] = slices.Clone(x[i])
	}
	return y
}

func equal2(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}
