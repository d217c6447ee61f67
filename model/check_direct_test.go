package model

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCheckDirectAsBefore holds Check to checkBefore (the map-based Check
// of commit 2052354) on allocations on either side of its switch from
// ranks to a table by node id (directShare): seeded random windows of
// 2,000 nodes (idle, running, down), with allocations of 1–150 nodes,
// feasible and not (nodes busy, down, out of range, given twice, shared
// by jobs overlapping in time or not), sometimes with an unsorted idle
// list or only idle nodes. Both must return the same error text, or
// both nil, and both of Check's ways must be taken often, with both
// answers.
func TestCheckDirectAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 11))
	topo, err := NewLayout(50, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	n := topo.NumNodes()
	var ways [2][2]int // [direct][feasible]
	for it := range 1500 {
		w := &Window{Time: 100, Topology: topo, Cost: DefaultCostModel}
		perm := rng.Perm(n)
		nIdle := n/2 + rng.IntN(n/2+1)
		w.Idle = slices.Sorted(slices.Values(perm[:nIdle]))
		rest := perm[nIdle:]
		for len(rest) > 0 && rng.IntN(8) > 0 {
			k := 1 + rng.IntN(min(len(rest), 200))
			w.Running = append(w.Running, RunningJob{ID: fmt.Sprint("r", len(w.Running)), Nodes: rest[:k], End: 100 + int64(rng.IntN(300))})
			rest = rest[k:]
		}
		if rng.IntN(4) == 0 {
			rng.Shuffle(len(w.Idle), func(i, j int) { w.Idle[i], w.Idle[j] = w.Idle[j], w.Idle[i] })
		}
		onlyIdle := rng.IntN(2) == 0
		big := rng.IntN(2) == 0 // sizes past n/directShare
		for j := range 1 + rng.IntN(4) {
			size := 1 + rng.IntN(n/directShare/2)
			if big {
				size = 1 + rng.IntN(150)
			}
			w.Jobs = append(w.Jobs, Job{ID: fmt.Sprint("j", j), Nodes: size, Walltime: 1 + int64(rng.IntN(200))})
		}
		// Idle nodes not yet given, so that most allocations are
		// feasible unless a fault is put in.
		free := slices.Clone(w.Idle)
		rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
		var allocs []Allocation
		for job := range w.Jobs {
			if rng.IntN(5) == 0 {
				continue
			}
			size := w.Jobs[job].Nodes
			if rng.IntN(10) == 0 {
				size += rng.IntN(3) - 1
			}
			var nodes []int
			for range size {
				switch {
				case onlyIdle || rng.IntN(40) > 0:
					if len(free) > 0 && rng.IntN(60) > 0 {
						nodes = append(nodes, free[0])
						free = free[1:]
					} else {
						nodes = append(nodes, w.Idle[rng.IntN(len(w.Idle))])
					}
				case rng.IntN(5) == 0:
					nodes = append(nodes, n+rng.IntN(3)-1)
				default:
					nodes = append(nodes, rng.IntN(n))
				}
			}
			if rng.IntN(2) == 0 {
				slices.Sort(nodes)
			}
			start := int64(100)
			if rng.IntN(3) == 0 {
				start = 90 + int64(rng.IntN(400))
			}
			allocs = append(allocs, Allocation{Job: job, Nodes: nodes, Start: start})
		}
		if rng.IntN(8) == 0 && len(allocs) > 0 {
			allocs = append(allocs, allocs[0]) // a job allocated twice
		}
		got, want := Check(w, allocs), checkBefore(w, allocs)
		if fmt.Sprint(got) != fmt.Sprint(want) || errors.Is(got, ErrInfeasible) != errors.Is(want, ErrInfeasible) {
			t.Fatalf("case %d: Check says\n%v\nbefore it said\n%v", it, got, want)
		}
		total := 0
		for _, al := range allocs {
			total += len(al.Nodes)
		}
		d, f := 0, 0
		if total*directShare >= n {
			d = 1
		}
		if got == nil {
			f = 1
		}
		ways[d][f]++
	}
	t.Logf("ways %v", ways)
	for d := range 2 {
		for f := range 2 {
			if ways[d][f] < 100 {
				t.Errorf("by ranks=0/by id=1 %d, infeasible=0/feasible=1 %d: %d of 1500 cases (%v): the cases do not exercise both ways with both answers", d, f, ways[d][f], ways)
			}
		}
	}
}
