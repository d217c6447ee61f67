package learned

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/heuristics/learn"
)

// TestColumnsInBenchmark: the JoSHH and RLSchert columns run as
// bench rlscheduler's Runners; the JoSHH column's mean bounded slowdown
// is EvaluateJoSHH's on the same sequences (one simulation, two reports),
// and every schedule passes the benchmark's Verify.
func TestColumnsInBenchmark(t *testing.T) {
	w := synthetic(900, 5)
	starts := []int{0, 300, 600}
	jp := NewJoSHH(learn.NewRand(2, 2))
	jobs := TraceOf(w, 0, len(w.Jobs)).Jobs
	users := map[string]string{}
	for i, j := range jobs {
		users[j.ID] = []string{"a", "b", "c"}[i%3]
	}
	net := NewRLSchert(SchertNormOf(jobs), learn.NewRand(3, 3))
	cfg := rlscheduler.Config{Workload: w, Starts: starts, Len: 300, Policies: []string{"sjf", "joshh", "rlschert", "rlschert-kill"},
		Runners: map[string]func(context.Context, rlscheduler.Sequence) (*rlscheduler.Schedule, error){
			"joshh":         JoSHHColumn(jp, w, false),
			"rlschert":      SchertColumn(net, w, users, false, false),
			"rlschert-kill": SchertColumn(net, w, users, true, true),
		},
		Notes: map[string]string{"joshh": "untrained"}}
	res, err := rlscheduler.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := EvaluateJoSHH(context.Background(), w, jp, starts, 300)
	if err != nil {
		t.Fatal(err)
	}
	var got rlscheduler.PolicyResult
	for _, p := range res.Policies {
		if p.Name == "joshh" {
			got = p
		}
		if p.Mean < 1 || len(p.PerSequence) != len(starts) {
			t.Errorf("%s: mean %v over %d sequences", p.Name, p.Mean, len(p.PerSequence))
		}
		if p.Name != "sjf" && p.Protocol != "simulated" {
			t.Errorf("%s: protocol %q", p.Name, p.Protocol)
		}
	}
	if got.Note != "untrained" {
		t.Errorf("note %q", got.Note)
	}
	if want := rows[slices.IndexFunc(rows, func(r JoSHHRow) bool { return r.Policy == "joshh" })].BSLD; math.Abs(got.Mean-want) > 1e-9*want {
		t.Errorf("joshh column %v, EvaluateJoSHH %v", got.Mean, want)
	}
}

// TestJoSHHArrivalWindow: the arrival window shows only the first JQ
// waiting jobs, those that fit; the variant survives its weights file.
func TestJoSHHArrivalWindow(t *testing.T) {
	v := view([]int{20, 4, 2, 9, 3, 1, 2}, []int64{10, 500, 400, 1, 300, 200, 100})
	x := make([]float64, SelectorIn)
	if got, want := jobState(x, nil, v, Norm{MaxRequest: 1000}, true, ReserveNone, nil), []int{1, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("visible %v, want %v", got, want)
	}
	p := NewJoSHH(learn.NewRand(4, 4))
	p.Arrival = true
	q, err := ReadJoSHH(bytes.NewReader(joshhBytes(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	if !q.Arrival {
		t.Error("the arrival variant read back as the default")
	}
	v.Preview = func(int, sim.Strategy) []int { return nil }
	if k, _ := NewJoSHHChooser(q, Norm{MaxRequest: 1000}, false, 1).Select(v); !slices.Contains([]int{1, 2, 4}, k) {
		t.Errorf("selected %d, outside the window", k)
	}
	p.Arrival = false
	if q, err := ReadJoSHH(bytes.NewReader(joshhBytes(t, p))); err != nil || q.Arrival {
		t.Errorf("the default read back as arrival %v (%v)", q != nil && q.Arrival, err)
	}
}

// TestEpisodeLoad: the offered load by hand, and training with MinLoad
// draws its episodes from loaded starts only (none: an error).
func TestEpisodeLoad(t *testing.T) {
	w := &rlscheduler.Workload{MaxNodes: 4, MaxProcs: 4, Jobs: []rlscheduler.Job{
		{Number: 1, Submit: 0, Run: 100, Request: 100, Procs: 2},
		{Number: 2, Submit: 50, Run: 10, Request: 10, Procs: 8}, // wider than the cluster: 4 nodes
		{Number: 3, Submit: 100, Run: 60, Request: 60, Procs: 1},
	}}
	// (100·2 + 10·4 + 60·1) / (4 · 100) = 300/400.
	if got := EpisodeLoad(w, 0, 3); math.Abs(got-0.75) > 1e-12 {
		t.Errorf("load %v, want 0.75", got)
	}
	// [0, 2): (200 + 40) / (4 · 50) = 1.2; [1, 3): (40 + 60) / (4 · 50) = 0.5.
	if got := HeavyStarts(w, []int{0, 1}, 2, 1); !slices.Equal(got, []int{0}) {
		t.Errorf("heavy starts %v, want [0]", got)
	}
	big := synthetic(600, 3)
	cfg := smallConfig(big, 1)
	all := TrainingStarts(len(big.Jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	loads := make([]float64, len(all))
	for i, s := range all {
		loads[i] = EpisodeLoad(big, s, cfg.EpisodeLen)
	}
	slices.Sort(loads)
	cfg.MinLoad = loads[len(loads)/2]
	res, err := TrainRLScheduler(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Starts) == 0 || len(res.Starts) >= len(all) {
		t.Fatalf("%d of %d starts kept: the filter filtered nothing (or everything)", len(res.Starts), len(all))
	}
	for _, s := range res.Starts {
		if EpisodeLoad(big, s, cfg.EpisodeLen) < cfg.MinLoad {
			t.Fatalf("start %d of load %v", s, EpisodeLoad(big, s, cfg.EpisodeLen))
		}
	}
	cfg.MinLoad = 1e9
	if _, err := TrainRLScheduler(context.Background(), cfg); err == nil {
		t.Error("no loaded episode, no error")
	}
}
