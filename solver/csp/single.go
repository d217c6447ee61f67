package csp

import (
	"context"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// single solves a window of one job, of n nodes, without the graph: the
// general path prices every block D(i, n) into a table, offers the
// sequential placement (block 0), then the greedy one (the first cheapest
// block), and proves the better by the trivial bound, the cheapest block.
// single prices the blocks by the same sliding count without keeping them
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
	h := model.NewHopCounter(w.Topology)
	h.AddNodes(q[:n])
	nq := len(q)
	// The price is non-decreasing in the hops, so only a block of fewer
	// hops than the best so far can be cheaper: prices are computed for
	// those only.
	// The hops are slid (HopCounter.Slide) a chunk of 4096 positions at
	// a time, the deadline checked between chunks.
	var buf [4096]int64
	minHops := h.Hops()
	best, at := w.Cost.FromHops(n, minHops), 0
	for from := 0; from < nq; from += len(buf) {
		if from > 0 && ctx.Err() != nil {
			return seqResult(p), true
		}
		to := min(nq, from+len(buf))
		h.Slide(q, n, from, to, buf[:])
		for k, hops := range buf[:to-from] {
			if hops < minHops {
				minHops = hops
				if c := w.Cost.FromHops(n, hops); c < best {
					best, at = c, from+k
				}
			}
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
