// Package csp builds the constrained-shortest-path (CSP) graph of [Lan23]
// §IV-B for a window under the static continuity strategy. Its vertices are
// the positions 0..|Q|−1 of the idle sequence Q; a transition arc (weight
// 0) leads from each position to the next; for every requested size r an
// operation arc leads from position i to position i+r, weighted by the CH
// cost of D(i, r). A feasible allocation is a path that uses exactly ε_r
// operation arcs of size r, ε_r being the number of jobs of size r.
//
// The paper drops, "for brevity", the operation arcs that run past the end
// of Q and wrap to its head. The 0-1 program of §IV-A allows those blocks,
// so this graph keeps them (Arc.Wraps): the path is then read on the cycle
// of positions, and at most one arc of a feasible path wraps.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package csp

import (
	"context"
	"fmt"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/model"
)

// A Graph is the CSP graph of a window's problem. Its operation-arc
// weights are encode.Blocks' block costs.
type Graph struct {
	*encode.Blocks
}

// An Arc is an operation arc: a block of Size nodes from position From.
type Arc struct {
	// Size indexes Blocks.Sizes.
	Size int
	From int
	// To is the position after the block, modulo |Q|.
	To int
	// Weight is the CH cost of the block.
	Weight int64
	// Wraps is true when the block runs past the end of Q to its head.
	Wraps bool
}

// Build returns the CSP graph of placing jobs (indices into w.Jobs) on w's
// idle sequence.
func Build(w *model.Window, jobs []int) (*Graph, error) {
	return BuildContext(context.Background(), w, jobs)
}

// BuildContext is Build that stops with ctx's error when ctx ends first.
func BuildContext(ctx context.Context, w *model.Window, jobs []int) (*Graph, error) {
	b, err := encode.NewBlocksContext(ctx, w, jobs)
	if err != nil {
		return nil, err
	}
	return &Graph{b}, nil
}

// NumVertices returns |Q|.
func (g *Graph) NumVertices() int { return len(g.Q) }

// Arc returns the operation arc of size index s from position i.
func (g *Graph) Arc(s, i int) Arc {
	r, n := g.Sizes[s], len(g.Q)
	return Arc{Size: s, From: i, To: (i + r) % n, Weight: g.Cost[s][i], Wraps: i+r > n}
}

// Counts returns ε_r for each size index.
func (g *Graph) Counts() []int {
	c := make([]int, len(g.Sizes))
	for s := range g.Sizes {
		c[s] = len(g.Jobs[s])
	}
	return c
}

// Decode turns a path's operation arcs into allocations. It returns an
// error unless the arcs are disjoint, at most one wraps, and each size is
// used exactly ε_r times.
func (g *Graph) Decode(arcs []Arc) ([]model.Allocation, error) {
	n := len(g.Q)
	used := make([]bool, n)
	starts := make([][]int, len(g.Sizes))
	wraps := 0
	for _, a := range arcs {
		if a.Size < 0 || a.Size >= len(g.Sizes) || a.From < 0 || a.From >= n {
			return nil, fmt.Errorf("csp: arc %+v out of range", a)
		}
		if a.Wraps {
			wraps++
		}
		for d := 0; d < g.Sizes[a.Size]; d++ {
			k := (a.From + d) % n
			if used[k] {
				return nil, fmt.Errorf("csp: arcs overlap at position %d", k)
			}
			used[k] = true
		}
		starts[a.Size] = append(starts[a.Size], a.From)
	}
	if wraps > 1 {
		return nil, fmt.Errorf("csp: %d arcs wrap", wraps)
	}
	return g.Allocate(starts)
}
