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

// setBitsNode, clearBitsNode and claimNode are setBits, clearBits and
// state.claim as they were before runs of consecutive ids were taken
// together (wordRun): a node at a time, the bits of one word gathered
// while the nodes stay in it. The tests hold the new functions to them.
func setBitsNode(set []uint64, nodes []int) {
	w, m := 0, uint64(0)
	for _, k := range nodes {
		if k/64 != w {
			if m != 0 {
				set[w] |= m
			}
			w, m = k/64, 0
		}
		m |= 1 << (k % 64)
	}
	if m != 0 {
		set[w] |= m
	}
}

func clearBitsNode(set []uint64, nodes []int) {
	w, m := 0, uint64(0)
	for _, k := range nodes {
		if k/64 != w {
			if m != 0 {
				set[w] &^= m
			}
			w, m = k/64, 0
		}
		m |= 1 << (k % 64)
	}
	if m != 0 {
		set[w] &^= m
	}
}

func claimNode(idleSet []uint64, size int, allocs []model.Allocation) bool {
	w, m := 0, uint64(0)
	for i, a := range allocs {
		for j, k := range a.Nodes {
			ok := k >= 0 && k < size
			if ok && k/64 != w {
				idleSet[w] &^= m
				w, m = k/64, 0
			}
			if !ok || idleSet[w]&^m&(1<<(k%64)) == 0 {
				idleSet[w] &^= m
				for _, b := range allocs[:i] {
					setBitsNode(idleSet, b.Nodes)
				}
				setBitsNode(idleSet, a.Nodes[:j])
				return false
			}
			m |= 1 << (k % 64)
		}
	}
	idleSet[w] &^= m
	return true
}

// randomNodes returns up to 300 node ids below size, in runs of
// consecutive ids (some across words), in any order, some twice, and,
// with bad, now and then one off the cluster.
func randomNodes(rng *rand.Rand, size int, bad bool) []int {
	var nodes []int
	for range 1 + rng.IntN(6) {
		k, r := rng.IntN(size), 1+rng.IntN(130)
		for i := range r {
			if k+i < size {
				nodes = append(nodes, k+i)
			}
		}
		if bad && rng.IntN(10) == 0 {
			nodes = append(nodes, []int{-1, size, size + rng.IntN(70)}[rng.IntN(3)])
		}
	}
	if rng.IntN(3) == 0 {
		rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	}
	return nodes
}

// TestBitsAsNodeAtATime sets and clears random node lists in random bit
// sets with setBits and clearBits and with the node-at-a-time functions
// they replaced: the sets must be equal.
func TestBitsAsNodeAtATime(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 3))
	for trial := range 2000 {
		size := 1 + rng.IntN(400)
		set := make([]uint64, (size+63)/64)
		for i := range set {
			set[i] = rng.Uint64()
		}
		nodes := randomNodes(rng, size, false)
		got, want := slices.Clone(set), slices.Clone(set)
		op, ref := setBits, setBitsNode
		if trial%2 == 1 {
			op, ref = clearBits, clearBitsNode
		}
		op(got, nodes)
		ref(want, nodes)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (clear %v): nodes %v: %x, want %x", trial, trial%2 == 1, nodes, got, want)
		}
	}
}

// TestClaimAsNodeAtATime claims random allocations (runs, nodes busy,
// named twice or off the cluster) in random idle sets with state.claim
// and with the node-at-a-time claim it replaced: the answer and the idle
// set after must be equal. Both answers must occur.
func TestClaimAsNodeAtATime(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 4))
	claimed, refused := 0, 0
	for trial := range 3000 {
		size := 1 + rng.IntN(400)
		set := make([]uint64, (size+63)/64)
		for k := range size {
			if rng.IntN(8) != 0 {
				set[k/64] |= 1 << (k % 64)
			}
		}
		var allocs []model.Allocation
		for range 1 + rng.IntN(4) {
			allocs = append(allocs, model.Allocation{Nodes: randomNodes(rng, size, true)})
		}
		if trial%3 == 0 { // all idle, distinct and on the cluster: claimable
			seen := make([]bool, size)
			for i := range allocs {
				kept := allocs[i].Nodes[:0]
				for _, k := range allocs[i].Nodes {
					if k >= 0 && k < size && !seen[k] {
						seen[k] = true
						set[k/64] |= 1 << (k % 64)
						kept = append(kept, k)
					}
				}
				allocs[i].Nodes = kept
			}
		}
		s := &state{Cluster: &Cluster{size: size, idleSet: slices.Clone(set)}}
		want := slices.Clone(set)
		ok, wantOK := s.claim(allocs), claimNode(want, size, allocs)
		if ok != wantOK || !slices.Equal(s.idleSet, want) {
			t.Fatalf("trial %d: claim %v, want %v; idle %x, want %x", trial, ok, wantOK, s.idleSet, want)
		}
		if ok {
			claimed++
		} else {
			refused++
		}
	}
	if claimed < 300 || refused < 300 {
		t.Fatalf("%d claimed, %d refused: not both covered", claimed, refused)
	}
	t.Logf("%d claimed, %d refused", claimed, refused)
}
