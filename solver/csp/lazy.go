package csp

import (
	"context"
	"slices"
	"time"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// lazyStep is how many positions the lazy trivial path slides between two
// looks at whether it found its block (see firstLeast).
const lazyStep = 256

// lazyTrivial answers p as the general path does when that path would
// prove its answer by the trivial bound with every job on a block of the
// least price any block of its size can have (model.CostModel.MinCost),
// without pricing every block. The general path prices every block,
// offers the sequential placement, then the greedy one (jobs largest
// first, each at the first free position of the least price, ties to the
// lowest position), keeping the incumbent on ties, and proves the better
// by Σ_s ε_s · minc[s]. Here:
//
//   - if every block of the sequential placement costs MinCost, the
//     sequential placement costs the least any placement can: the general
//     path keeps it (greedy cannot be cheaper) and proves it;
//   - else the jobs are placed in greedy's order, each at the first free
//     position (the same positions greedy may use, fitSpans) whose block
//     costs MinCost of its size. If every job finds one, every size's
//     cheapest block costs MinCost (minc = MinCost), so the general
//     greedy's least price is MinCost at every step and its first position
//     of that price is the one found here: the same placement, strictly
//     cheaper than the sequential one, proven by the same bound.
//
// ok is false, and nothing is reported, when a job finds no such block
// (at the first that fails: the general path then prices every block),
// when the topology has no MinCost (unequal depths, a negative hop cost)
// or when the problem is one the general path rejects. When ctx ends
// while pricing, the answer is the sequential placement, as when the
// general path is interrupted building its graph.
func (s Solver) lazyTrivial(ctx context.Context, p *solver.Problem) (*solver.Result, bool) {
	if ctx.Err() != nil {
		return nil, false // the general path answers at once
	}
	t0 := time.Now()
	w := p.Window
	b, err := encode.Group(w, p.Jobs)
	if err != nil {
		return nil, false
	}
	least := make([]int64, len(b.Sizes))
	for sz, r := range b.Sizes {
		c, ok := w.Cost.MinCost(w.Topology, r)
		if !ok || r < 1 {
			return nil, false
		}
		least[sz] = c
	}
	h := model.GetHopCounter(w.Topology)
	defer h.Release()
	starts, ok := seqLeast(h, w, p.Jobs, b.Sizes, least)
	if !ok {
		if starts, err = greedyLeast(ctx, h, w, b, least); err != nil {
			return seqResult(p), true
		}
		if starts == nil {
			return nil, false
		}
	}
	allocs, err := b.Allocate(starts)
	if err != nil {
		return nil, false
	}
	var obj int64
	eps := make([]int, len(b.Sizes))
	for sz, js := range b.Jobs {
		eps[sz] = len(js)
		obj += int64(len(js)) * least[sz]
	}
	pub := p.Publish()
	pub.Raise(float64(obj))
	pub.Offer(obj, "csp", allocs, nil)
	stats := &solver.CSPStats{Method: "trivial", Lazy: true, States: countStates(eps, s.maxCells())}
	stats.ElapsedMS = float64(time.Since(t0).Microseconds()) / 1000
	return &solver.Result{Status: solver.Optimal, Allocations: allocs, Objective: obj, Bound: float64(obj),
		Encoding: "csp", Solver: "csp", Stats: solver.Stats{CSP: stats}}, true
}

// seqLeast returns the sequential placement's starts per size index (job
// k of jobs at Σ_{l<k} n_l, as seqIncumbent) when every one of its blocks
// costs least of its size, and false (at the first that does not) else.
func seqLeast(h *model.HopCounter, w *model.Window, jobs, sizes []int, least []int64) ([][]int, bool) {
	starts := make([][]int, len(sizes))
	pos := 0
	for _, j := range jobs {
		n := w.Jobs[j].Nodes
		sz, _ := slices.BinarySearch(sizes, n)
		h.Reset()
		encode.AddBlock(h, w.Idle, pos, n)
		if w.Cost.FromHops(n, h.Hops()) != least[sz] {
			return nil, false
		}
		starts[sz] = append(starts[sz], pos)
		pos += n
	}
	return starts, true
}

// greedyLeast places b's jobs in greedy's order (largest first), each at
// the first position free of the blocks placed before it (fitSpans, as
// placeGreedy) whose block costs least of its size, and returns the starts
// per size index; nil, at the first job that finds none. It returns ctx's
// error when ctx ends first.
func greedyLeast(ctx context.Context, h *model.HopCounter, w *model.Window, b *encode.Blocks, least []int64) ([][]int, error) {
	nq := len(b.Q)
	starts := make([][]int, len(b.Sizes))
	var used, fit []span
	for sz := len(b.Sizes) - 1; sz >= 0; sz-- {
		r := b.Sizes[sz]
		for range b.Jobs[sz] {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			fit = fitSpans(fit[:0], used, nq, r, nq)
			at, err := firstLeast(ctx, h, w, r, least[sz], fit)
			if err != nil || at < 0 {
				return nil, err
			}
			starts[sz] = append(starts[sz], at)
			used = mergeSpans(addSpan(used, at, r, nq))
		}
	}
	return starts, nil
}

// firstLeast returns the first position of the spans fit (ascending) whose
// block of r positions of Q costs least, or −1 when none does. least is a
// lower bound on every block's price, so the positions of that price are
// those of at most a threshold of hops; the hops are concave along a
// stretch of the slide (HopCounter.Stretches), so those positions are a
// prefix and a suffix of the stretch: the stretch's first block is
// priced, then its last, and only when the last costs least and the first
// does not is the stretch walked for the first of that price. The
// deadline is checked every 4096 positions.
func firstLeast(ctx context.Context, h *model.HopCounter, w *model.Window, r int, least int64, fit []span) (int, error) {
	q := w.Idle
	at := -1
	find := func(k, l int, hops, step, bend int64) {
		if at >= 0 {
			return
		}
		if w.Cost.FromHops(r, hops) == least {
			at = k
			return
		}
		m := int64(l - 1)
		if l == 1 || w.Cost.FromHops(r, hops+m*step+m*(m-1)/2*bend) != least {
			return
		}
		for j := 1; j < l; j++ {
			hops += step
			step += bend
			if w.Cost.FromHops(r, hops) == least {
				at = k + j
				return
			}
		}
	}
	walked := 0
	for _, f := range fit {
		h.Reset()
		encode.AddBlock(h, q, f.lo, r)
		for i := f.lo; i < f.hi; i += lazyStep {
			if walked += lazyStep; walked >= 4096 {
				if err := ctx.Err(); err != nil {
					return -1, err
				}
				walked = 0
			}
			h.Stretches(q, r, i, min(f.hi, i+lazyStep), find)
			if at >= 0 {
				return at, nil
			}
		}
	}
	return -1, nil
}
