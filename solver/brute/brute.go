// Package brute is the reference exact solver for tiny SCAS windows: it
// enumerates every placement of the problem's jobs on disjoint blocks
// D(i, n_j) of the idle sequence (wrap-around included) and keeps the
// cheapest. It shares nothing with the other exact solvers but
// encode.Blocks' block costs, which tests check separately, so it is the
// yardstick they are cross-checked against. Its running time is
// O(|Q|^jobs); it refuses problems above a size limit.
package brute

import (
	"context"
	"fmt"
	"math"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// MaxStates bounds |Q|^jobs, the number of start combinations Solver will
// enumerate.
const MaxStates = 50_000_000

// Solver enumerates all SCAS placements.
type Solver struct{}

var _ solver.Solver = Solver{}

// Name returns "brute".
func (Solver) Name() string { return "brute" }

// Solve enumerates every start position for every job, skipping
// overlapping blocks, and returns the cheapest placement as Optimal. When
// ctx expires first it returns Unknown (or the best so far as Feasible).
// It publishes (Problem.Publish) every better placement as it finds it
// and the optimum's bound when the enumeration completes.
func (Solver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	b, err := encode.NewBlocks(p.Window, p.Jobs)
	if err != nil {
		return nil, err
	}
	nq := len(b.Q)
	// One entry per job: size index.
	var sizes []int
	for s := range b.Sizes {
		for range b.Jobs[s] {
			sizes = append(sizes, s)
		}
	}
	if math.Pow(float64(nq), float64(len(sizes))) > MaxStates {
		return nil, fmt.Errorf("brute: %d jobs on %d idle nodes: %w to enumerate (more than %d states)", len(sizes), nq, solver.ErrTooLarge, MaxStates)
	}
	pub := p.Publish()
	used := make([]bool, nq)
	cur := make([]int, len(sizes))
	best := int64(math.MaxInt64)
	var bestStarts []int
	steps := 0
	stopped := false
	var rec func(k int, cost int64)
	rec = func(k int, cost int64) {
		if stopped || cost >= best {
			return
		}
		if steps++; steps%4096 == 0 && ctx.Err() != nil {
			stopped = true
			return
		}
		if k == len(sizes) {
			best = cost
			bestStarts = append(bestStarts[:0], cur...)
			pub.Offer(best, "brute", nil, func() []model.Allocation {
				a, err := allocate(b, sizes, bestStarts)
				if err != nil {
					return nil
				}
				return a
			})
			return
		}
		r := b.Sizes[sizes[k]]
		// Jobs of equal size are interchangeable: force increasing starts.
		lo := 0
		if k > 0 && sizes[k-1] == sizes[k] {
			lo = cur[k-1] + 1
		}
		for i := lo; i < nq; i++ {
			free := true
			for d := 0; d < r && free; d++ {
				free = !used[(i+d)%nq]
			}
			if !free {
				continue
			}
			for d := 0; d < r; d++ {
				used[(i+d)%nq] = true
			}
			cur[k] = i
			rec(k+1, cost+b.Cost[sizes[k]][i])
			for d := 0; d < r; d++ {
				used[(i+d)%nq] = false
			}
		}
	}
	rec(0, 0)
	res := &solver.Result{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "scas", Solver: "brute",
		Stats: solver.Stats{Brute: &solver.BruteStats{Steps: steps}}}
	if bestStarts == nil {
		if !stopped {
			res.Status = solver.Infeasible
		}
		return res, nil
	}
	if res.Allocations, err = allocate(b, sizes, bestStarts); err != nil {
		return nil, err
	}
	res.Objective = best
	res.Status = solver.Feasible
	if !stopped {
		res.Status = solver.Optimal
		res.Bound = float64(best)
		pub.Raise(res.Bound)
	}
	return res, nil
}

// allocate returns the allocations of the jobs of the given size indices
// at the given starts.
func allocate(b *encode.Blocks, sizes, at []int) ([]model.Allocation, error) {
	starts := make([][]int, len(b.Sizes))
	for k, s := range sizes {
		starts[s] = append(starts[s], at[k])
	}
	return b.Allocate(starts)
}
