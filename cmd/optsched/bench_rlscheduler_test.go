package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchRLScheduler runs the benchmark on short sequences of the
// shipped Lublin-1 log, reads its JSON, and refuses bad flags.
func TestBenchRLScheduler(t *testing.T) {
	const trace = "../../instances/traces/lublin_256.swf.gz"
	js := filepath.Join(t.TempDir(), "rl.json")
	args := []string{"bench", "rlscheduler", "--trace", trace, "--sequences", "100,200", "--length", "64"}
	// Other sequences than the published ones print no published row
	// unless --paper names it.
	if code, out, errs := optsched(t, "", append(args, "--policies", "f1", "--bound=false")...); code != 0 || !strings.Contains(out, "no published row") {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	args = append(args, "--paper", "lublin-1")
	code, out, errs := optsched(t, "", append(args, "--backfill", "--json", js, "--bound-limit", "2s")...)
	if code != 0 || !strings.Contains(out, "published row: lublin-1") || !strings.Contains(out, "with backfilling") || !strings.Contains(out, "easy") || !strings.Contains(out, "gap to bound") {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	var res struct {
		Backfill bool `json:"backfill"`
		Nodes    int  `json:"nodes"`
		Policies []struct {
			Name        string    `json:"name"`
			Mean        float64   `json:"mean_bsld"`
			PerSequence []float64 `json:"per_sequence"`
			Published   *float64  `json:"published"`
			Gap         *float64  `json:"gap_to_bound"`
		} `json:"policies"`
		Bound struct {
			Mean    float64 `json:"mean_bsld"`
			Offline bool    `json:"offline"`
		} `json:"bound"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("json: %v", err)
	}
	if !res.Backfill || res.Nodes != 256 || len(res.Policies) != 7 || res.Policies[6].Name != "cp" {
		t.Fatalf("json: %+v", res)
	}
	for _, p := range res.Policies {
		if len(p.PerSequence) != 2 || p.Mean < res.Bound.Mean || p.Gap == nil || (p.Published == nil) != (p.Name == "easy" || p.Name == "cp") {
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	if !res.Bound.Offline || res.Bound.Mean < 1 {
		t.Errorf("bound %+v", res.Bound)
	}
	for _, bad := range [][]string{
		{"--time-limit", "0s"}, {"--cp-jobs", "0"}, {"--cp-objective", "area"}, {"--bound-limit", "-1s"},
		{"--policies", "rl"}, {"--paper", "sdsc"}, {"--length", "0"}, {"-o", "csv"}, {"--sequences", "9990"},
	} {
		code, _, errs := optsched(t, "", append(args, bad...)...)
		want := exitUsage
		if bad[0] == "--sequences" {
			want = exitError
		}
		if code != want || !strings.Contains(errs, strings.TrimLeft(bad[0], "-")) && !strings.Contains(errs, "sequence") {
			t.Errorf("%v: exit %d: %s", bad, code, errs)
		}
	}
}
