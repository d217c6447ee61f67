package predict

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/bench/trace"
)

// randomLog is n jobs of a few users, some without a request or a user.
func randomLog(rng *rand.Rand, n int) []Job {
	jobs := make([]Job, n)
	at := int64(0)
	for i := range jobs {
		at += rng.Int64N(300)
		req := 1 + rng.Int64N(20000)
		if rng.IntN(10) == 0 {
			req = 0
		}
		run := rng.Int64N(2 * max(req, 1000)) // some past their request
		user := strconv.Itoa(rng.IntN(6))
		if rng.IntN(15) == 0 {
			user = ""
		}
		jobs[i] = Job{ID: strconv.Itoa(i), User: user, Submit: at, Start: at + rng.Int64N(5000), Run: run, Request: req}
	}
	return jobs
}

func allPredictors() []Predictor {
	return append(Predictors(), UserRatio{K: 1}, UserRatio{K: 4, Conditional: true})
}

// TestPredictionsInBounds: every predictor's remaining time is ≥ 0 and,
// when the request is known, at most max(request − elapsed, 0): the
// predicted total lies in [elapsed, max(request, elapsed)].
func TestPredictionsInBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	jobs := randomLog(rng, 400)
	h := NewHistory(jobs)
	for q := 0; q < 3000; q++ {
		r := Running{User: strconv.Itoa(rng.IntN(7)), Request: rng.Int64N(20000), Elapsed: rng.Int64N(30000)}
		if rng.IntN(10) == 0 {
			r.User = ""
		}
		now := rng.Int64N(jobs[len(jobs)-1].Start + 50000)
		for _, p := range allPredictors() {
			got := p.Remaining(h, now, r)
			if math.IsNaN(got) || got < 0 {
				t.Fatalf("%s at %d for %+v: %v", p.Name(), now, r, got)
			}
			if r.Request > 0 && got > float64(max(r.Request-r.Elapsed, 0)) {
				t.Fatalf("%s at %d for %+v: %v left, past the request", p.Name(), now, r, got)
			}
		}
	}
	if got := (RequestLeft{}).Remaining(h, 0, Running{Request: 100, Elapsed: 30}); got != 70 {
		t.Errorf("request-left: %v, want 70", got)
	}
}

// TestFinished: History.Finished is exactly the user's jobs that ended at
// or before now, in order of their ends.
func TestFinished(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	jobs := randomLog(rng, 300)
	h := NewHistory(jobs)
	for q := 0; q < 200; q++ {
		user, now := strconv.Itoa(rng.IntN(6)), rng.Int64N(jobs[len(jobs)-1].Start+40000)
		got := h.Finished(user, now)
		want := 0
		for _, j := range jobs {
			if j.User == user && j.End() <= now {
				want++
			}
		}
		if len(got) != want {
			t.Fatalf("user %s at %d: %d jobs, want %d", user, now, len(got), want)
		}
		for i, j := range got {
			if j.User != user || j.End() > now || i > 0 && got[i-1].End() > j.End() {
				t.Fatalf("user %s at %d: job %d %+v", user, now, i, j)
			}
		}
	}
	if got := h.Finished("", 1<<40); len(got) != 0 {
		t.Errorf("jobs without a user have a history: %d", len(got))
	}
}

// TestNoLeak: changing, or adding, jobs that end after t — their run
// times, requests, users, even the job predicted — never changes a
// prediction made at t.
func TestNoLeak(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 40; trial++ {
		jobs := randomLog(rng, 200)
		now := jobs[rng.IntN(len(jobs))].Start + rng.Int64N(3000)
		queries := make([]Running, 30)
		for i := range queries {
			queries[i] = Running{User: strconv.Itoa(rng.IntN(6)), Request: 1 + rng.Int64N(20000), Elapsed: rng.Int64N(5000)}
		}
		predict := func(jobs []Job) []float64 {
			h := NewHistory(jobs)
			var out []float64
			for _, q := range queries {
				for _, p := range allPredictors() {
					out = append(out, p.Remaining(h, now, q))
				}
			}
			return out
		}
		before := predict(jobs)
		changed := append([]Job(nil), jobs...)
		moved := 0
		for i, j := range changed {
			if j.End() <= now {
				continue
			}
			moved++
			j.Run += rng.Int64N(50000) // still ends after now
			j.Request = rng.Int64N(30000)
			j.User = strconv.Itoa(rng.IntN(6))
			changed[i] = j
		}
		for i := 0; i < 20; i++ { // jobs that have not ended yet
			start := now - rng.Int64N(1000)
			changed = append(changed, Job{User: strconv.Itoa(rng.IntN(6)), Submit: start, Start: start, Run: now - start + 1 + rng.Int64N(1000), Request: 1 + rng.Int64N(9000)})
		}
		after := predict(changed)
		for i := range before {
			if before[i] != after[i] {
				p := allPredictors()[i%len(allPredictors())]
				t.Fatalf("trial %d: %s's prediction at %d moved from %v to %v when %d jobs ending later changed", trial, p.Name(), now, before[i], after[i], moved)
			}
		}
	}
	// The check can fail: a change to a job that has ended moves it.
	jobs := []Job{{User: "a", Start: 0, Run: 10, Request: 100}}
	q := Running{User: "a", Request: 1000}
	a := UserLast{}.Remaining(NewHistory(jobs), 10, q)
	jobs[0].Run = 9
	if b := (UserLast{}).Remaining(NewHistory(jobs), 10, q); a == b {
		t.Errorf("user-last ignores a finished job's run: %v", a)
	}
}

// tinyLog is the hand-made log of TestEvaluateByHand, out of submit order.
func tinyLog() []Job {
	return []Job{
		{ID: "j3", User: "a", Submit: 500, Start: 500, Run: 120, Request: 400},
		{ID: "j1", User: "a", Submit: 0, Start: 0, Run: 50, Request: 200},
		{ID: "j2", User: "a", Submit: 10, Start: 10, Run: 300, Request: 300},
		{ID: "j4", User: "a", Submit: 600, Start: 1000, Run: 60, Request: 100},
		{ID: "j5", User: "b", Submit: 700, Start: 700, Run: 59, Request: 100},
		{ID: "j6", User: "b", Submit: 800, Start: 800, Run: 100},
	}
}

// TestEvaluateByHand: MAPE on a six-job log worked out by hand. With a
// warm-up of 0.4, j1 and j2 are history only; of the held-out j3–j6, j5
// runs under 60 s and j6 has no request, so j3 and j4 are evaluated, at
// t = start (elapsed 0) and at half their runs (60 and 30 s).
func TestEvaluateByHand(t *testing.T) {
	rep, err := Evaluate(tinyLog(), Predictors(), Config{WarmUp: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Jobs != 6 || rep.WarmUp != 2 || rep.HeldOut != 4 || rep.Evaluated != 2 || rep.ShortRun != 1 || rep.NoRequest != 1 {
		t.Fatalf("counts %+v", rep)
	}
	// APEs of j3 and j4, worked out in the comments.
	want := map[string][2]float64{
		// j3: 400 for 120 (233.3 %); j4: 100 for 60 (66.7 %). At half:
		// 340 for 60 (466.7 %); 70 for 30 (133.3 %).
		"request-left": {(280.0/120 + 40.0/60) * 50, (280.0/60 + 40.0/30) * 50},
		// j3 at 500: last ended j2, 300 (150 %); j4 at 1000: j3, 120
		// clipped to 100 (66.7 %). At half: 240 for 60, 70 for 30.
		"user-last": {(180.0/120 + 40.0/60) * 50, (180.0/60 + 40.0/30) * 50},
		// j3: median(0.25, 1) × 400 = 250 (108.3 %); j4: median(0.25, 1,
		// 0.3) × 100 = 30 (50 %). At half: 190 for 60; 30 clipped to
		// the elapsed 30, 0 left for 30 (100 %).
		"user-ratio": {(130.0/120 + 30.0/60) * 50, (130.0/60 + 1) * 50},
		// At 0 as user-ratio; at half j3 sees only j2 (j1 ran 50 ≤ 60):
		// 400, 340 for 60; j4 sees all three, as user-ratio.
		"user-ratio-cond": {(130.0/120 + 30.0/60) * 50, (280.0/60 + 1) * 50},
		// j3: remaining {300, 50} weighted 1/300, 1/50: 50 for 120
		// (58.3 %); j4: {120, 300, 50}: 50 for 60 (16.7 %). At half: j3
		// sees only j2, 240 for 60 (300 %); j4: {20, 270, 90}: 20 for
		// 30 (33.3 %).
		"user-mape": {(70.0/120 + 10.0/60) * 50, (180.0/60 + 10.0/30) * 50},
	}
	if len(rep.Results) != 10 {
		t.Fatalf("results %+v", rep.Results)
	}
	for _, r := range rep.Results {
		w, ok := want[r.Predictor]
		i := 0
		if r.Elapsed == 0.5 {
			i = 1
		}
		if !ok || r.Jobs != 2 || math.Abs(r.MAPE-w[i]) > 1e-9 {
			t.Errorf("%s at %v: MAPE %v over %d jobs, want %v over 2", r.Predictor, r.Elapsed, r.MAPE, r.Jobs, w[i])
		}
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"user-ratio-cond", "110.8", "39.8", "other data", "evaluated 2"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

// TestEvaluateErrors: a bad configuration, and a log without an
// evaluable job, are errors.
func TestEvaluateErrors(t *testing.T) {
	for _, c := range []Config{{WarmUp: 1}, {WarmUp: -0.1}, {MinRun: -5}, {Fractions: []float64{1}}} {
		if _, err := Evaluate(tinyLog(), Predictors(), c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if _, err := Evaluate(tinyLog(), Predictors(), Config{MinRun: 1000}); !errors.Is(err, ErrNoneEvaluated) {
		t.Errorf("no job of 1000 s: %v", err)
	}
}

// TestFromTrace: jobs whose wait or run time the log does not give are
// dropped; the start is submit + wait; an unknown request reads 0.
func TestFromTrace(t *testing.T) {
	log := "1 0 5 100 1 -1 -1 1 200 -1 1 3 -1 -1 1 -1 -1 -1\n" +
		"2 1 -1 80 1 -1 -1 1 50 -1 1 4 -1 -1 1 -1 -1 -1\n" +
		"3 2 3 -1 1 -1 -1 1 50 -1 1 4 -1 -1 1 -1 -1 -1\n" +
		"4 4 7 30 1 -1 -1 1 -1 -1 0 4 -1 -1 1 -1 -1 -1\n"
	tr, err := trace.ReadSWF(strings.NewReader(log), trace.Options{KeepSWF: true})
	if err != nil {
		t.Fatal(err)
	}
	jobs, dropped, err := FromTrace(tr)
	want := []Job{{ID: "1", User: "3", Submit: 0, Start: 5, Run: 100, Request: 200}, {ID: "4", User: "4", Submit: 4, Start: 11, Run: 30}}
	if err != nil || dropped != 2 || len(jobs) != 2 || jobs[0] != want[0] || jobs[1] != want[1] {
		t.Errorf("got %+v, %d dropped, %v", jobs, dropped, err)
	}
	tr, _ = trace.ReadSWF(strings.NewReader(log), trace.Options{})
	if _, _, err := FromTrace(tr); err == nil {
		t.Error("a trace without SWF records: no error")
	}
}

// TestWeightedMedianInv: the weighted median minimises Σ |x − xᵢ| / xᵢ,
// checked against every candidate xᵢ (the objective is piecewise linear
// with its minimum at one of them) on random sets, and by hand.
func TestWeightedMedianInv(t *testing.T) {
	if got := WeightedMedianInv([]float64{1000, 10, 100}); got != 10 {
		t.Errorf("{10, 100, 1000}: %v, want 10 (weight 0.1 of 0.111)", got)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	cost := func(x float64, xs []float64) float64 {
		var c float64
		for _, v := range xs {
			c += math.Abs(x-v) / v
		}
		return c
	}
	for range 500 {
		xs := make([]float64, 1+rng.IntN(9))
		for i := range xs {
			xs[i] = float64(1 + rng.IntN(5000))
		}
		got := WeightedMedianInv(slices.Clone(xs))
		best := math.Inf(1)
		for _, c := range xs {
			best = min(best, cost(c, xs))
		}
		if cost(got, xs) > best+1e-9 {
			t.Fatalf("%v: %v costs %v, the best candidate %v", xs, got, cost(got, xs), best)
		}
	}
}
