package nsa

import (
	"context"
	"fmt"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// NSA is neural simulated annealing ([Lan23] §V): heuristics.Anneal —
// the same DCAS solution, destroy, temperature schedule, Metropolis
// acceptance and restore — with the repair's start positions chosen by a
// trained policy instead of uniformly among the first Q positions of the
// current idle sequence, and the moved jobs reinserted largest first as
// in the paper's repair. Greedy by default (the most probable start);
// Sample draws the start from the policy's distribution with the
// annealer's random source.
//
// The policy sees q positions; with Anneal.Q > q its starts stay among
// the first q. NSA is deterministic for a seed and policy.
type NSA struct {
	// Anneal holds SA's parameters (heuristics.DefaultAnneal: Table I).
	// Its Repair and LargestFirst fields are set by NSA.
	Anneal heuristics.Anneal
	// Policy is the actor; nil takes the shipped one (Shipped).
	Policy *Policy
	// Sample draws starts from the policy instead of taking the argmax.
	Sample bool
	// Temperature divides the policy's logits before a sampled start is
	// drawn (0 or 1: the policy as trained; above 1: flatter, closer to
	// SA's uniform start).
	Temperature float64
}

// Default returns NSA with [Lan23] Table I's SA parameters and the
// shipped policy, sampling its starts.
func Default() NSA { return NSA{Anneal: heuristics.DefaultAnneal(), Sample: true} }

var (
	_ solver.Solver      = NSA{}
	_ solver.WarmStarter = NSA{}
)

// Name returns "nsa".
func (NSA) Name() string { return "nsa" }

// WithInitial returns a copy of n that starts from allocs.
func (n NSA) WithInitial(allocs []model.Allocation) solver.Solver {
	n.Anneal.Initial = allocs
	return n
}

// Solve anneals with the learned repair. Like SA it checks ctx between
// moves and returns the best solution seen, with Status Feasible.
func (n NSA) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	pol := n.Policy
	if pol == nil {
		var err error
		if pol, err = Shipped(); err != nil {
			return nil, err
		}
	}
	if pol.Net.Out != pol.Net.Q {
		return nil, fmt.Errorf("nsa: the policy has %d outputs for %d positions (a critic, not an actor?)", pol.Net.Out, pol.Net.Q)
	}
	a := n.Anneal
	if n.Temperature < 0 {
		return nil, fmt.Errorf("nsa: temperature must be ≥ 0, got %g", n.Temperature)
	}
	a.Repair = pol.chooser(p.Window.Topology, n.Sample, n.Temperature)
	a.LargestFirst = true
	res, err := a.Solve(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("nsa: %w", err)
	}
	res.Solver = "nsa"
	return res, nil
}
