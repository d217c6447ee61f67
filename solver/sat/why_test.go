package sat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/solver"
)

// TestWhyNamesTheSearchesReason: an answer without a schedule (no list
// schedule asked for) says why, from the searches' counters: the memory
// bound, the time left, an interrupted encoding, or none found.
func TestWhyNamesTheSearchesReason(t *testing.T) {
	for _, c := range []struct {
		name   string
		search solver.SATSearchStats
		prover solver.SATSearchStats
		want   []string
	}{
		{"memory", solver.SATSearchStats{EncodingSkipped: 1, EncodingSkippedVars: maxEncodeVars + 7, EncodingSkippedLeftMS: 150}, solver.SATSearchStats{},
			[]string{"600007 variables", "memory bound of 600000"}},
		{"time", solver.SATSearchStats{EncodingSkipped: 1, EncodingSkippedVars: 94_988, EncodingSkippedLeftMS: 150.7}, solver.SATSearchStats{},
			[]string{"94988 variables", "about 190 ms", "the 150 ms its phase had left", "--time-limit"}},
		{"prover's larger", solver.SATSearchStats{EncodingSkipped: 1, EncodingSkippedVars: 10, EncodingSkippedLeftMS: 1}, solver.SATSearchStats{EncodingSkipped: 1, EncodingSkippedVars: 20_000, EncodingSkippedLeftMS: 3},
			[]string{"20000 variables", "the 3 ms"}},
		{"interrupted", solver.SATSearchStats{EncodingInterrupted: 1}, solver.SATSearchStats{}, []string{"ended while its SAT encoding was being written"}},
		{"none", solver.SATSearchStats{}, solver.SATSearchStats{}, []string{"found no schedule within the time limit"}},
	} {
		sc := &scheduling{st: &solver.SATStats{Search: c.search, Prover: c.prover}}
		got := sc.why()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: why = %q, want it to contain %q", c.name, got, w)
			}
		}
	}
}

// TestNoFallbackUnknownSaysWhy: sat without list schedules at a short
// limit answers unknown only with a reason, never the bare time limit.
func TestNoFallbackUnknownSaysWhy(t *testing.T) {
	w, err := instances.Eurora(instances.EuroraConfig{Seed: 3, Jobs: 30, Load: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 200 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		res, err := Solver{}.Solve(ctx, &solver.ScheduleProblem{Window: w, Granularity: 60})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Status == solver.Unknown && res.Why == "" {
			t.Errorf("limit %v: unknown without a reason", limit)
		}
	}
}
