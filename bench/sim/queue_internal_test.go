package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver/csp"
)

// withoutPositionsTail is withoutPositions as it was before it could
// move the front instead: it moves the part after the first removed
// position, left. The tests hold the new function to it.
func withoutPositionsTail(q []waiting, gone []int) []waiting {
	if len(gone) == 0 {
		return q
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	out := gone[0]
	for i, g := range gone {
		next := len(q)
		if i+1 < len(gone) {
			next = gone[i+1]
		}
		out += copy(q[out:], q[g+1:next])
	}
	return q[:out]
}

// TestWithoutPositionsAsTail removes random positions (in any order,
// some twice, bunched near the front, near the back or anywhere) from
// random queues with withoutPositions and with the tail-moving function
// it replaced: the queues left must be equal, job for job and period for
// period. Both of its paths must be taken.
func TestWithoutPositionsAsTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	front, tail := 0, 0
	for trial := range 3000 {
		n := 1 + rng.IntN(60)
		q := make([]waiting, n)
		for i := range q {
			q[i] = waiting{job: rng.IntN(1000), joined: rng.IntN(50)}
		}
		var gone []int
		span, at := n, 0
		switch rng.IntN(3) {
		case 0: // near the front
			span = 1 + rng.IntN(n)
		case 1: // near the back
			span = 1 + rng.IntN(n)
			at = n - span
		}
		for range rng.IntN(8) {
			gone = append(gone, at+rng.IntN(span))
		}
		if len(gone) > 0 && rng.IntN(4) == 0 {
			gone = append(gone, gone[rng.IntN(len(gone))]) // named twice
		}
		want := withoutPositionsTail(slices.Clone(q), slices.Clone(gone))
		got := withoutPositions(slices.Clone(q), slices.Clone(gone))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: queue %v without %v: got %v, want %v", trial, q, gone, got, want)
		}
		if len(gone) > 0 {
			u := slices.Compact(slices.Sorted(slices.Values(gone)))
			if u[len(u)-1]+1-len(u) < n-u[0]-len(u) {
				front++
			} else {
				tail++
			}
		}
	}
	if front < 500 || tail < 500 {
		t.Fatalf("front path taken %d times, tail path %d: not both covered", front, tail)
	}
	t.Logf("front path %d cases, tail path %d", front, tail)
}

// TestPricerAsOwnPricing runs the window policy on random traces with its
// pricer and pricing each job as it is recorded (as before the pricer):
// the results must be equal, costs included, with or without the
// checker and the node lists.
func TestPricerAsOwnPricing(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(34, 2))
	multi := 0
	for trial := range 60 {
		size := 4 + rng.IntN(topo.NumNodes()-3)
		tr := &trace.Trace{Jobs: randomTrace(rng, 20+rng.IntN(60), size)}
		cfg := Config{Topology: topo, Nodes: size, Policy: "window", Tau: int64(30 + rng.IntN(90)), Solver: csp.Solver{},
			MaxJobs: []int{0, 0, 1, 2, 5}[rng.IntN(5)], Check: rng.IntN(2) == 0, DiscardNodes: rng.IntN(2) == 0}
		run := func(own bool) *Result {
			c := cfg
			c.ownPricing = own
			r, err := Run(context.Background(), tr, c)
			if err != nil {
				t.Fatalf("trial %d (own pricing %v): %v", trial, own, err)
			}
			return r
		}
		ref, got := run(true), run(false)
		if fmt.Sprint(got.Jobs) != fmt.Sprint(ref.Jobs) {
			t.Fatalf("trial %d: the results differ:\n%v\n%v", trial, got.Jobs, ref.Jobs)
		}
		for _, j := range ref.Jobs {
			if j.Cost > 1 {
				multi++
			}
		}
	}
	if multi == 0 {
		t.Fatal("no job ran on nodes of more than one leaf: the costs are not covered")
	}
	t.Logf("%d jobs of cost above 1", multi)
}
