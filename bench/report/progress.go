package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// A Bar is a progress bar for long runs: a single line on a terminal,
// rewritten in place at most ten times a second, shown only once the run
// has lasted a second (short runs stay silent). Give it a writer only when
// that writer is a terminal; a nil *Bar, or one with a nil writer, is
// silent, so callers need no checks. Safe for concurrent use.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	total   int
	done    int
	start   time.Time
	last    time.Time
	shown   bool
	note    string
	delay   time.Duration
	refresh time.Duration
	now     func() time.Time
}

// NewBar returns a bar of total steps labelled label, writing to w (nil
// for a silent bar).
func NewBar(w io.Writer, label string, total int) *Bar {
	return &Bar{w: w, label: label, total: total, start: time.Now(), delay: time.Second,
		refresh: 100 * time.Millisecond, now: time.Now}
}

// Add records n more steps done.
func (b *Bar) Add(n int) {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	t := b.now()
	if t.Sub(b.start) < b.delay || (t.Sub(b.last) < b.refresh && b.done < b.total) {
		return
	}
	b.last, b.shown = t, true
	fmt.Fprintf(b.w, "\r%s", b.line(t))
}

// Note sets a short text shown after the bar (a running figure such as a
// moving-average reward); it appears with the next refresh.
func (b *Bar) Note(s string) {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	b.note = s
	b.mu.Unlock()
}

// Done clears the bar's line, if it was shown.
func (b *Bar) Done() {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", 78+len(b.note)))
		b.shown = false
	}
}

// line renders the bar: label, 30-cell bar, count, elapsed and ETA.
func (b *Bar) line(t time.Time) string {
	frac := 1.0
	if b.total > 0 {
		frac = min(1, float64(b.done)/float64(b.total))
	}
	cells := int(frac * 30)
	el := t.Sub(b.start)
	eta := "?"
	if b.done > 0 && b.total > 0 {
		eta = (time.Duration(float64(el)/frac) - el).Round(time.Second).String()
	}
	line := fmt.Sprintf("%s [%s%s] %d/%d %s, eta %s", b.label, strings.Repeat("#", cells),
		strings.Repeat(".", 30-cells), b.done, b.total, el.Round(time.Second), eta)
	if b.note != "" {
		line += ", " + b.note
	}
	return line
}
