package main

import (
	"fmt"
	"os"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/heuristics/nsa"
)

// loadPolicy reads an NSA actor's weights from the file a flag names;
// "" is the shipped policy (nil). Errors name the flag.
func loadPolicy(flag, weights string) (*nsa.Policy, error) {
	if weights == "" {
		return nil, nil
	}
	f, err := os.Open(weights)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	p, err := nsa.ReadPolicy(f)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, weights, err)
	}
	if p.Net.Out != p.Net.Q {
		return nil, fmt.Errorf("%s %s: a network with %d output(s) for %d positions is a critic, not an actor", flag, weights, p.Net.Out, p.Net.Q)
	}
	return p, nil
}

// nsaFromFlag is NSA (catalog.NSA, SA's Table I parameters) with the
// weights a flag names ("" the shipped ones) and sampling as given.
func nsaFromFlag(flag, weights string, sample bool) (nsa.NSA, error) {
	p, err := loadPolicy(flag, weights)
	if err != nil {
		return nsa.NSA{}, err
	}
	return catalog.NSA(catalog.Options{Seed: 1, NSAPolicy: p, NSASample: sample})
}
