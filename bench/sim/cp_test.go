package sim_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// TestCPTiny pins the cp policy on the tiny trace: A starts alone; at 2,
// C (1 node, 2 s) fits beside A and delays nothing, B (2 nodes) waits for
// A's end at 10.
func TestCPTiny(t *testing.T) {
	c := config(t, sim.CP)
	r, err := sim.Run(context.Background(), tiny(), c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := waits(t, r), map[string]int64{"A": 0, "B": 9, "C": 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

// TestCPCompletes runs the cp policy on a seeded synthetic trace (requests
// above and below the run times) with two allocators: every job runs,
// none before its submit, no node twice at once, every allocation through
// model.Check (Config.Check).
func TestCPCompletes(t *testing.T) {
	topo, err := model.NewLayout(1, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	tr := &trace.Trace{}
	var at int64
	for k := range 100 {
		at += r.Int64N(40)
		run := 1 + r.Int64N(600)
		tr.Jobs = append(tr.Jobs, trace.Job{ID: strconv.Itoa(k), Submit: at, Runtime: run,
			Walltime: max(1, run*(1+r.Int64N(3))/2), Nodes: 1 + r.IntN(16)})
	}
	for _, alloc := range []string{"", "slurm"} {
		for _, obj := range []string{cpolicy.BSLD, cpolicy.Wait} {
			c := sim.Config{Topology: topo, Policy: sim.CP, Allocator: alloc, Check: true,
				CP: cpolicy.Policy{Objective: obj, Limit: 5 * time.Millisecond}}
			res, err := sim.Run(context.Background(), tr, c)
			if err != nil {
				t.Fatalf("%s %s: %v", alloc, obj, err)
			}
			if len(res.Jobs) != len(tr.Jobs) || res.Windows == 0 {
				t.Fatalf("%s %s: %d of %d jobs ran in %d decisions", alloc, obj, len(res.Jobs), len(tr.Jobs), res.Windows)
			}
			for _, j := range res.Jobs {
				if j.Start < j.Submit {
					t.Fatalf("%s %s: job %s starts at %d, submitted at %d", alloc, obj, j.ID, j.Start, j.Submit)
				}
			}
			noOverlap(t, "cp "+alloc+" "+obj, res)
		}
	}
}
