package learned

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// TestFirstStableAsSort holds firstStable to a stable sort of every index
// cut to k, on random keys with many ties (few distinct values), queues
// shorter and longer than k.
func TestFirstStableAsSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 128))
	longer := 0
	for trial := range 3000 {
		n, k := rng.IntN(400), 1+rng.IntN(140)
		keys := make([]float64, n)
		for i := range keys {
			keys[i] = float64(rng.IntN(1 + rng.IntN(20)))
		}
		by := func(a, b int) int { return cmp.Compare(keys[a], keys[b]) }
		ids := func() []int {
			v := make([]int, n)
			for i := range v {
				v[i] = i
			}
			return v
		}
		want := ids()
		slices.SortStableFunc(want, by)
		want = want[:min(n, k)]
		if got := firstStable(ids(), k, by); !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d jobs, k %d): %v, want %v", trial, n, k, got, want)
		}
		if n > k {
			longer++
		}
	}
	if longer < 1000 {
		t.Errorf("only %d trials longer than k", longer)
	}
}

// headChooser adapts a Chooser to sim.HeadChooser; prefixChooser also
// tells bench/sim how much of the queue it reads (sim.PrefixChooser).
type headChooser struct{ c *Chooser }

func (h headChooser) ChooseHead(now int64, idle, nodes int, q []sim.QueuedJob) int {
	w := make([]rlscheduler.Waiting, len(q))
	for i, j := range q {
		w[i] = rlscheduler.Waiting{Job: i, Submit: j.Submit, Request: j.Request, Nodes: j.Nodes}
	}
	return h.c.Choose(now, idle, nodes, w)
}

type prefixChooser struct{ headChooser }

func (p prefixChooser) Visible() int { return p.c.Visible() }

// TestChooserPrefixAsWholeQueue: bench/sim hands a non-residual chooser
// only the first MaxVisible queued jobs; every job starts when and where
// it starts with the whole queue handed over, argmax and sampled, on
// bursts that queue hundreds of jobs.
func TestChooserPrefixAsWholeQueue(t *testing.T) {
	p, err := Shipped("hpc2n")
	if err != nil {
		t.Fatal(err)
	}
	if NewChooser(p, Norm{MaxRequest: 1}, false, 0).Visible() != MaxVisible {
		t.Fatal("the hpc2n weights are residual: no prefix to test")
	}
	topo, err := model.NewLayout(1, 4, 16)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 128))
	var jobs []trace.Job
	at := int64(0)
	for k := range 900 {
		if k%300 == 0 {
			at += 50_000
		}
		at += rng.Int64N(3)
		run := 1 + rng.Int64N(3000)
		jobs = append(jobs, trace.Job{ID: strconv.Itoa(k), Submit: at, Runtime: run, Walltime: run + rng.Int64N(2000), Nodes: 1 + rng.IntN(64)})
	}
	norm := Norm{MaxRequest: 5000}
	for _, sample := range []bool{false, true} {
		run := func(ch sim.HeadChooser) *sim.Result {
			r, err := sim.Run(context.Background(), &trace.Trace{Jobs: jobs}, sim.Config{Topology: topo, Nodes: 64, Policy: sim.Learned, Chooser: ch, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		want := run(headChooser{NewChooser(p, norm, sample, 9)})
		got := run(prefixChooser{headChooser{NewChooser(p, norm, sample, 9)}})
		long := 0
		for i := range want.Jobs {
			a, b := &want.Jobs[i], &got.Jobs[i]
			if a.ID != b.ID || a.Start != b.Start || !slices.Equal(a.Nodes, b.Nodes) {
				t.Fatalf("sample %v: job %s at %d on %v, %s at %d on %v with the whole queue", sample, b.ID, b.Start, b.Nodes, a.ID, a.Start, a.Nodes)
			}
			if a.Start-a.Submit > 100_000 {
				long++
			}
		}
		if long < 100 {
			t.Errorf("sample %v: only %d jobs waited long: the queue never grew past %d", sample, long, MaxVisible)
		}
	}
}
