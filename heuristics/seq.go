package heuristics

import (
	"context"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Seq is the "Seq." allocation of [Lan23]: the problem's jobs in order,
// each taking the next n_j nodes of the idle sequence Q. It is a feasible
// SCAS solution (job k starts at position Σ_{l<k} n_l) and, under DCAS, the
// solution in which every job takes the head of the remaining sequence. It
// runs in O(Σ n_j) time.
type Seq struct{}

var _ solver.Solver = Seq{}

// Name returns "seq".
func (Seq) Name() string { return "seq" }

// Solve places the jobs one after another along Q. It ignores ctx: it
// finishes in linear time.
func (Seq) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	w := p.Window
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "scas", Solver: "seq"}
	if err := checkFits("seq", p); err != nil {
		return nil, err
	}
	pos := 0
	for _, j := range p.Jobs {
		n := w.Jobs[j].Nodes
		nodes := append([]int(nil), w.Idle[pos:pos+n]...)
		pos += n
		res.Allocations = append(res.Allocations, model.Allocation{Job: j, Nodes: nodes, Start: w.Time})
		res.Objective += w.Cost.Cost(w.Topology, nodes)
	}
	return res, nil
}
