package offline_test

import (
	"context"
	"fmt"

	"github.com/optsched/optsched/bench/offline"
)

// A two-node cluster: a long two-node job and two short one-node jobs
// submitted together. Running the short ones first costs the long one
// little (its slowdown is relative to 100 s).
func Example() {
	jobs := []offline.Job{
		{Submit: 0, Run: 100, Nodes: 2},
		{Submit: 0, Run: 5, Nodes: 1},
		{Submit: 1, Run: 20, Nodes: 1},
	}
	ctx := context.Background()
	b, err := offline.Bound(ctx, jobs, 2, offline.BoundOptions{})
	if err != nil {
		panic(err)
	}
	e, err := offline.Exact(ctx, jobs, 2, offline.ExactOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("bound %.3f ≤ optimum %.3f (proven %v), starts %v, feasible: %v\n",
		b.Value, e.Value, e.Proven, e.Starts, offline.Check(jobs, 2, e.Starts) == nil)
	// Output:
	// bound 3.130 ≤ optimum 3.210 (proven true), starts [21 0 1], feasible: true
}
