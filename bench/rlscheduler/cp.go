package rlscheduler

import (
	"context"

	"github.com/optsched/optsched/bench/cpolicy"
)

// CP is the cp policy as a Decider: optsched's CP/SAT time-and-resource
// scheduler (bench/cpolicy) deciding at every event which jobs start. It
// counts its decisions by outcome.
type CP struct {
	Policy cpolicy.Policy
	// Decisions counts the calls; Searched those where solver/sat ran,
	// Improved those where its schedule replaced the best list schedule.
	Decisions, Searched, Improved int
	waiting                       []cpolicy.Job
	running                       []cpolicy.Running
}

// Decide implements Decider.
func (c *CP) Decide(ctx context.Context, now int64, nodes, free int, running []Running, waiting []Waiting) ([]int, error) {
	c.waiting, c.running = c.waiting[:0], c.running[:0]
	for _, w := range waiting {
		c.waiting = append(c.waiting, cpolicy.Job{Submit: w.Submit, Request: w.Request, Nodes: w.Nodes})
	}
	for _, r := range running {
		c.running = append(c.running, cpolicy.Running{End: r.End, Nodes: r.Nodes})
	}
	start, st, err := c.Policy.Decide(ctx, now, nodes, free, c.running, c.waiting)
	c.Decisions++
	if st.Searched {
		c.Searched++
	}
	if st.Improved {
		c.Improved++
	}
	return start, err
}

// Counts implements Counter.
func (c *CP) Counts() DecisionCounts {
	return DecisionCounts{Decisions: c.Decisions, Searched: c.Searched, Improved: c.Improved}
}
