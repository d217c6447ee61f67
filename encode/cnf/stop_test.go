package cnf

import (
	"errors"
	"testing"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
)

// TestStopHaltsEncoding: once Stop says true the encoder writes at most
// the rest of the 1,024-clause stride it is in, Base reports
// ErrInterrupted, and later constructions write nothing — even though
// Stop is polled per job only at the top of each job's loop.
func TestStopHaltsEncoding(t *testing.T) {
	w, err := instances.Eurora(instances.EuroraConfig{Seed: 3, Jobs: 40, Load: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cp.Build(w, 60)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := make([]int, len(m.Jobs)), make([]int, len(m.Jobs))
	for j := range m.Jobs {
		lo[j], hi[j] = m.Jobs[j].EST, m.Jobs[j].EST+400
	}
	var full Formula
	e, err := New(m, &full, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Base(); err != nil {
		t.Fatal(err)
	}
	if full.NumClauses() < 20_000 {
		t.Fatalf("the window's base encoding has %d clauses; the test needs a large one", full.NumClauses())
	}
	var part Formula
	e, err = New(m, &part, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	const after = 5000
	e.Stop = func() bool { return part.NumClauses() >= after }
	if err := e.Base(); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Base: %v, want ErrInterrupted", err)
	}
	if n := part.NumClauses(); n < after || n > after+1024 {
		t.Errorf("%d clauses written after Stop said true at %d", n, after)
	}
	n := part.NumClauses()
	if err := e.LeftJustified(); !errors.Is(err, ErrInterrupted) {
		t.Errorf("LeftJustified after a halt: %v", err)
	}
	if part.NumClauses() != n {
		t.Errorf("%d clauses written after the halt", part.NumClauses()-n)
	}
}
