//go:build slurmitest

package itest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSchedBenchArray runs a benchmark sweep as a Slurm job array, the way
// docs/solvers.md tells a researcher to: `sbatch --array=0-3` runs
// `optsched bench scas --shard $SLURM_ARRAY_TASK_ID/4` as the job owner,
// each task placed and released by `optsched slurm plan --apply` (the
// cluster holds every job). Every task must end COMPLETED with exit 0,
// and `bench merge` of the four shards must give every window the same
// objectives, bounds and statuses as the same sweep run in one process.
func TestSchedBenchArray(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	// The job owner writes the shards and runs a copy of the binary:
	// the checkout may live where it cannot enter.
	dir, err := os.MkdirTemp("", "optsched-array-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "optsched")
	data, err := os.ReadFile(optschedBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sweep := []string{"bench", "scas", "--classes", "paper", "--windows", "8", "--solvers", "csp,seq", "--time-limit", "10s"}
	script := fmt.Sprintf(`exec %s %s --shard "$SLURM_ARRAY_TASK_ID/4" --json %s/shard-"$SLURM_ARRAY_TASK_ID".json`,
		bin, strings.Join(sweep, " "), dir)
	arr := submit(t, fmt.Sprintf("--array=0-3 -n1 -t 10 --wrap '%s'", script))

	tasks, js := cycleUntilArrayDone(t, arr, 4, 5*time.Minute)
	var files []string
	for _, id := range tasks {
		if j := js[id]; j.State != "COMPLETED" || j.ExitCode != 0 {
			t.Errorf("task %s ended %s, exit code %d (%s)", id, j.State, j.ExitCode, j.Reason)
		}
	}
	for i := range 4 {
		files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)))
	}
	if t.Failed() {
		t.FailNow()
	}

	merged := filepath.Join(t.TempDir(), "merged.json")
	if out, errs, rc := optsched(t, append([]string{"bench", "merge", "--json", merged}, files...)...); rc != 0 {
		t.Fatalf("bench merge: exit %d\n%s%s", rc, out, errs)
	}
	whole := filepath.Join(t.TempDir(), "whole.json")
	if out, errs, rc := optsched(t, append(sweep, "--json", whole)...); rc != 0 {
		t.Fatalf("the one-process sweep: exit %d\n%s%s", rc, out, errs)
	}
	m, w := windowAnswers(t, merged), windowAnswers(t, whole)
	if len(w) == 0 {
		t.Fatalf("the one-process sweep reported no samples (%s)", whole)
	}
	t.Logf("%d tasks; %d window answers, e.g. %s", len(tasks), len(w), w[0])
	if !reflect.DeepEqual(m, w) {
		t.Errorf("merged shards and the one-process run differ:\nmerged %v\nwhole  %v", m, w)
	}
}

// windowAnswers decodes a bench scas --json report by itself (not with
// optsched's reader) and returns its samples as sorted JSON lines, with
// every timing and shard field removed: what must not depend on how the
// sweep was split.
func windowAnswers(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Samples []map[string]json.RawMessage `json:"samples"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	lines := make([]string, 0, len(rep.Samples))
	for _, s := range rep.Samples {
		for k := range s {
			if k == "seconds" || strings.Contains(k, "ms") || strings.Contains(k, "time") || strings.Contains(k, "elapsed") || strings.Contains(k, "shard") {
				delete(s, k)
			}
		}
		b, err := json.Marshal(s) // map keys come out sorted
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	slices.Sort(lines)
	return lines
}
