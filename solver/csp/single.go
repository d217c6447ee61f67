package csp

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// singleStep is how many positions the one-job path walks between two
// looks at the least price (see single); a variable for the tests.
var singleStep = 256

// single solves a window of one job, of n nodes, without the graph: the
// general path prices every block D(i, n) into a table, offers the
// sequential placement (block 0), then the greedy one (the first cheapest
// block), and proves the better by the trivial bound, the cheapest block.
// single walks the same sliding count by stretches, pricing two blocks a
// stretch (the rest only to find the first of a price), without a table,
// and answers the same: block 0 if it is a cheapest block, else the first
// cheapest. ok is false when the job is not one the general path would
// place (an index out of range, more nodes than idle); it then reports
// nothing. When ctx ends while pricing, the answer is the sequential
// placement, as for the general path.
func (s Solver) single(ctx context.Context, p *solver.Problem) (res *solver.Result, ok bool) {
	w := p.Window
	j := p.Jobs[0]
	if j < 0 || j >= len(w.Jobs) {
		return nil, false
	}
	q, n := w.Idle, w.Jobs[j].Nodes
	if n > len(q) || n < 1 {
		return nil, false
	}
	t0 := time.Now()
	nq := len(q)
	// The hops are concave along a stretch of the slide
	// (HopCounter.Stretches) and the price is non-decreasing in the
	// hops, so a stretch's cheapest blocks include one of its ends: its
	// first block is priced, and its last; only when the last is cheaper
	// than every block before does the stretch get walked, for the first
	// block of that price. Q is walked in chunks (encode.ChunkSpan),
	// shared among goroutines on a long Q (encode.Chunks), each chunk
	// from a counter of its own; the deadline is checked every 4096
	// positions. Each chunk finds its first cheapest block, and the first
	// chunk of the least price holds the first cheapest of all.
	// A chunk stops at its first block of the least price any n nodes
	// can have (model.CostModel.MinCost, on a topology with one): no
	// later block is cheaper, so it holds the chunk's first cheapest.
	// It looks every singleStep positions (every 4096 without a bound).
	// Once a chunk has found that least price, the chunks after it stop
	// too: their blocks come later in Q, so none of them is the first
	// cheapest (hit is the lowest chunk that found it).
	least, step := int64(math.MinInt64), 4096
	if c, ok := w.Cost.MinCost(w.Topology, n); ok {
		least, step = c, singleStep
	}
	shared := nq >= encode.MinShared
	span := encode.ChunkSpan(nq, shared)
	chunks := (nq + span - 1) / span
	bests := make([]int64, chunks)
	ats := make([]int, chunks)
	var hit atomic.Int64
	hit.Store(int64(chunks))
	err := encode.Chunks(chunks, shared, func(c int) error {
		from, to := c*span, min(nq, c*span+span)
		h := model.GetHopCounter(w.Topology)
		defer h.Release()
		encode.AddBlock(h, q, from, n)
		best, at := int64(math.MaxInt64), -1
		cheaper := func(k, l int, hops, step, bend int64) {
			if c := w.Cost.FromHops(n, hops); c < best {
				best, at = c, k
			}
			if l == 1 {
				return
			}
			m := int64(l - 1)
			last := w.Cost.FromHops(n, hops+m*step+m*(m-1)/2*bend)
			if last >= best {
				return
			}
			for j := 1; j < l; j++ {
				hops += step
				step += bend
				if w.Cost.FromHops(n, hops) == last {
					best, at = last, k+j
					return
				}
			}
		}
		for i := from; i < to; i += step {
			if i > 0 && (i-from)%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if hit.Load() < int64(c) {
				break // an earlier chunk holds a block of the least price
			}
			h.Stretches(q, n, i, min(to, i+step), cheaper)
			if best <= least {
				// No block costs less: the chunk's first cheapest is found.
				for h := hit.Load(); int64(c) < h && !hit.CompareAndSwap(h, int64(c)); h = hit.Load() {
				}
				break
			}
		}
		bests[c], ats[c] = best, at
		return nil
	})
	if err != nil {
		return seqResult(p), true
	}
	best, at := bests[0], ats[0]
	for c := 1; c < chunks; c++ {
		if bests[c] < best {
			best, at = bests[c], ats[c]
		}
	}
	pub := p.Publish()
	pub.Raise(float64(best))
	allocs := []model.Allocation{{Job: j, Nodes: w.Block(at, n), Start: w.Time}}
	pub.Offer(best, "csp", allocs, nil)
	stats := solver.Stats{CSP: &solver.CSPStats{States: 2, Method: "trivial", Single: true,
		ElapsedMS: float64(time.Since(t0).Microseconds()) / 1000}}
	return &solver.Result{Status: solver.Optimal, Allocations: allocs, Objective: best, Bound: float64(best),
		Encoding: "csp", Solver: "csp", Stats: stats}, true
}
