package main

import (
	"fmt"
	"os"

	"github.com/optsched/optsched/heuristics/nsa"
	"github.com/optsched/optsched/solver"
)

// newNSA makes the NSA heuristic from c (SA parameters as newAnneal) with
// the shipped policy, greedy; solve's --nsa-weights and --nsa-sample
// adjust it (applyNSA).
func newNSA(c solver.Config) nsa.NSA {
	n := nsa.Default()
	n.Anneal = newAnneal(c)
	return n
}

// applyNSA loads --nsa-weights (or checks the shipped weights) and sets
// --nsa-sample on n.
func applyNSA(n nsa.NSA, weights string, sample bool) (nsa.NSA, error) {
	return applyNSAFlag(n, "--nsa-weights", weights, sample)
}

// applyNSAFlag is applyNSA for weights given by flag (named in errors).
func applyNSAFlag(n nsa.NSA, flag, weights string, sample bool) (nsa.NSA, error) {
	n.Sample = sample
	if weights == "" {
		if _, err := nsa.Shipped(); err != nil {
			return n, fmt.Errorf("the shipped NSA weights: %w", err)
		}
		return n, nil
	}
	f, err := os.Open(weights)
	if err != nil {
		return n, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	p, err := nsa.ReadPolicy(f)
	if err != nil {
		return n, fmt.Errorf("%s %s: %w", flag, weights, err)
	}
	if p.Net.Out != p.Net.Q {
		return n, fmt.Errorf("%s %s: a network with %d output(s) for %d positions is a critic, not an actor", flag, weights, p.Net.Out, p.Net.Q)
	}
	n.Policy = p
	return n, nil
}
