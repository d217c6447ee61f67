package learned

import (
	"bytes"
	"context"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/heuristics/learn"
)

// reserveView is a decision at 1000 with 8 idle nodes of 64, 16 nodes
// busy until 5000 and 40 until 20000 (requested ends), and the queue
// given (submitted at 0, 10, 20, …).
func reserveView(nodes []int, req []int64) *sim.View {
	v := view(nodes, req)
	v.Running = []sim.RunningView{{Nodes: 16, Start: 0, Request: 5000}, {Nodes: 40, Start: 500, Request: 19500}}
	return v
}

// TestJoSHHReserveVisible pins the reservation windows by hand. The held
// job of 20 nodes gets its nodes at 5000 (8 idle + 16), with 4 spare:
// only the jobs that fit now and end by 5000 or take at most 4 nodes are
// visible.
func TestJoSHHReserveVisible(t *testing.T) {
	norm := Norm{MaxRequest: 20000}
	x := make([]float64, SelectorIn)
	lwait := math.Log1p(MaxWait)
	// 0: 20 nodes, the oldest and the shortest, held; 1: ends at 6000
	// on 6 nodes (delays it); 2: ends at 4000; 3: 4 nodes (the spare
	// ones) until 10000; 4: ends at 5000 exactly.
	nodes, req := []int{20, 6, 6, 4, 8}, []int64{10, 5000, 3000, 9000, 4000}
	for _, c := range []struct {
		r    Reserve
		want []int
	}{
		{ReserveNone, []int{1, 2, 4, 3}},
		{ReserveOldest, []int{2, 4, 3}},
		{ReserveShortest, []int{2, 4, 3}},
		{ReserveShortestJump, []int{2, 4, 3, 1}},
		{ReserveXFactor, []int{2, 4, 3}}, // job 0's (1000 + 10) / 10 is the largest
		{ReserveShortestStrict, []int{2, 4, 3}},
		{ReserveXFactorStrict, []int{2, 4, 3}},
		{ReserveOldestStrict, []int{2, 4, 3}},
		{ReserveOldestGuard, []int{2, 4, 3}},
		// Areas: job 0 200 (held), 2 18000, 3 36000, 4 32000.
		{ReserveArea, []int{2, 4, 3}},
		{ReserveAreaStrict, []int{2, 4, 3}},
	} {
		got := jobState(x, nil, reserveView(nodes, req), norm, false, c.r, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: visible %v, want %v", c.r, got, c.want)
		}
		for i := range JQ {
			want := 0.0
			if i < len(got) {
				want = 1
			}
			if c.r == ReserveShortestJump && i == 3 {
				want = -1 // the job that would delay the reservation
			}
			if x[i*JobFeatures] != want {
				t.Errorf("%s: slot %d present %v, want %v", c.r, i, x[i*JobFeatures], want)
			}
		}
		if w := math.Log1p(1000) / lwait; math.Abs(x[SelectorIn-1]-w) > 1e-12 {
			t.Errorf("%s: the held job's wait %v, want %v", c.r, x[SelectorIn-1], w)
		}
	}
	// The shortest job (5: 9 nodes, 1 s; also of the largest expansion
	// factor, 951) is held instead of the oldest: its nodes are free at
	// 5000 with 15 spare, so every job that fits is visible, and the
	// last input is its wait (submitted at 50).
	nodes, req = append(nodes, 9), append(req, 1)
	for _, r := range []Reserve{ReserveShortest, ReserveXFactor} {
		got := jobState(x, nil, reserveView(nodes, req), norm, false, r, nil)
		if want := []int{1, 2, 4, 3}; !slices.Equal(got, want) {
			t.Errorf("%s, job 5 held: visible %v, want %v", r, got, want)
		}
		if w := math.Log1p(950) / lwait; math.Abs(x[SelectorIn-1]-w) > 1e-12 {
			t.Errorf("%s, job 5 held: its wait %v, want %v", r, x[SelectorIn-1], w)
		}
	}
	// The oldest is held whatever the others: 5 still does not fit.
	if got := jobState(x, nil, reserveView(nodes, req), norm, false, ReserveOldest, nil); !slices.Equal(got, []int{2, 4, 3}) {
		t.Errorf("easy-oldest, job 5 waiting: visible %v", got)
	}
	// When the held job fits, nothing is held; in the strict windows it
	// alone is visible.
	v := reserveView([]int{5, 6, 6}, []int64{10, 50000, 3000})
	if got := jobState(x, nil, v, norm, false, ReserveShortestJump, nil); !slices.Equal(got, []int{0, 2, 1}) {
		t.Errorf("nothing held: visible %v", got)
	}
	v = reserveView([]int{6, 5, 6}, []int64{50000, 10, 3000})
	for _, r := range []Reserve{ReserveShortestStrict, ReserveXFactorStrict} {
		if got := jobState(x, nil, v, norm, false, r, nil); !slices.Equal(got, []int{1}) {
			t.Errorf("%s, the held job fits: visible %v", r, got)
		}
	}
	// The oldest (0) fits: strict, it alone; guarded, every fitting job
	// while it has waited (1000 s) less than its request (50000 s, and
	// 12 h), it alone once it has waited as long as its request (500 s).
	for _, c := range []struct {
		r    Reserve
		req  int64
		want []int
	}{
		{ReserveOldestStrict, 50000, []int{0}},
		{ReserveOldestGuard, 50000, []int{0, 1, 2}},
		{ReserveOldestGuard, 500, []int{0}},
	} {
		v := reserveView([]int{6, 5, 6}, []int64{c.req, 10, 3000})
		if got := jobState(x, nil, v, norm, false, c.r, nil); !slices.Equal(got, c.want) {
			t.Errorf("%s, the oldest of request %d fits: visible %v, want %v", c.r, c.req, got, c.want)
		}
	}
}

// TestJoSHHAreaVisible: the area windows hold the job of the smallest
// request × nodes and rank the visible jobs after the oldest by area,
// where easy-shortest-strict ranks them by request.
func TestJoSHHAreaVisible(t *testing.T) {
	x := make([]float64, SelectorIn)
	// 0: 20 nodes × 5 s (area 100, the smallest: held, does not fit);
	// then areas 200, 1500, 4000, 2000, all ending before 5000.
	nodes, req := []int{20, 2, 1, 4, 1}, []int64{5, 100, 1500, 1000, 2000}
	for _, c := range []struct {
		r    Reserve
		want []int
	}{
		{ReserveShortestStrict, []int{1, 3, 2, 4}},
		{ReserveAreaStrict, []int{1, 2, 4, 3}},
		{ReserveArea, []int{1, 2, 4, 3}},
	} {
		if got := jobState(x, nil, reserveView(nodes, req), Norm{MaxRequest: 20000}, false, c.r, nil); !slices.Equal(got, c.want) {
			t.Errorf("%s: visible %v, want %v", c.r, got, c.want)
		}
	}
	// Held by area, not by request: job 0 is the shortest (10 s) but on
	// 40 nodes (area 400); job 1 (20 nodes × 15 s, area 300) is held and
	// fits at 5000, so job 2 (6 nodes until 7000) may not start now.
	nodes, req = []int{40, 20, 6}, []int64{10, 15, 6000}
	if got := jobState(x, nil, reserveView(nodes, req), Norm{MaxRequest: 20000}, false, ReserveAreaStrict, nil); len(got) != 0 {
		t.Errorf("easy-area-strict: visible %v, want none", got)
	}
	// easy-shortest-strict holds job 0 (40 nodes: free at 20000), so job
	// 2 ends in time and is visible.
	if got := jobState(x, nil, reserveView(nodes, req), Norm{MaxRequest: 20000}, false, ReserveShortestStrict, nil); !slices.Equal(got, []int{2}) {
		t.Errorf("easy-shortest-strict: visible %v, want [2]", got)
	}
}

// ruleSelector starts the shortest visible job of a reservation window
// (with an area window the smallest-area one; ties: the earlier slot); with noJump it never takes the slot of a job
// that would delay the reservation.
type ruleSelector struct {
	r      Reserve
	noJump bool
	x      []float64
	ends   []sim.RunningView
}

func (s *ruleSelector) Select(v *sim.View) (int, sim.Strategy) {
	if s.x == nil {
		s.x = make([]float64, SelectorIn)
	}
	valid := jobState(s.x, nil, v, Norm{MaxRequest: 7200}, false, s.r, &s.ends)
	best := -1
	for i, q := range valid {
		if s.noJump && s.x[i*JobFeatures] < 0 {
			continue
		}
		if best < 0 || rankKey(v.Queue[q], s.r.area()) < rankKey(v.Queue[best], s.r.area()) {
			best = q
		}
	}
	return best, sim.FirstFitStrategy
}

// TestJoSHHReserveRules: the reservation is bench/sim's EASY: on
// synthetic sequences, always starting the shortest visible job of
// easy-shortest and easy-shortest-strict gives SJF-EASY's schedule
// (every job's start), and in
// easy-shortest-jump it gives greedy shortest-first's (ShortestFitting)
// when the last slot may be taken and SJF-EASY's when it may not.
func TestJoSHHReserveRules(t *testing.T) {
	ctx := context.Background()
	w := synthetic(1200, 7)
	base, err := SimConfig(w)
	if err != nil {
		t.Fatal(err)
	}
	base.Check = true
	starts := func(c sim.Config, st int) []int64 {
		r, err := sim.Run(ctx, TraceOf(w, st, 400), c)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, j := range r.Jobs {
			out = append(out, j.Start)
		}
		return out
	}
	with := func(s sim.Selector) sim.Config {
		c := base
		c.Policy, c.Selector = sim.Select, s
		return c
	}
	for _, st := range []int{0, 400, 800} {
		c := base
		c.Policy = "sjf"
		sjf := starts(c, st)
		c.Policy = "saf"
		saf := starts(c, st)
		if slices.Equal(sjf, saf) {
			t.Fatalf("sequence %d: SJF-EASY and SAF-EASY agree: the test cannot tell them apart", st)
		}
		greedy := starts(with(ShortestFitting{St: sim.FirstFitStrategy}), st)
		if slices.Equal(sjf, greedy) {
			t.Fatalf("sequence %d: SJF-EASY and greedy agree: the test cannot tell them apart", st)
		}
		for _, k := range []struct {
			name string
			s    sim.Selector
			want []int64
		}{
			{"easy-shortest", &ruleSelector{r: ReserveShortest}, sjf},
			{"easy-shortest-jump, never jumping", &ruleSelector{r: ReserveShortestJump, noJump: true}, sjf},
			{"easy-shortest-jump", &ruleSelector{r: ReserveShortestJump}, greedy},
			{"easy-shortest-strict", &ruleSelector{r: ReserveShortestStrict}, sjf},
			{"easy-area-strict", &ruleSelector{r: ReserveAreaStrict}, saf},
			{"easy-area", &ruleSelector{r: ReserveArea}, saf},
		} {
			if got := starts(with(k.s), st); !slices.Equal(got, k.want) {
				t.Errorf("sequence %d, %s: the starts differ from the rule's", st, k.name)
			}
		}
	}
}

// TestJoSHHReserveRoundTrip: each window survives its weights file; the
// arrival window takes no reservation.
func TestJoSHHReserveRoundTrip(t *testing.T) {
	for _, r := range []Reserve{ReserveNone, ReserveOldest, ReserveShortest, ReserveShortestJump, ReserveXFactor, ReserveShortestStrict, ReserveXFactorStrict, ReserveOldestStrict, ReserveOldestGuard, ReserveArea, ReserveAreaStrict} {
		p := NewJoSHH(learn.NewRand(4, 4))
		p.Reserve = r
		q, err := ReadJoSHH(bytes.NewReader(joshhBytes(t, p)))
		if err != nil {
			t.Fatal(err)
		}
		if q.Reserve != r || q.Arrival {
			t.Errorf("%s read back as %s (arrival %v)", r, q.Reserve, q.Arrival)
		}
	}
	p := NewJoSHH(learn.NewRand(4, 4))
	p.Arrival, p.Reserve = true, ReserveOldest
	if err := WriteJoSHH(&bytes.Buffer{}, p); err == nil {
		t.Error("an arrival window with a reservation written")
	}
	cfg := smallJoSHHConfig(synthetic(600, 3), 1)
	cfg.Arrival, cfg.Reserve = true, ReserveShortest
	if _, err := TrainJoSHH(context.Background(), cfg); err == nil {
		t.Error("trained an arrival window with a reservation")
	}
}

// TestShippedEasyOldestFile reads the extra Lublin-1 weights chosen by the
// per-trace rule (weights/joshh-lublin-easy-oldest.bin.gz, not embedded:
// `--weights` takes it) and checks that they are the easy-oldest window's
// and differ from the embedded default.
func TestShippedEasyOldestFile(t *testing.T) {
	f, err := os.Open("weights/joshh-lublin-easy-oldest.bin.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ReadJoSHH(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Window(); got != "easy-oldest" {
		t.Errorf("window %q, want easy-oldest", got)
	}
	def, err := ShippedJoSHHOf("lublin-1")
	if err != nil {
		t.Fatal(err)
	}
	if def.Window() == p.Window() {
		t.Errorf("the embedded Lublin-1 weights have the same window %q", p.Window())
	}
}

// TestShippedJoSHHWindows: the embedded weights are of the windows the
// seventh round's rule chose per trace (docs/results/2026-11-27-joshh.md).
func TestShippedJoSHHWindows(t *testing.T) {
	for tr, want := range map[string]string{"lublin-1": "easy-area", "hpc2n": "easy-area-strict"} {
		p, err := ShippedJoSHHOf(tr)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Window(); got != want {
			t.Errorf("%s: shipped window %q, want %q", tr, got, want)
		}
	}
}

// TestParseJoSHHWindow holds the parser to the names JoSHH.Window gives:
// every window round-trips, and an unknown name is an error.
func TestParseJoSHHWindow(t *testing.T) {
	for r := range ReserveAreaStrict + 1 {
		arrival, got, err := ParseJoSHHWindow(r.String())
		if err != nil || arrival || got != r {
			t.Errorf("%v: got %v, arrival %v, %v", r, got, arrival, err)
		}
	}
	if arrival, _, err := ParseJoSHHWindow("arrival"); err != nil || !arrival {
		t.Errorf("arrival: %v, %v", arrival, err)
	}
	for _, bad := range []string{"", "easy", "reserve(3)", "EASY-AREA"} {
		if _, _, err := ParseJoSHHWindow(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
