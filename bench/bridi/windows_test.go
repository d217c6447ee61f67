package bridi

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

func corpusNames(c []CorpusWindow) []string {
	var out []string
	for _, cw := range c {
		out = append(out, cw.Name)
	}
	return out
}

// TestCorpusDeterministicAndSampled: the same configuration gives the same
// windows; every window has at least MinJobs waiting jobs; a sample is that
// many of the full corpus's windows, in time order; and the windows survive
// a round trip through WriteCorpus and ReadCorpus.
func TestCorpusDeterministicAndSampled(t *testing.T) {
	ctx := context.Background()
	cfg := CorpusConfig{Seed: 4, Jobs: 80, MeanInterarrival: 20, MinJobs: 3}
	all, err := Corpus(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 10 {
		t.Fatalf("only %d windows with ≥ 3 jobs", len(all))
	}
	again, err := Corpus(ctx, cfg)
	if err != nil || !slices.Equal(corpusNames(all), corpusNames(again)) {
		t.Fatalf("second run differs (%v): %v vs %v", err, corpusNames(again), corpusNames(all))
	}
	for k, cw := range all {
		if len(cw.Window.Jobs) < 3 || cw.Window.Time <= 0 || (k > 0 && cw.Window.Time <= all[k-1].Window.Time) {
			t.Fatalf("%s: %d jobs at %d", cw.Name, len(cw.Window.Jobs), cw.Window.Time)
		}
		a, _ := windowjson.Marshal(cw.Window)
		b, _ := windowjson.Marshal(again[k].Window)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: the window differs between runs", cw.Name)
		}
	}
	cfg.Sample = 5
	sample, err := Corpus(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	names := corpusNames(all)
	for k, cw := range sample {
		i := slices.Index(names, cw.Name)
		if i < 0 || (k > 0 && cw.Window.Time <= sample[k-1].Window.Time) {
			t.Fatalf("sample %v is not an ordered subset of %v", corpusNames(sample), names)
		}
	}
	if len(sample) != 5 {
		t.Fatalf("sample of %d", len(sample))
	}
	cfg.Sample, cfg.Seed = 5, 5
	if other, err := Corpus(ctx, cfg); err != nil || slices.Equal(corpusNames(other), corpusNames(sample)) {
		t.Errorf("seed 5 draws the same sample as seed 4 (%v)", err)
	}

	dir := t.TempDir()
	if err := WriteCorpus(dir, sample); err != nil {
		t.Fatal(err)
	}
	back, err := ReadCorpus([]string{dir})
	if err != nil || len(back) != len(sample) {
		t.Fatalf("read back %d windows (%v)", len(back), err)
	}
	for _, b := range back {
		k := slices.Index(corpusNames(sample), strings.TrimSuffix(filepath.Base(b.Name), ".json"))
		if k < 0 {
			t.Fatalf("%s: not written", b.Name)
		}
		x, _ := windowjson.Marshal(sample[k].Window)
		y, _ := windowjson.Marshal(b.Window)
		if !bytes.Equal(x, y) {
			t.Errorf("%s: changed in the round trip", b.Name)
		}
	}
	again2 := t.TempDir()
	if err := WriteCorpus(again2, back); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(again2, "t*.json")); len(files) != len(back) || strings.HasSuffix(files[0], ".json.json") {
		t.Errorf("rewritten as %v", files)
	}
	if _, err := ReadCorpus([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no *.json") {
		t.Errorf("empty directory: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"time": 1}`), 0o644)
	if _, err := ReadCorpus([]string{bad}); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad window: %v", err)
	}
}

// claimsOptimal is a list scheduler that lies: it reports its schedule's
// objective as a proven bound.
type claimsOptimal struct{ solver.Scheduler }

func (c claimsOptimal) Name() string { return "liar" }

func (c claimsOptimal) Solve(ctx context.Context, p *solver.ScheduleProblem) (*solver.Schedule, error) {
	s, err := c.Scheduler.Solve(ctx, p)
	if err == nil {
		s.Bound = s.Objective
	}
	return s, err
}

// TestSolveCorpusGaps: every gap is to the best bound of the run — 0 for
// a proven answer, never below the scheduler's own gap, and for the list
// schedule at least the exact solver's when both answered; a bound above
// another answer's objective is reported as a solver bug.
func TestSolveCorpusGaps(t *testing.T) {
	ctx := context.Background()
	c, err := Corpus(ctx, CorpusConfig{Seed: 1, Jobs: 120, MeanInterarrival: 40, MinJobs: 4, Sample: 4})
	if err != nil || len(c) != 4 {
		t.Fatalf("%d windows (%v)", len(c), err)
	}
	exact := sat.Solver{Initial: []solver.Scheduler{heuristics.PBSWalltime()}}
	ss := []solver.Scheduler{exact, heuristics.PBSWalltime()}
	// A generous limit: on a loaded machine even the list schedule has
	// missed 200 ms (and then has no answer to compare).
	res, err := SolveCorpus(ctx, c, ss, 0, 2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 8 {
		t.Fatalf("%d results", len(res))
	}
	for k := 0; k < len(res); k += 2 {
		x, h := res[k], res[k+1]
		if x.Solver != "sat" || h.Solver != "pbs-walltime" || x.Window != h.Window || x.Gap == nil || h.Gap == nil || h.Bound != nil {
			t.Fatalf("results %d, %d: %+v %+v", k, k+1, x, h)
		}
		own := (*x.Objective - *x.Bound) / *x.Objective
		if *x.Gap < 0 || math.Abs(*x.Gap-own) > 1e-12 || (x.Status == "optimal" && *x.Gap != 0) {
			t.Errorf("%s: sat gap %v, own %v, status %s", x.Window, *x.Gap, own, x.Status)
		}
		if *h.Gap < *x.Gap-1e-12 || *h.Objective < *x.Objective-1e-9 {
			t.Errorf("%s: the list schedule (%v, gap %v) beats sat's (%v, gap %v)", x.Window, *h.Objective, *h.Gap, *x.Objective, *x.Gap)
		}
	}
	rows := SummariseCorpus(res)
	if rows[0].Solver != "sat" || rows[0].Jobs != "all" || rows[0].Windows != 4 || rows[0].OwnWithin1 < rows[0].Proven || rows[1].OwnWithin1 != -1 {
		t.Errorf("rows %+v", rows)
	}
	var buf bytes.Buffer
	if err := WriteCorpusReport(&buf, rows); err != nil || !strings.Contains(buf.String(), "pbs-walltime") {
		t.Errorf("report (%v):\n%s", err, buf.String())
	}
	_, err = SolveCorpus(ctx, c, []solver.Scheduler{exact, claimsOptimal{heuristics.PBSFifo()}}, 0, 2*time.Second, nil)
	if !errors.Is(err, solver.ErrSolverBug) || !strings.Contains(err.Error(), "liar's bound") {
		t.Errorf("a list schedule claimed optimal: %v", err)
	}
}

// TestSummariseCorpus checks the counts, the gap statistics and the
// bands of SummariseCorpus on hand-made results.
func TestSummariseCorpus(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rs := []CorpusResult{
		{Window: "a", Jobs: 3, Solver: "x", Status: "optimal", Objective: f(2), Bound: f(2), Gap: f(0), Elapsed: 10},
		{Window: "a", Jobs: 3, Solver: "h", Status: "feasible", Objective: f(4), Gap: f(0.5), Elapsed: 1},
		{Window: "b", Jobs: 8, Solver: "x", Status: "feasible", Objective: f(10), Bound: f(9.95), Gap: f(0.005), Elapsed: 30},
		{Window: "b", Jobs: 8, Solver: "h", Status: "feasible", Objective: f(10), Gap: f(0.005), Elapsed: 2},
		{Window: "c", Jobs: 20, Solver: "x", Status: "feasible", Objective: f(10), Bound: f(5), Gap: f(0.02), Elapsed: 20},
		{Window: "c", Jobs: 20, Solver: "h", Status: "unknown", Elapsed: 3},
	}
	got := SummariseCorpus(rs)
	want := []CorpusRow{
		{Solver: "x", Jobs: "all", Windows: 3, Proven: 1, Within1: 2, OwnWithin1: 2, GapMean: 0.025 / 3, GapMedian: 0.005, GapMax: 0.02, LatencyMedian: 20, LatencyMax: 30},
		{Solver: "h", Jobs: "all", Windows: 3, Within1: 1, OwnWithin1: -1, Unknown: 1, GapMean: 0.2525, GapMedian: 0.5, GapMax: 0.5, LatencyMedian: 2, LatencyMax: 3},
		{Solver: "x", Jobs: "1–6", Windows: 1, Proven: 1, Within1: 1, OwnWithin1: 1, LatencyMedian: 10, LatencyMax: 10},
		{Solver: "h", Jobs: "1–6", Windows: 1, OwnWithin1: -1, GapMean: 0.5, GapMedian: 0.5, GapMax: 0.5, LatencyMedian: 1, LatencyMax: 1},
		{Solver: "x", Jobs: "7–9", Windows: 1, Within1: 1, OwnWithin1: 1, GapMean: 0.005, GapMedian: 0.005, GapMax: 0.005, LatencyMedian: 30, LatencyMax: 30},
		{Solver: "h", Jobs: "7–9", Windows: 1, Within1: 1, OwnWithin1: -1, GapMean: 0.005, GapMedian: 0.005, GapMax: 0.005, LatencyMedian: 2, LatencyMax: 2},
		{Solver: "x", Jobs: "15+", Windows: 1, GapMean: 0.02, GapMedian: 0.02, GapMax: 0.02, LatencyMedian: 20, LatencyMax: 20},
		{Solver: "h", Jobs: "15+", Windows: 1, Unknown: 1, OwnWithin1: -1, LatencyMedian: 3, LatencyMax: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	for k := range want {
		g, w := got[k], want[k]
		if math.Abs(g.GapMean-w.GapMean) > 1e-12 {
			t.Errorf("row %d: gap mean %v, want %v", k, g.GapMean, w.GapMean)
		}
		g.GapMean = w.GapMean
		if g != w {
			t.Errorf("row %d:\n got %+v\nwant %+v", k, g, w)
		}
	}
}
