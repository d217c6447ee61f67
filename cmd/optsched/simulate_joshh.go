package main

import (
	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
)

// joshhSimPolicy is simulate's name of the learned JoSHH design.
const joshhSimPolicy = "joshh"

// joshhConfig sets cfg to run the JoSHH policy of --weights (default the
// shipped) on tr: its allocation selector places each job, or first-fit
// under --allocator first-fit.
func (opts *simulateOptions) joshhConfig(cfg *sim.Config, tr *trace.Trace) error {
	pol, err := joshhPolicy(opts.weights, opts.trace)
	if err != nil {
		return err
	}
	ch := learned.NewJoSHHChooser(pol, learnedNorm(tr), opts.sample, opts.seed)
	if opts.allocator == sim.FirstFit {
		ff := sim.FirstFitStrategy
		ch.Force = &ff
	}
	cfg.Policy, cfg.Selector, cfg.Allocator = sim.Select, ch, ""
	return nil
}
