package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSolveVerboseStats: solve -v prints, on stderr, a line per solver
// family of the answer's "stats" object, every name of the JSON on it.
func TestSolveVerboseStats(t *testing.T) {
	for _, args := range [][]string{
		{"--solver", "csp", example},
		{"--heuristic", "sa", example},
		{"--solver", "brute", "--max-jobs", "3", example},
		{"--encoding", "cp", "--solver", "bnb", cpSmall},
	} {
		code, out, errs := optsched(t, "", append([]string{"solve", "-v", "-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var doc struct {
			Stats map[string]map[string]json.RawMessage `json:"stats"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Stats) == 0 {
			t.Fatalf("%v: no stats in %s", args, out)
		}
		lines := map[string]string{}
		for _, l := range strings.Split(errs, "\n") {
			if rest, ok := strings.CutPrefix(l, "stats "); ok {
				family, fields, _ := strings.Cut(rest, ": ")
				lines[family] = ", " + fields + ","
			}
		}
		if len(lines) != len(doc.Stats) {
			t.Errorf("%v: families %v on stderr, %d in the JSON", args, lines, len(doc.Stats))
		}
		for family, fields := range doc.Stats {
			for name, v := range fields {
				if !strings.Contains(lines[family], ", "+name+" ") {
					t.Errorf("%v: %s.%s (%s) missing on stderr: %q", args, family, name, v, lines[family])
				}
			}
		}
	}
}
