package heuristics

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// annealBefore is Anneal.Solve as it was before it read only the free
// positions a reinserted block needs and priced jobs by model's Cost
// (f36cd90): the reference TestAnnealAsBefore holds Solve to.
func annealBefore(ctx context.Context, a Anneal, p *solver.Problem) (*solver.Result, error) {
	if a.Steps < 0 || a.Destroy < 1 || a.Q < 1 || a.Tmax <= 0 || a.Tmin <= 0 || a.Tmin > a.Tmax {
		return nil, fmt.Errorf("sa: bad parameters (need steps ≥ 0, destroy ≥ 1, q ≥ 1, 0 < tmin ≤ tmax): %+v", a)
	}
	w := p.Window
	q := w.Idle
	if err := checkFits("sa", p); err != nil {
		return nil, err
	}
	h := model.NewHopCounter(w.Topology)
	price := func(positions []int) int64 {
		if len(positions) <= 1 {
			return 1
		}
		h.Reset()
		for _, i := range positions {
			h.Add(q[i])
		}
		return w.Cost.FromHops(len(positions), h.Hops())
	}
	n := len(p.Jobs)
	cur := &annealState{owner: make([]int, len(q)), nodes: make([][]int, n), cost: make([]int64, n)}
	for i := range cur.owner {
		cur.owner[i] = -1
	}
	if a.Initial != nil {
		// pos[id] is node id's position in Q, or -1.
		pos := make([]int32, w.Topology.NumNodes())
		for i := range pos {
			pos[i] = -1
		}
		for i, id := range q {
			pos[id] = int32(i)
		}
		if err := a.load(cur, p, pos); err != nil {
			return nil, err
		}
	} else {
		at := 0
		for k, j := range p.Jobs {
			for range w.Jobs[j].Nodes {
				cur.owner[at] = k
				cur.nodes[k] = append(cur.nodes[k], at)
				at++
			}
		}
	}
	for k := range cur.nodes {
		cur.cost[k] = price(cur.nodes[k])
		cur.total += cur.cost[k]
	}
	best := cur.clone()
	rng := rand.New(rand.NewPCG(a.Seed, a.Seed^0xa0761d6478bd642f))
	free := make([]int, 0, len(q))
	var moved, pending []int
	saved := make([][]int, n)
	savedCost := make([]int64, n)
	steps := 0
	for t := 0; t < a.Steps && n > 0; t++ {
		if t&15 == 0 && ctx.Err() != nil {
			break
		}
		steps++
		T := a.Tmax * math.Exp(-math.Log(a.Tmax/a.Tmin)*float64(t)/float64(a.Steps))
		// Destroy: remove 1..Destroy distinct random jobs.
		m := 1 + rng.IntN(min(a.Destroy, n))
		moved = moved[:0]
		for _, k := range rng.Perm(n)[:m] {
			moved = append(moved, k)
		}
		slices.Sort(moved) // reinsert in window order
		if a.LargestFirst {
			slices.SortStableFunc(moved, func(x, y int) int {
				return w.Jobs[p.Jobs[y]].Nodes - w.Jobs[p.Jobs[x]].Nodes
			})
		}
		old := cur.total
		for _, k := range moved {
			saved[k] = append(saved[k][:0], cur.nodes[k]...)
			savedCost[k] = cur.cost[k]
			for _, i := range cur.nodes[k] {
				cur.owner[i] = -1
			}
			cur.total -= cur.cost[k]
		}
		// Repair: each job takes n_j nodes of the current idle sequence
		// from a start among its first Q positions, wrapping.
		for mi, k := range moved {
			free = free[:0]
			for i, o := range cur.owner {
				if o < 0 {
					free = append(free, i)
				}
			}
			r := w.Jobs[p.Jobs[k]].Nodes
			var u int
			if a.Repair == nil {
				u = rng.IntN(min(a.Q, len(free)))
			} else {
				pending = pending[:0]
				for _, k2 := range moved[mi+1:] {
					pending = append(pending, w.Jobs[p.Jobs[k2]].Nodes)
				}
				step := RepairStep{Window: w, Free: free, Size: r, Pending: pending, Starts: min(a.Q, len(free)), Rand: rng}
				u = a.Repair.ChooseStart(&step)
				if u < 0 || u >= step.Starts {
					return nil, fmt.Errorf("sa: the repair chose start %d outside [0, %d)", u, step.Starts)
				}
			}
			cur.nodes[k] = cur.nodes[k][:0]
			for d := 0; d < r; d++ {
				i := free[(u+d)%len(free)]
				cur.owner[i] = k
				cur.nodes[k] = append(cur.nodes[k], i)
			}
			cur.cost[k] = price(cur.nodes[k])
			cur.total += cur.cost[k]
		}
		delta := cur.total - old
		accept := delta <= 0 || rng.Float64() < math.Exp(-float64(delta)/T)
		if cur.total < best.total {
			best = cur.clone()
		}
		if accept || a.PaperCompat {
			continue
		}
		// Restore the previous solution.
		for _, k := range moved {
			for _, i := range cur.nodes[k] {
				cur.owner[i] = -1
			}
		}
		for _, k := range moved {
			cur.nodes[k] = append(cur.nodes[k][:0], saved[k]...)
			for _, i := range saved[k] {
				cur.owner[i] = k
			}
			cur.cost[k] = savedCost[k]
		}
		cur.total = old
	}
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "dcas", Solver: "sa",
		Objective: best.total, Stats: solver.Stats{Anneal: &solver.AnnealStats{Steps: steps}}}
	for k, j := range p.Jobs {
		nodes := make([]int, len(best.nodes[k]))
		for d, i := range best.nodes[k] {
			nodes[d] = q[i]
		}
		res.Allocations = append(res.Allocations, model.Allocation{Job: j, Nodes: nodes, Start: w.Time})
	}
	return res, nil
}

// TestAnnealAsBefore holds Anneal.Solve to annealBefore: the same
// allocations, objective and steps on 1,500 random windows (every kind of
// instances.RandomSmall, some of 200-node clusters so that blocks wrap and
// starts run past Q), cold and warm-started, with Q and Destroy varied.
func TestAnnealAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 44))
	for c := range 1500 {
		nodes, jobs := 30, 5
		if c%3 == 0 {
			nodes, jobs = 200, 8
		}
		w := instances.RandomSmall(rng, c%instances.NumKinds, nodes, jobs)
		sel := model.SelectJobs(w, 0)
		if len(sel.Multi) == 0 {
			continue
		}
		p := solver.NewProblem(w, sel.Multi)
		a := DefaultAnneal()
		a.Seed = uint64(c)
		a.Steps = 50 + rng.IntN(200)
		a.Destroy = 1 + rng.IntN(3)
		a.Q = 1 + rng.IntN(120)
		a.LargestFirst = c%4 == 1
		if c%5 == 2 {
			if seq, err := (Seq{}).Solve(context.Background(), p); err == nil && len(seq.Allocations) == len(sel.Multi) {
				a.Initial = seq.Allocations
			}
		}
		got, err1 := a.Solve(context.Background(), p)
		want, err2 := annealBefore(context.Background(), a, p)
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("window %d: error %v, before %v", c, err1, err2)
		}
		if err1 != nil {
			continue
		}
		if got.Objective != want.Objective || !reflect.DeepEqual(got.Allocations, want.Allocations) || got.Stats.Anneal.Steps != want.Stats.Anneal.Steps {
			t.Fatalf("window %d: objective %d, before %d (or other allocations or steps)", c, got.Objective, want.Objective)
		}
		if err := model.Check(w, got.Allocations); err != nil {
			t.Fatalf("window %d: %v", c, err)
		}
	}
}
