package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestBarNote: a note set on the bar is shown after the bar on the next
// refresh (optsched train nsa shows its moving-average reward so), and a
// nil bar ignores notes.
func TestBarNote(t *testing.T) {
	var out bytes.Buffer
	b := NewBar(&out, "train nsa", 4)
	b.delay, b.refresh = 0, 0
	b.Note("reward -4.9500 (moving)")
	b.Add(1)
	if s := out.String(); !strings.Contains(s, "train nsa [") || !strings.Contains(s, "1/4") || !strings.HasSuffix(s, ", reward -4.9500 (moving)") {
		t.Errorf("bar line %q", s)
	}
	b.Note("reward -4.9000 (moving)")
	b.now = func() time.Time { return time.Now().Add(time.Second) }
	b.Add(1)
	last := out.String()[strings.LastIndex(out.String(), "\r")+1:]
	if !strings.Contains(last, "2/4") || !strings.HasSuffix(last, ", reward -4.9000 (moving)") {
		t.Errorf("bar line after a second note %q", last)
	}
	var nb *Bar
	nb.Note("ignored")
	nb.Add(1)
}

// TestBar checks that a bar stays silent for short runs and renders, then
// clears, its line for long ones.
func TestBar(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	b := NewBar(&buf, "scas", 4)
	b.start, b.now = clock, func() time.Time { return clock }
	b.Add(1)
	if buf.Len() != 0 {
		t.Fatalf("bar shown before a second: %q", buf.String())
	}
	clock = clock.Add(2 * time.Second)
	b.Add(1)
	if got := buf.String(); !strings.Contains(got, "scas [###############...............] 2/4 2s, eta 2s") {
		t.Fatalf("bar %q", got)
	}
	b.Done()
	if !strings.HasSuffix(buf.String(), "\r") {
		t.Fatalf("bar not cleared: %q", buf.String())
	}
	var nilBar *Bar
	nilBar.Add(1) // silent, no panic
	nilBar.Done()
	NewBar(nil, "x", 1).Add(1)
}
