package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// TestCPPrefixAsWholeQueue runs the cp policy on random traces twice,
// once handing Decide the whole queue (as before) and once only the queue
// up to the K-th job that fits (cpWaiting): every job starts at the same
// time on the same nodes. K is small and each trace's bursts queue more
// than K jobs, so the part left out is not empty. Decide's search is off
// (its list schedules only), so that the answers do not hang on time.
func TestCPPrefixAsWholeQueue(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(33, 8))
	longer := 0
	for trial := range 40 {
		size := 4 + rng.IntN(topo.NumNodes()-3)
		jobs := randomTrace(rng, 30+rng.IntN(60), size)
		k := 2 + rng.IntN(6)
		cfg := Config{Topology: topo, Nodes: size, Policy: CP, Check: true,
			CP: cpolicy.Policy{K: k, NoSearch: true, Limit: time.Second, Objective: []string{cpolicy.BSLD, cpolicy.Wait}[trial%2]}}
		run := func(whole bool) *Result {
			c := cfg
			c.cpWholeQueue = whole
			r, err := Run(context.Background(), &trace.Trace{Jobs: jobs}, c)
			if err != nil {
				t.Fatalf("trial %d (whole queue %v): %v", trial, whole, err)
			}
			return r
		}
		ref, got := run(true), run(false)
		for i := range ref.Jobs {
			a, b := &ref.Jobs[i], &got.Jobs[i]
			if a.ID != b.ID || a.Start != b.Start || !slices.Equal(a.Nodes, b.Nodes) {
				t.Fatalf("trial %d (K %d): job %s at %d on %v, %s at %d on %v with the whole queue", trial, k, b.ID, b.Start, b.Nodes, a.ID, a.Start, a.Nodes)
			}
		}
		if maxQueued(jobs, ref) > k {
			longer++
		}
	}
	if longer < 20 {
		t.Errorf("only %d of 40 traces queued more than K jobs at once", longer)
	}
}

// maxQueued returns the most jobs of r waiting at once at a submit time
// of jobs: submitted by then and not started before.
func maxQueued(jobs []trace.Job, r *Result) int {
	most := 0
	for _, j := range jobs {
		n := 0
		for _, x := range r.Jobs {
			if x.Submit <= j.Submit && x.Start >= j.Submit {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}
