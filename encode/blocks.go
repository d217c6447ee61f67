package encode

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/optsched/optsched/model"
)

// A Blocks holds what both SCAS formulations and the CSP graph need: the
// idle sequence Q, the problem's jobs grouped by size, and the CH cost of
// every block D(i, r) ([Lan23] §IV-A) for every requested size r.
type Blocks struct {
	Window *model.Window
	// Q is the idle sequence (node ids in increasing order).
	Q []int
	// Sizes are the distinct requested sizes, ascending.
	Sizes []int
	// Jobs[s] are the problem's jobs of size Sizes[s], in problem order;
	// ε_r of [Lan23] is len(Jobs[s]).
	Jobs [][]int
	// Cost[s][i] is the CH cost of D(i, Sizes[s]), wrapping to the head
	// of Q when fewer than Sizes[s] positions remain after i.
	Cost [][]int64
}

// NewBlocks groups jobs by size and prices every block. It prices blocks
// by sliding a model.HopCounter along Q (HopCounter.Slide: one node out,
// one in, O(1) a step within a stretch of both ends on one leaf each), so
// the cost is O(|Q| + stretches × height) per size rather than
// O(|Q| × r × height). It returns an
// error if the jobs need more nodes than Q has.
func NewBlocks(w *model.Window, jobs []int) (*Blocks, error) {
	return NewBlocksContext(context.Background(), w, jobs)
}

// NewBlocksContext is NewBlocks that stops with ctx's error when ctx ends
// first (pricing every block is O(sizes × |Q| × height)).
func NewBlocksContext(ctx context.Context, w *model.Window, jobs []int) (*Blocks, error) {
	b := &Blocks{Window: w, Q: w.Idle}
	need := 0
	bySize := map[int][]int{}
	for _, j := range jobs {
		if j < 0 || j >= len(w.Jobs) {
			return nil, fmt.Errorf("encode: job index %d out of range", j)
		}
		n := w.Jobs[j].Nodes
		need += n
		bySize[n] = append(bySize[n], j)
	}
	if need > len(b.Q) {
		return nil, fmt.Errorf("encode: the jobs need %d nodes, %d are idle", need, len(b.Q))
	}
	for r := range bySize {
		b.Sizes = append(b.Sizes, r)
	}
	slices.Sort(b.Sizes)
	nq := len(b.Q)
	b.Cost = make([][]int64, len(b.Sizes))
	for _, r := range b.Sizes {
		b.Jobs = append(b.Jobs, bySize[r])
	}
	// The sizes are priced independently: on a long idle sequence, half
	// of them on a second goroutine (the machine's second core), each
	// table the same as priced alone.
	if len(b.Sizes) >= 2 && nq >= parallelBlocks {
		errc := make(chan error, 1)
		go func() { errc <- b.price(ctx, 1) }()
		err := b.price(ctx, 0)
		if err2 := <-errc; err == nil {
			err = err2
		}
		if err != nil {
			b.Release()
			return nil, err
		}
		return b, nil
	}
	if err := b.price(ctx, -1); err != nil {
		b.Release()
		return nil, err
	}
	return b, nil
}

// parallelBlocks is the shortest idle sequence whose block prices
// NewBlocksContext splits between two goroutines (a variable for the
// tests).
var parallelBlocks = 4096

// price fills b.Cost[s] for the sizes s of parity half (all when half
// is negative).
func (b *Blocks) price(ctx context.Context, half int) error {
	w, nq := b.Window, len(b.Q)
	h := model.GetHopCounter(w.Topology)
	defer h.Release()
	for s, r := range b.Sizes {
		if half >= 0 && s%2 != half {
			continue
		}
		cost := costBuf(nq)
		b.Cost[s] = cost
		h.Reset()
		h.AddNodes(b.Q[:r])
		// Slid in chunks of 4096 positions, the deadline checked between
		// them; the hops go in the table and are priced in place.
		for i := 0; i < nq; i += 4096 {
			if ctx.Err() != nil {
				return fmt.Errorf("encode: pricing the blocks: %w", ctx.Err())
			}
			to := min(nq, i+4096)
			h.Slide(b.Q, r, i, to, cost[i:to])
			w.Cost.FromHopsAll(r, cost[i:to])
		}
	}
	return nil
}

// costPool holds price tables of Blocks given back by Release: a window
// solver at archive scale prices tens of thousands of positions per size
// in every window, and allocating (and zeroing) the tables was a tenth
// of its time.
var costPool sync.Pool

// costBuf returns a table of n prices, reused when one is free; every
// entry is written before it is read.
func costBuf(n int) []int64 {
	if p, ok := costPool.Get().(*[]int64); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]int64, n)
}

// Release gives b's price tables back for reuse by later Blocks; b, and
// every Cost slice taken from it, must not be used afterwards.
func (b *Blocks) Release() {
	for _, c := range b.Cost {
		if c != nil {
			costPool.Put(&c)
		}
	}
	b.Cost = nil
}

// Block returns the node ids of D(i, r).
func (b *Blocks) Block(i, r int) []int { return b.Window.Block(i, r) }

// Covers reports whether D(i, r) covers position k of Q.
func (b *Blocks) Covers(i, r, k int) bool {
	d := k - i
	if d < 0 {
		d += len(b.Q)
	}
	return d < r
}

// Allocate turns chosen starts into allocations: starts[s] lists the start
// positions of the blocks of size Sizes[s]; the jobs of that size take them
// in problem order and ascending start order. It returns an error if a
// size gets the wrong number of starts.
func (b *Blocks) Allocate(starts [][]int) ([]model.Allocation, error) {
	if len(starts) != len(b.Sizes) {
		return nil, fmt.Errorf("encode: %d start lists for %d sizes", len(starts), len(b.Sizes))
	}
	var out []model.Allocation
	for s, r := range b.Sizes {
		if len(starts[s]) != len(b.Jobs[s]) {
			return nil, fmt.Errorf("encode: %d blocks of size %d for %d jobs", len(starts[s]), r, len(b.Jobs[s]))
		}
		st := slices.Sorted(slices.Values(starts[s]))
		for k, j := range b.Jobs[s] {
			if st[k] < 0 || st[k] >= len(b.Q) {
				return nil, fmt.Errorf("encode: start %d out of range", st[k])
			}
			out = append(out, model.Allocation{Job: j, Nodes: b.Block(st[k], r), Start: b.Window.Time})
		}
	}
	return out, nil
}

// Objective returns the total cost of chosen starts (as for Allocate).
func (b *Blocks) Objective(starts [][]int) int64 {
	var sum int64
	for s := range starts {
		for _, i := range starts[s] {
			sum += b.Cost[s][i]
		}
	}
	return sum
}
