package bridi

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model/windowjson"
)

// TestRunSmall runs a small workload under all three policies: every
// decision goes through model.Check (solver.SolveWindow), every job
// starts, waits are non-negative, and the report prints the published
// figures beside ours.
func TestRunSmall(t *testing.T) {
	cfg := Config{Seed: 3, Jobs: 40, MeanInterarrival: 100, TimeLimit: 200 * time.Millisecond}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Summary.Jobs != 40 || r.Decisions == 0 || r.Summary.MeanWait < 0 || r.Summary.WQT < 0 {
			t.Errorf("%s: %+v", r.Policy, r.Summary)
		}
	}
	var buf bytes.Buffer
	if err := WriteReport(&buf, cfg, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"119.77", "152.94", "137.74", "11.45 s", "pbs-walltime", "cp decisions:"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestWorkloadDeterministic: the same seed gives the same workload.
func TestWorkloadDeterministic(t *testing.T) {
	a, b := Workload(Config{Seed: 9, Jobs: 50}), Workload(Config{Seed: 9, Jobs: 50})
	for i := range a {
		if a[i].Submit != b[i].Submit || a[i].Runtime != b[i].Runtime || a[i].Walltime != b[i].Walltime || a[i].Runtime > a[i].Walltime {
			t.Fatalf("job %d: %+v vs %+v", i, a[i], b[i])
		}
	}
}

// TestRunGridPolicy: the cp-grid policy (CP/SAT without the compressed
// time domain) runs, keeps every slot of its domains, and the compressed
// cp policy keeps no more slots than the grid on the same workload.
func TestRunGridPolicy(t *testing.T) {
	cfg := Config{Seed: 5, Jobs: 100, MeanInterarrival: 15, TimeLimit: 50 * time.Millisecond, Policies: []string{"cp", "cp-grid"}}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Summary.Jobs != 100 || len(r.Slots) == 0 {
			t.Errorf("%s: %d jobs, %d decisions that searched (%v, queues %v)", r.Policy, r.Summary.Jobs, len(r.Slots), r.Statuses, r.Queue)
		}
		for k := range r.Slots {
			if r.Candidates[k] > r.Slots[k] || (r.Policy == "cp-grid" && r.Candidates[k] != r.Slots[k]) {
				t.Errorf("%s decision %d: %v candidates of %v slots", r.Policy, k, r.Candidates[k], r.Slots[k])
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteReport(&buf, cfg, res); err != nil || !strings.Contains(buf.String(), "cp start domains") || !strings.Contains(buf.String(), "cp-grid start domains") {
		t.Errorf("report (%v):\n%s", err, buf.String())
	}
	if _, err := Run(context.Background(), Config{Jobs: 5, Policies: []string{"cp-fancy"}}); err == nil {
		t.Error("unknown policy accepted")
	}
}

// TestRunDumpUnproven: with DumpDir, every CP/SAT decision not proven
// optimal leaves its window there, one file per decision, and each reads
// back as a window with waiting jobs and the Eurora-like cluster; a run
// of another seed into the same directory adds its own files.
func TestRunDumpUnproven(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "unproven")
	cfg := Config{Seed: 5, Jobs: 100, MeanInterarrival: 15, TimeLimit: 2 * time.Millisecond, Policies: []string{"cp", "pbs-fifo"}, DumpDir: dir}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := res[0].Decisions - res[0].Statuses["optimal"]
	if want == 0 || len(files) != want {
		t.Fatalf("%d files for %d decisions not proven optimal (%v)", len(files), want, res[0].Statuses)
	}
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "cp-s5-a15-t") {
			t.Errorf("%s: not a cp decision", f)
		}
		w, err := windowjson.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Jobs) == 0 || w.Topology.NumNodes() != 65 {
			t.Errorf("%s: %d jobs, %d nodes", f, len(w.Jobs), w.Topology.NumNodes())
		}
	}
	cfg.Seed = 6
	res6, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	all, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if want6 := res6[0].Decisions - res6[0].Statuses["optimal"]; want6 == 0 || len(all) != len(files)+want6 {
		t.Errorf("after a seed-6 run: %d files, want %d of seed 5 and %d of seed 6", len(all), len(files), want6)
	}
}
