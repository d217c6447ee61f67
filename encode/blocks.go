package encode

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

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
// O(|Q| × r × height), in chunks shared among up to Workers goroutines
// (Chunks). It returns an
// error if the jobs need more nodes than Q has.
func NewBlocks(w *model.Window, jobs []int) (*Blocks, error) {
	return NewBlocksContext(context.Background(), w, jobs)
}

// NewBlocksContext is NewBlocks that stops with ctx's error when ctx ends
// first (pricing every block is O(sizes × |Q| × height)).
func NewBlocksContext(ctx context.Context, w *model.Window, jobs []int) (*Blocks, error) {
	b, err := Group(w, jobs)
	if err != nil {
		return nil, err
	}
	b.Cost = make([][]int64, len(b.Sizes))
	if err := b.price(ctx); err != nil {
		b.Release()
		return nil, err
	}
	return b, nil
}

// Group is NewBlocks without the prices: it groups jobs by size (Sizes,
// Jobs, with the same checks and errors) and leaves Cost nil, for a
// caller that prices only the blocks it looks at. Allocate works on it;
// Objective does not.
func Group(w *model.Window, jobs []int) (*Blocks, error) {
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
	for _, r := range b.Sizes {
		b.Jobs = append(b.Jobs, bySize[r])
	}
	return b, nil
}

// price fills b.Cost: every size's table is cut into chunks
// (ChunkSpan), and the chunks are priced on up to Workers goroutines
// (Chunks), each from a counter of its own filled with the block at the
// chunk's first position. Each price is the block's hop count, an
// integer the slide computes exactly whatever block it starts from, so
// the tables are the same however the chunks are cut and shared.
func (b *Blocks) price(ctx context.Context) error {
	w, nq := b.Window, len(b.Q)
	shared := len(b.Sizes)*nq >= MinShared
	span := ChunkSpan(nq, shared)
	perSize := (nq + span - 1) / span
	for s := range b.Sizes {
		b.Cost[s] = costBuf(nq)
	}
	return Chunks(len(b.Sizes)*perSize, shared, func(c int) error {
		s, from := c/perSize, c%perSize*span
		r, to := b.Sizes[s], min(nq, from+span)
		h := model.GetHopCounter(w.Topology)
		defer h.Release()
		AddBlock(h, b.Q, from, r)
		// Slid 4096 positions at a time, the deadline checked between;
		// the hops go in the table and are priced in place.
		for i := from; i < to; i += checkEvery {
			if ctx.Err() != nil {
				return fmt.Errorf("encode: pricing the blocks: %w", ctx.Err())
			}
			end := min(to, i+checkEvery)
			cost := b.Cost[s][i:end]
			h.Slide(b.Q, r, i, end, cost)
			w.Cost.FromHopsAll(r, cost)
		}
		return nil
	})
}

// checkEvery is how many positions the block pricing slides between two
// looks at the deadline.
const checkEvery = 4096

// ChunkSpan is the length of the chunks a table of nq positions is cut
// into: all of it unless shared, else max(ChunkLen, ⌈nq/Workers⌉), so
// that each goroutine has a share while the chunks stay few (each
// starts with a counter filled with a whole block, O(block's leaves ×
// height)).
func ChunkSpan(nq int, shared bool) int {
	if !shared {
		return max(1, nq)
	}
	return max(1, ChunkLen, (nq+Workers-1)/max(1, Workers))
}

// AddBlock adds to h the nodes of the block of r positions of q from
// position from, wrapping to the head of q: q[from], …,
// q[(from+r−1) mod len(q)] (1 ≤ r ≤ len(q)).
func AddBlock(h *model.HopCounter, q []int, from, r int) {
	if end := from + r; end <= len(q) {
		h.AddNodes(q[from:end])
	} else {
		h.AddNodes(q[from:])
		h.AddNodes(q[:end-len(q)])
	}
}

// ChunkLen is the fewest positions of a chunk of the block pricing (and
// of csp's one-job path) shared among goroutines (ChunkSpan). A variable
// for the tests.
var ChunkLen = 4096

// Workers bounds the goroutines Chunks runs (with GOMAXPROCS): the work
// of one window shares the machine's cores with nothing else of the
// simulator, which waits for it.
var Workers = 2

// MinShared is the fewest positions (sizes × |Q|) whose pricing is shared
// among goroutines: below it a goroutine would cost more than it saves.
var MinShared = 2 * 4096

// Chunks calls f(i) for each i in [0, n) and returns when every call has
// returned. Unless shared, the calls are made in order on the caller's
// goroutine. Shared, they run on min(Workers, GOMAXPROCS, n) goroutines,
// the caller's among them, each taking the lowest i no one has taken yet, so a worker that
// gets no core leaves its share to the others. After a call returns an
// error no more are started; the error returned is that of the lowest i
// that failed. The calls must be independent (they may run in any order
// and at once).
func Chunks(n int, shared bool, f func(i int) error) error {
	workers := min(Workers, runtime.GOMAXPROCS(0), n)
	if !shared || workers <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	work := func() {
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if errs[i] = f(i); errs[i] != nil {
				failed.Store(true)
			}
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
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
