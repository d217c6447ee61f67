package learned

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/heuristics/learn"
)

func smallJoSHHConfig(w *rlscheduler.Workload, seed uint64) JoSHHTrainConfig {
	c := DefaultJoSHHTrainConfig()
	c.Workload, c.Seed, c.Updates, c.EpisodesPerUpdate, c.EpisodeLen = w, seed, 2, 2, 100
	c.TestStarts, c.TestLen, c.Minibatch = []int{300}, 100, 64
	return c
}

func joshhBytes(t *testing.T, p *JoSHH) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJoSHH(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestJoSHHTrainDeterministic: the same seed gives the same weights, a
// different seed others, and training changes both actors.
func TestJoSHHTrainDeterministic(t *testing.T) {
	w := synthetic(600, 3)
	run := func(seed uint64) (*JoSHH, []byte) {
		res, err := TrainJoSHH(context.Background(), smallJoSHHConfig(w, seed))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Curve) != 2 || res.Curve[1].Steps == 0 || res.Curve[1].AllocSteps == 0 {
			t.Fatalf("curve %+v: no decisions with a choice", res.Curve)
		}
		for _, s := range res.Starts {
			if s < 400 && s+100 > 300 {
				t.Fatalf("training start %d overlaps the test sequence [300, 400)", s)
			}
		}
		return res.Policy, joshhBytes(t, res.Policy)
	}
	pa, a := run(1)
	_, b := run(1)
	_, c := run(2)
	if !bytes.Equal(a, b) {
		t.Error("seed 1 twice gave different weights")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 gave the same weights")
	}
	init := NewJoSHH(learn.NewRand(1, 0x6a6f_7368_7472))
	learn.RoundWeights(init.Selector.Params())
	learn.RoundWeights(init.Alloc.Params())
	if slices.Equal(init.Selector.Params()[0].W, pa.Selector.Params()[0].W) || slices.Equal(init.Alloc.Params()[0].W, pa.Alloc.Params()[0].W) {
		t.Error("training left an actor unchanged")
	}
}

// TestLocalRewards pins the per-interval local rewards: decisions at 0,
// 10, 20; job 1 waits 5–15 and runs 5 s, job 2 waits 0–30 and runs 10 s.
func TestLocalRewards(t *testing.T) {
	jobs := []sim.JobResult{{Submit: 5, Start: 15, End: 20}, {Submit: 0, Start: 30, End: 40}}
	got := localRewards([]int64{0, 10, 20}, jobs)
	want := []float64{-(5.0/5 + 10.0/10) / 2, -(5.0/5 + 10.0/10) / 2, -(10.0 / 10) / 2}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("rewards %v, want %v", got, want)
		}
	}
	// Their sum is −Σ wait/run / jobs.
	var s float64
	for _, r := range got {
		s += r
	}
	if math.Abs(s-(-(10.0/5+30.0/10)/2)) > 1e-12 {
		t.Errorf("sum %v", s)
	}
}

// view returns a decision's view: 8 idle of 64 nodes, queue sizes and
// requests as given (submitted at 0, 10, 20, …), now 1000.
func view(nodes []int, req []int64) *sim.View {
	v := &sim.View{Now: 1000, Idle: 8, Nodes: 64, LeafSize: 10, LeafIdle: []int{8, 0}, PodIdle: []int{8}}
	for i := range nodes {
		v.Queue = append(v.Queue, sim.QueuedJob{Submit: int64(10 * i), Request: req[i], Nodes: nodes[i]})
	}
	v.Running = []sim.RunningView{{Nodes: 56, Start: 0, Request: 5000}}
	return v
}

// TestJoSHHVisible: the visible jobs are the oldest fitting one, then
// the shortest other fitting ones (ties by arrival); jobs that do not
// fit are never visible, and empty slots are zero.
func TestJoSHHVisible(t *testing.T) {
	v := view([]int{20, 4, 2, 1, 9, 3, 1, 2, 5, 1}, []int64{10, 500, 400, 300, 1, 300, 200, 100, 50, 100})
	x := make([]float64, SelectorIn)
	got := jobState(x, nil, v, Norm{MaxRequest: 1000}, false, ReserveNone, nil)
	if want := []int{1, 8, 7, 9, 6}; !slices.Equal(got, want) {
		t.Errorf("visible %v, want %v", got, want)
	}
	got = jobState(x, nil, view([]int{20, 4}, []int64{1, 500}), Norm{MaxRequest: 1000}, false, ReserveNone, nil)
	if !slices.Equal(got, []int{1}) || x[JobFeatures] != 0 || x[0] != 1 {
		t.Errorf("visible %v, x %v", got, x[:2*JobFeatures])
	}
	// The cluster: 56/64 busy now and until the request ends at 5000
	// (now 1000: steps 0..1 h, 2 h ends at 8200 > 5000).
	c := x[JQ*JobFeatures : JQ*JobFeatures+JT]
	if c[0] != 56.0/64 || c[1] != 56.0/64 || c[2] != 0 {
		t.Errorf("cluster %v", c)
	}
}

// TestJoSHHRoundTrip: a policy read back selects as the written one; a
// corrupt file is an error.
func TestJoSHHRoundTrip(t *testing.T) {
	p := NewJoSHH(learn.NewRand(4, 4))
	learn.RoundWeights(p.Selector.Params())
	learn.RoundWeights(p.Alloc.Params())
	b := joshhBytes(t, p)
	q, err := ReadJoSHH(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for range 50 {
		n := 1 + rng.IntN(12)
		nodes, req := make([]int, n), make([]int64, n)
		for i := range n {
			nodes[i], req[i] = 1+rng.IntN(10), int64(1+rng.IntN(7200))
		}
		v := view(nodes, req)
		v.Preview = func(int, sim.Strategy) []int { return nil }
		a1, s1 := NewJoSHHChooser(p, Norm{MaxRequest: 7200}, false, 1).Select(v)
		a2, s2 := NewJoSHHChooser(q, Norm{MaxRequest: 7200}, false, 1).Select(v)
		if a1 != a2 || s1 != s2 {
			t.Fatalf("written %d/%v, read %d/%v", a1, s1, a2, s2)
		}
		if a1 >= 0 && v.Queue[a1].Nodes > v.Idle {
			t.Fatalf("selected job %d of %d nodes with %d idle", a1, v.Queue[a1].Nodes, v.Idle)
		}
	}
	b[len(b)/2] ^= 0xff
	if _, err := ReadJoSHH(bytes.NewReader(b)); err == nil {
		t.Error("a corrupt file read")
	}
}

// TestShippedJoSHH: the shipped weights read and, on the first 400 jobs
// of Lublin-1 (training data), run with every allocation checked; their
// allocation selector places the multi-node jobs at a lower mean CH cost
// than first-fit under the same job selector.
func TestShippedJoSHH(t *testing.T) {
	p, err := ShippedJoSHH()
	if err != nil {
		t.Fatal(err)
	}
	w, err := rlscheduler.Open("../../instances/traces/lublin_256.swf.gz", rlscheduler.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := EvaluateJoSHH(context.Background(), w, p, []int{0}, 400)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]JoSHHRow{}
	for _, r := range rows {
		if r.NT < 1 || len(r.PerSeq) != 1 {
			t.Errorf("%s: normalised turnaround %v", r.Policy, r.NT)
		}
		by[r.Policy] = r
	}
	if by["joshh"].MultiCost >= by["joshh+first-fit"].MultiCost {
		t.Errorf("CH cost %v with the allocation selector, %v with first-fit", by["joshh"].MultiCost, by["joshh+first-fit"].MultiCost)
	}
	if by["joshh"].NT != by["joshh+first-fit"].NT {
		t.Error("placement changed the schedule (run times do not depend on it)")
	}
}

// BenchmarkJoSHHDecision is one decision: 200 waiting jobs, 60 running,
// 28 leaves; the visible jobs, the job selector, the allocation features
// and selector; in each window (with a reservation, its shadow time too).
func BenchmarkJoSHHDecision(b *testing.B) {
	for _, r := range []Reserve{ReserveNone, ReserveOldest, ReserveShortest, ReserveShortestJump, ReserveXFactor, ReserveShortestStrict, ReserveXFactorStrict, ReserveOldestStrict, ReserveOldestGuard, ReserveArea, ReserveAreaStrict} {
		b.Run(r.String(), func(b *testing.B) { benchJoSHHDecision(b, r) })
	}
}

func benchJoSHHDecision(b *testing.B, r Reserve) {
	rng := rand.New(rand.NewPCG(1, 2))
	nodes, req := make([]int, 200), make([]int64, 200)
	for i := range nodes {
		nodes[i], req[i] = 1+rng.IntN(64), int64(1+rng.IntN(7200))
	}
	v := view(nodes, req)
	v.Idle, v.Nodes = 40, 256
	v.LeafIdle, v.PodIdle = make([]int, 28), make([]int, 7)
	for i := range 60 {
		v.Running = append(v.Running, sim.RunningView{Nodes: 1 + i%7, Start: int64(i * 30), Request: int64(600 + i*100)})
	}
	p := NewJoSHH(learn.NewRand(1, 1))
	p.Reserve = r
	c := NewJoSHHChooser(p, Norm{MaxRequest: 7200}, false, 1)
	b.ReportAllocs()
	for b.Loop() {
		c.Select(v)
	}
}
