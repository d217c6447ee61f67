package limits

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
)

// TestMain makes the test binary a fake optsched solve when
// LIMITS_FAKE_SOLVE is set: the argument after --fake says how it
// answers.
func TestMain(m *testing.M) {
	if os.Getenv("LIMITS_FAKE_SOLVE") == "" {
		os.Exit(m.Run())
	}
	args := os.Args[1:]
	i := slices.Index(args, "--fake")
	if i < 0 || args[0] != "solve" || !strings.HasSuffix(args[len(args)-1], ".json") {
		fmt.Fprintf(os.Stderr, "fake solve: bad arguments %q\n", args)
		os.Exit(2)
	}
	switch args[i+1] {
	case "answer":
		fmt.Println(`{"status": "optimal", "elapsed_ms": 4.5, "allocations": []}`)
	case "unknown":
		fmt.Println(`{"status": "unknown", "elapsed_ms": 11, "allocations": []}`)
		fmt.Fprintln(os.Stderr, "optsched: no allocation found within 10ms")
		os.Exit(1)
	case "unavailable":
		fmt.Fprintln(os.Stderr, "optsched: lpsolve: this optsched was built without cgo; lp_solve is unavailable")
		os.Exit(1)
	case "hang":
		time.Sleep(10 * time.Minute)
	}
	os.Exit(0)
}

// TestLimitsSweepRunsChildren: Sweep execs every cell on every window through
// Config.Env, reads answers, unknowns, unavailable solvers and hung runs,
// and measures the peak RSS of each child.
func TestLimitsSweepRunsChildren(t *testing.T) {
	tiny := Class{Name: "paper", Family: WholeNode, Args: []string{"--max-jobs", "5"}, Bounded: true,
		Make: func(seed uint64, k int) (*model.Window, error) {
			cfg := instances.PaperGenConfig()
			cfg.Seed = subSeed(seed, k)
			return instances.Generate(cfg)
		}}
	fake := func(name string) Solver { return Solver{Name: name, Family: WholeNode, Args: []string{"--fake", name}} }
	var progress strings.Builder
	cfg := Config{
		Exe:      os.Args[0],
		Env:      func([]string) []string { return []string{"LIMITS_FAKE_SOLVE=1"} },
		Classes:  []Class{tiny, {Name: "eurora", Family: CP}},
		Solvers:  []Solver{fake("answer"), fake("unknown"), fake("unavailable")},
		Limits:   []time.Duration{10 * time.Millisecond},
		Windows:  2,
		Seed:     1,
		Dir:      t.TempDir(),
		Progress: &progress,
	}
	runs, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 || cfg.Runs() != 6 {
		t.Fatalf("%d runs, Runs() %d, want 6 (the cp class has no solver)", len(runs), cfg.Runs())
	}
	// A run that does not end is killed RunTimeout after its limit (the
	// fake never answers, so this does not depend on the machine's speed).
	hang := cfg
	hang.Solvers, hang.Windows, hang.RunTimeout = []Solver{fake("hang")}, 1, 100*time.Millisecond
	more, err := Sweep(context.Background(), hang)
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, more...)
	for _, r := range runs {
		if !slices.Equal(r.Args[:5], []string{"solve", "--time-limit", "10ms", "--max-jobs", "5"}) || r.Args[len(r.Args)-2] != "json" {
			t.Errorf("args %q", r.Args)
		}
		measured := r.MaxRSSKiB != nil && *r.MaxRSSKiB > 0
		if runtime.GOOS == "linux" && r.Unavailable == "" && !measured {
			t.Errorf("%s window %d: no peak RSS", r.Solver, r.Window)
		}
	}
	if _, err := os.Stat(cfg.Dir + "/paper-1.json"); err != nil {
		t.Errorf("window not written: %v", err)
	}
	cells := Summarise(runs)
	want := map[string]func(c Cell) bool{
		"answer":      func(c Cell) bool { return c.Answered == 2 && c.Statuses["optimal"] == 2 && c.WorstOvershootMS == -5.5 },
		"unknown":     func(c Cell) bool { return c.Answered == 2 && c.Statuses["unknown"] == 2 && c.WorstOvershootMS == 1 },
		"unavailable": func(c Cell) bool { return c.Runs == 2 && strings.Contains(c.Unavailable, "lp_solve is unavailable") },
		"hang": func(c Cell) bool {
			return c.Answered == 0 && len(c.Failures) == 1 && strings.Contains(c.Failures[0], "killed 110ms after")
		},
	}
	for _, c := range cells {
		if ok := want[c.Solver]; ok == nil || !ok(c) {
			t.Errorf("cell %s: %+v", c.Where(), c)
		}
	}
	// The unavailable solver ran once: its second run was not made.
	var walls []float64
	for _, r := range runs {
		if r.Unavailable != "" {
			walls = append(walls, r.WallMS)
		}
	}
	if len(walls) != 2 || walls[0] == 0 || walls[1] != 0 {
		t.Errorf("unavailable runs' wall times %v: want one run made", walls)
	}
	if n := strings.Count(progress.String(), "\n"); n != 7 || !strings.Contains(progress.String(), "paper/hang 10ms window 0: FAILED") {
		t.Errorf("progress:\n%s", progress.String())
	}
	if v := Judge(cells); v.OK || v.Failures != 1 || len(v.Unavailable) != 1 {
		t.Errorf("verdict %+v", v)
	}
}
