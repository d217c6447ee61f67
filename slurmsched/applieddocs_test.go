package slurmsched

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/sched/schedtest"
)

var updateAppliedDocs = flag.Bool("update-applied-docs", false, "rewrite testdata/applied-docs.golden")

// TestAppliedDocs holds the whole text of a plan's documents (the JSON
// of -o json and json-line, the text, the summary) with what Apply did:
// failures, a release that fails, a context ended before anything ran,
// and a dry run (the golden file was written when each start's status
// was a field of the plan's Start).
func TestAppliedDocs(t *testing.T) {
	mk := func() *Plan {
		p := fourStarts()
		for i, s := range p.Starts {
			s.Path, s.CPUsPerNode, s.MemPerNode = PathWhole, 32, 128000
			if i == 1 {
				s.Path, s.CPUsPerNode, s.MemPerNode = PathShared, 4, 8000
			}
		}
		obj := int64(7)
		p.Deferred = []Reason{{"5", "needs 4 idle nodes, 1 idle"}}
		p.Dropped = []Reason{{"6", "node n09 is no longer idle"}}
		p.Solver, p.Objective = "csp", &obj
		p.Notes = []string{"a note"}
		p.Digest = "0123456789abcdef0123456789abcdef"
		return p
	}
	fake := func() *fakeRunner {
		return &fakeRunner{placed: map[string]string{}, k: map[string]int{}, fail: map[string]bool{"2": true}, misread: map[string]bool{"3": true}}
	}
	ended, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("SIGTERM"))
	var b strings.Builder
	for _, c := range []struct {
		name string
		ctx  context.Context
		r    Runner
	}{
		{"failures", context.Background(), fake()},
		{"release fails", context.Background(), releaseFails{fake()}},
		{"context ended", ended, fake()},
		{"dry run", context.Background(), nil},
	} {
		p := mk()
		fmt.Fprintf(&b, "== %s\n", c.name)
		var o *Outcome
		applied := c.r != nil
		if applied {
			o, _ = Apply(c.ctx, p, c.r)
		}
		for _, compact := range []bool{false, true} {
			if err := p.WriteJSON(&b, compact, o); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.WriteText(&b, applied, o); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "summary: %s\n", p.Summary(o))
	}
	b.WriteString("== empty plan\n")
	if err := (&Plan{}).WriteJSON(&b, true, nil); err != nil {
		t.Fatal(err)
	}
	schedtest.Golden(t, filepath.Join("testdata", "applied-docs.golden"), b.String(), *updateAppliedDocs)
}
