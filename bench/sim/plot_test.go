package sim_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/solver/csp"
)

// TestStartedAndPlot checks the progress hook (called once per started
// job, counting up to the runnable jobs) and the figures of a run.
func TestStartedAndPlot(t *testing.T) {
	cfg := config(t, "window")
	cfg.Solver, cfg.GapSolver = heuristics.Seq{}, csp.Solver{}
	var calls [][2]int
	cfg.Started = func(done, total int) { calls = append(calls, [2]int{done, total}) }
	r, err := sim.Run(context.Background(), tiny(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{1, 3}, {2, 3}, {3, 3}}; !slices.Equal(calls, want) {
		t.Fatalf("Started calls %v, want %v", calls, want)
	}
	dir := t.TempDir()
	files, err := r.Plot(dir, "window seq")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sim-wait.png", "sim-wait.svg", "sim-cost.png", "sim-cost.svg", "sim-latency.png", "sim-latency.svg", "sim-gap.png", "sim-gap.svg"}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
		if b, err := os.ReadFile(f); err != nil || len(b) < 500 {
			t.Errorf("%s: %d bytes, %v", f, len(b), err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("figures %v, want %v", got, want)
	}
	// A per-job policy has no windows: no latency or gap figure.
	r, err = sim.Run(context.Background(), tiny(), config(t, "fcfs"))
	if err != nil {
		t.Fatal(err)
	}
	files, err = r.Plot(filepath.Join(dir, "fcfs"), "fcfs")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f, "latency") || strings.Contains(f, "gap") {
			t.Errorf("fcfs drew %s", f)
		}
	}
	if len(files) != 4 {
		t.Errorf("fcfs figures %v, want wait and cost", files)
	}
}
