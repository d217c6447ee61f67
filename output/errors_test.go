package output_test

import (
	"strings"
	"testing"

	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/output"
)

// TestParseErrorsInTheDocumentsWords: a result or schedule of the wrong
// JSON types is refused naming the field and the JSON type wanted, never
// a Go type or struct (issue 36: "Go struct field AllocationDoc"); a byte
// order mark is skipped.
func TestParseErrorsInTheDocumentsWords(t *testing.T) {
	w, err := windowjson.Load("../instances/example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ doc, want string }{
		{`{"status": "optimal", "allocations": [{"job": "a", "nodes": ["n3"], "cost": "x"}]}`, "allocations.cost: a string, want an integer"},
		{`{"status": 3}`, "status: a number, want a string"},
		{`{"allocations": {}}`, "allocations: an object, want an array"},
		{`{"objective": "1"}`, "objective: a string, want an integer"},
		{`{"status": "optimal",}`, "not JSON at byte"},
	} {
		for _, parse := range []func() error{
			func() error { _, _, err := output.Parse[int64](w, []byte(c.doc)); return err },
		} {
			err := parse()
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "Doc") {
				t.Errorf("%s: %v, want %q", c.doc, err, c.want)
			}
		}
	}
	if _, _, err := output.Parse[float64](w, []byte(`{"ch_weight": "x"}`)); err == nil || !strings.Contains(err.Error(), "ch_weight: a string, want a number") {
		t.Errorf("schedule: %v", err)
	}
	if _, _, err := output.Parse[int64](w, []byte("\xef\xbb\xbf{\"status\": \"unknown\"}")); err != nil {
		t.Errorf("byte order mark: %v", err)
	}
}
