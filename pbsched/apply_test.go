//go:build unix

package pbsched

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQrunTimeoutBoundsItsChildren: a qrun that hangs, with a child
// holding its output pipe, is killed with its children at the timeout and
// Apply goes on with the next start.
func TestQrunTimeoutBoundsItsChildren(t *testing.T) {
	dir := t.TempDir()
	qrun := filepath.Join(dir, "qrun")
	script := "#!/bin/sh\n(sleep 120; echo late) &\nsleep 120\n"
	if err := os.WriteFile(qrun, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Plan{Starts: []*Start{{Job: "1.s", Chunks: []VChunk{{Vnode: "a"}}}, {Job: "2.s", Chunks: []VChunk{{Vnode: "b"}}}}}
	start := time.Now()
	o, err := Apply(context.Background(), p, Qrun{Path: qrun, Timeout: 300 * time.Millisecond, WaitDelay: 500 * time.Millisecond})
	// The limit under test: 2 × (timeout + wait delay), generously.
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("Apply took %v", el)
	}
	if err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("error %v", err)
	}
	for _, s := range o.Starts {
		if !s.Applied || s.ExitCode == 0 || !strings.Contains(s.Error, "did not finish") {
			t.Errorf("start %+v", s)
		}
	}
}

// fakeRunner records the starts it is asked to run and fails some.
type fakeRunner struct {
	ran  []string
	fail map[string]bool
}

func (f *fakeRunner) Run(_ context.Context, execVnode, job string) (int, string) {
	f.ran = append(f.ran, job+" "+execVnode)
	if f.fail[job] {
		return 2, "qrun: Request invalid for state of job " + job
	}
	return 0, ""
}

// TestApplyThroughRunner: every start goes to the Runner in order, a
// failure does not stop the others, and an ended context leaves the rest
// unapplied.
func TestApplyThroughRunner(t *testing.T) {
	p := &Plan{Starts: []*Start{{Job: "1.s", Chunks: []VChunk{{Vnode: "a"}}}, {Job: "2.s", Chunks: []VChunk{{Vnode: "b"}}}, {Job: "3.s", Chunks: []VChunk{{Vnode: "c"}}}}}
	r := &fakeRunner{fail: map[string]bool{"2.s": true}}
	o, err := Apply(context.Background(), p, r)
	if len(r.ran) != 3 || r.ran[1] != "2.s (b)" || err == nil || !strings.Contains(err.Error(), "qrun failed for 1 of 3 jobs: 2.s (exit 2") {
		t.Errorf("ran %q, error %v", r.ran, err)
	}
	if o.Starts[1].ExitCode != 2 || o.Starts[2].ExitCode != 0 || !o.Starts[2].Applied {
		t.Errorf("outcome %+v", o.Starts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := &Plan{Starts: []*Start{{Job: "1.s", Chunks: []VChunk{{Vnode: "a"}}}}}
	r = &fakeRunner{}
	if o, err := Apply(ctx, q, r); err == nil || len(r.ran) != 0 || o.Starts[0].Applied || !strings.Contains(err.Error(), "not run") {
		t.Errorf("cancelled: ran %q, error %v", r.ran, err)
	}
}
