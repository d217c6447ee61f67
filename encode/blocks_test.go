package encode_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/encode/csp"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
)

// TestBlockCosts checks the sliding-window block prices, wrap-around
// included, against the all-pairs definition on the block D(i, r).
func TestBlockCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for i := range 150 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 30, 5)
		var jobs []int
		for j := range w.Jobs {
			jobs = append(jobs, j)
		}
		b, err := encode.NewBlocks(w, jobs)
		if err != nil {
			t.Fatal(err)
		}
		for s, r := range b.Sizes {
			for i := range b.Q {
				if got, want := b.Cost[s][i], w.Cost.PairwiseCost(w.Topology, w.Block(i, r)); got != want {
					t.Fatalf("cost of D(%d,%d) = %d, all pairs %d", i, r, got, want)
				}
				for k := range b.Q {
					d := (k - i + len(b.Q)) % len(b.Q)
					if b.Covers(i, r, k) != (d < r) {
						t.Fatalf("Covers(%d,%d,%d) wrong", i, r, k)
					}
				}
			}
		}
	}
}

func TestCSPDecode(t *testing.T) {
	w, err := instances.Load("example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	sel := model.SelectJobs(w, 3)
	g, err := csp.Build(w, sel.Multi)
	if err != nil {
		t.Fatal(err)
	}
	// One arc per job, laid end to end from position 0.
	var arcs []csp.Arc
	pos := 0
	for s := range g.Sizes {
		for range g.Jobs[s] {
			arcs = append(arcs, g.Arc(s, pos))
			pos += g.Sizes[s]
		}
	}
	allocs, err := g.Decode(arcs)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Check(w, allocs); err != nil {
		t.Fatal(err)
	}
	// Overlapping arcs, a missing arc, and a wrapping arc.
	if _, err := g.Decode(append(arcs, arcs[0])); err == nil {
		t.Error("no error for overlapping arcs")
	}
	if _, err := g.Decode(arcs[1:]); err == nil {
		t.Error("no error for a missing arc")
	}
	n := g.NumVertices()
	if a := g.Arc(0, n-1); !a.Wraps || a.To != (n-1+g.Sizes[0])%n {
		t.Errorf("arc from the last position: %+v", a)
	}
}

// TestBlockCostsLarge checks the block prices of windows larger than one
// pricing chunk (4096 positions, slid in pieces) against model's Cost of
// each block, wrap-around included, on 32,768-node layouts with random
// idle sets.
func TestBlockCostsLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	topo, err := model.NewLayout(820, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 3 {
		w := largeRandomWindow(rng, topo, c)
		b, err := encode.NewBlocks(w, []int{0, 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		for s, r := range b.Sizes {
			for i := range b.Q {
				if got, want := b.Cost[s][i], w.Cost.Cost(topo, w.Block(i, r)); got != want {
					t.Fatalf("window %d: cost of D(%d,%d) = %d, Cost %d", c, i, r, got, want)
				}
			}
		}
	}
}

// TestBlockCostsChunked prices the blocks as TestBlockCosts and
// TestBlockCostsLarge do, with every size's table cut into chunks of
// random lengths shared among goroutines: each chunk's counter
// starts from the block at its first position (wrapping to the head of Q
// near its end), and every price must still be the block's Cost.
func TestBlockCostsChunked(t *testing.T) {
	defer func(l, m, k int) { encode.ChunkLen, encode.MinShared, encode.Workers = l, m, k }(encode.ChunkLen, encode.MinShared, encode.Workers)
	encode.MinShared, encode.Workers = 0, 64 // chunks of ⌈|Q|/64⌉ positions or more
	rng := rand.New(rand.NewPCG(55, 56))
	check := func(name string, w *model.Window, jobs []int) {
		t.Helper()
		b, err := encode.NewBlocks(w, jobs)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Release()
		for s, r := range b.Sizes {
			for i := range b.Q {
				if got, want := b.Cost[s][i], w.Cost.Cost(w.Topology, w.Block(i, r)); got != want {
					t.Fatalf("%s, chunks of %d: cost of D(%d,%d) = %d, Cost %d", name, encode.ChunkSpan(len(b.Q), true), i, r, got, want)
				}
			}
		}
	}
	for i := range 300 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 30, 5)
		var jobs []int
		for j := range w.Jobs {
			jobs = append(jobs, j)
		}
		encode.ChunkLen = 1 + rng.IntN(12)
		check("small window", w, jobs)
	}
	topo, err := model.NewLayout(820, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 4 {
		w := largeRandomWindow(rng, topo, c)
		encode.ChunkLen = 1 + rng.IntN(5000)
		check("large window", w, []int{0, 1, 2})
	}
}

// TestChunks holds Chunks to its contract: every index called exactly
// once whether shared or not, in order when not, and after a failure
// the error of the lowest failing index.
func TestChunks(t *testing.T) {
	defer func(k int) { encode.Workers = k }(encode.Workers)
	encode.Workers = 2
	for _, shared := range []bool{false, true} {
		for _, n := range []int{0, 1, 2, 7, 100} {
			calls := make([]atomic.Int32, n)
			var order []int
			var mu sync.Mutex
			err := encode.Chunks(n, shared, func(i int) error {
				calls[i].Add(1)
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Fatalf("shared %v, n %d: index %d called %d times", shared, n, i, c)
				}
			}
			if !shared && !slices.IsSorted(order) {
				t.Fatalf("not shared, n %d: called out of order: %v", n, order)
			}
		}
		// Every index from 5 on fails: the error is index 5's, whichever
		// goroutine met a failure first.
		err := encode.Chunks(50, shared, func(i int) error {
			if i >= 5 {
				return fmt.Errorf("index %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "index 5" {
			t.Fatalf("shared %v: error %v, want index 5's", shared, err)
		}
	}
}

// largeRandomWindow is a window on topo with about (3+c)/(4+c) of its
// nodes idle at random and three jobs: of 2 nodes, 3–42 and 100–999.
func largeRandomWindow(rng *rand.Rand, topo *model.Topology, c int) *model.Window {
	w := &model.Window{Topology: topo, Cost: model.DefaultCostModel}
	for id := range topo.NumNodes() {
		if rng.IntN(4+c) > 0 {
			w.Idle = append(w.Idle, id)
		}
	}
	for _, r := range []int{2, 3 + rng.IntN(40), 100 + rng.IntN(900)} {
		w.Jobs = append(w.Jobs, model.Job{ID: "j" + string(rune('a'+len(w.Jobs))), Nodes: r})
	}
	return w
}
