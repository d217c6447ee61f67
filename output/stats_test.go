package output_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/optsched/optsched/output"
	"github.com/optsched/optsched/solver"
)

// TestWriteStats: a line per family that took part, every field under its
// JSON name (nested ones prefixed, a pointer nil as null), and the same
// names in the document's JSON.
func TestWriteStats(t *testing.T) {
	iters := int64(12)
	st := solver.Stats{
		LP:  &solver.LPStats{Formulation: "paper", Rows: 3, Status: 1, Iterations: &iters, SolveMS: 1.5},
		SAT: &solver.SATStats{Search: solver.SATSearchStats{SATCalls: 4}, Prover: solver.SATSearchStats{Vars: 9}},
	}
	var b strings.Builder
	output.WriteStats(&b, &st)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "stats lp: ") || !strings.HasPrefix(lines[1], "stats sat: ") {
		t.Fatalf("lines:\n%s", b.String())
	}
	for _, want := range []string{`formulation "paper"`, "rows 3", "lp_status 1", "iterations 12", "nodes null", "lp_integral null", "lp_ms 1.5"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("lp line lacks %q: %s", want, lines[0])
		}
	}
	for _, want := range []string{"search.sat_calls 4", "prover.vars 9", "prover.sat_calls 0", "incumbent_from_sat false"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("sat line lacks %q: %s", want, lines[1])
		}
	}
	data, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc) != 2 || len(doc["lp"]) != strings.Count(lines[0], ", ")+1 {
		t.Errorf("JSON %s against the line %s", data, lines[0])
	}
	for name := range doc["lp"] {
		if !strings.Contains(lines[0], " "+name+" ") {
			t.Errorf("JSON name %q not on the line: %s", name, lines[0])
		}
	}
	b.Reset()
	output.WriteStats(&b, &solver.Stats{})
	if b.Len() != 0 {
		t.Errorf("no family: %q", b.String())
	}
}
