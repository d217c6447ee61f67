package rlscheduler

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

// The shipped traces and what the protocol needs to line them up.
var shipped = []struct {
	name, path string
	drop       int
}{
	{"lublin-1", "../../instances/traces/lublin_256.swf.gz", 0},
	{"hpc2n", "../../instances/traces/HPC2N-2002-2.1-cln.swf.gz", 5},
}

// TestPublishedColumns holds every published heuristic cell of both
// shipped traces, both modes, to two decimals.
func TestPublishedColumns(t *testing.T) {
	for _, tr := range shipped {
		w, err := Open(tr.path, LoadOptions{DropFirst: tr.drop})
		if err != nil {
			t.Fatal(err)
		}
		for _, bf := range []bool{false, true} {
			row := PaperRow(tr.name, bf)
			for _, p := range []string{"fcfs", "wfp3", "uni", "sjf", "f1"} {
				var sum float64
				for _, st := range Starts {
					s, err := Replay(context.Background(), Sequence{w, st, SequenceLength}, p, bf)
					if err != nil {
						t.Fatal(err)
					}
					if err := s.Verify(); err != nil {
						t.Fatalf("%s %s backfill=%v: %v", tr.name, p, bf, err)
					}
					sum += s.Mean()
				}
				got := math.Round(sum/float64(len(Starts))*100) / 100
				if want := row.Value[p]; got != want {
					t.Errorf("%s %s backfill=%v: %.2f, published %.2f", tr.name, p, bf, got, want)
				}
			}
		}
	}
}

// TestLoadRules checks the loading rules on a small log.
func TestLoadRules(t *testing.T) {
	log := `; MaxNodes: 4
; MaxProcs: 8
3 30 -1 -5 2 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1
1 10 -1 100 2 -1 -1 3 50 -1 1 1 1 -1 1 -1 -1 -1
2 20 -1 0 2 -1 -1 3 50 -1 1 1 1 -1 1 -1 -1 -1
4 40 -1 7 5 -1 -1 -1 -1 -1 1 1 1 -1 1 -1 -1 -1
`
	w, err := Load(strings.NewReader(log), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{Number: 1, Submit: 10, Run: 100, Request: 50, Procs: 3},
		{Number: 3, Submit: 30, Run: 10, Request: -5, Procs: 2}, // request -1 takes the run time before it is mended
		{Number: 4, Submit: 40, Run: 7, Request: 7, Procs: 5},
	}
	if len(w.Jobs) != len(want) || w.Dropped != 1 {
		t.Fatalf("jobs %+v, dropped %d", w.Jobs, w.Dropped)
	}
	for i := range want {
		if w.Jobs[i] != want[i] {
			t.Errorf("job %d: %+v, want %+v", i, w.Jobs[i], want[i])
		}
	}
	if w.PerNode() != 2 || w.NodesOf(w.Jobs[0]) != 2 || w.NodesOf(w.Jobs[2]) != 3 {
		t.Errorf("per node %v, nodes %d %d", w.PerNode(), w.NodesOf(w.Jobs[0]), w.NodesOf(w.Jobs[2]))
	}
	w, err = Load(strings.NewReader(log), LoadOptions{DropFirst: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != 1 || w.Jobs[0].Number != 4 || w.Skipped != 2 {
		t.Errorf("drop first 2: %+v", w.Jobs)
	}
}

// TestLoadErrors: bad input is an error naming the line and the field.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1 2 3\n", "swf line 1: want 18 fields, got 3"},
		{"; MaxNodes: x\n1 0 -1 5 1 -1 -1 1 5 -1 1 1 1 -1 1 -1 -1 -1\n", "swf line 1: header MaxNodes"},
		{"1 zz -1 5 1 -1 -1 1 5 -1 1 1 1 -1 1 -1 -1 -1\n", "swf line 1: field 2 (submit time)"},
		{"; MaxNodes: 4\n", "no jobs"},
		{"; MaxNodes: 4\n; MaxProcs: 2\n1 0 -1 5 1 -1 -1 1 5 -1 1 1 1 -1 1 -1 -1 -1\n", "MaxProcs 2 is below MaxNodes 4"},
	} {
		_, err := Load(strings.NewReader(tc.in), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	f.Add("; MaxNodes: 4\n1 10 -1 100 2 -1 -1 3 50 -1 1 1 1 -1 1 -1 -1 -1\n2 11 -1 5 4 -1 -1 3 50 -1 1 1 1 -1 1 -1 -1 -1\n", 0)
	f.Add("; MaxProcs: 7\n1 1.5 -1 1e3 2 -1 -1 3 -1 -1 1 1 1 -1 1 -1 -1 -1\n", 1)
	f.Fuzz(func(t *testing.T, in string, drop int) {
		w, err := Load(strings.NewReader(in), LoadOptions{DropFirst: drop % 4, MaxJobs: 64})
		if err != nil {
			return
		}
		if w.MaxNodes < 1 || w.MaxProcs < w.MaxNodes {
			t.Fatalf("cluster %d nodes %d procs", w.MaxNodes, w.MaxProcs)
		}
		for _, j := range w.Jobs {
			if j.Run < 1 {
				t.Fatalf("run time %d kept", j.Run)
			}
		}
		n := min(len(w.Jobs), 8)
		for _, p := range Published {
			for _, bf := range []bool{false, true} {
				s, err := Replay(context.Background(), Sequence{w, 0, n}, p, bf)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Verify(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// TestEASYAgainstSim: EASY on the protocol's cluster is no worse than
// FCFS without backfilling, and every schedule verifies.
func TestEASYSequences(t *testing.T) {
	w, err := Open(shipped[0].path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range Starts[:3] {
		seq := Sequence{w, st, SequenceLength}
		s, err := Simulate(context.Background(), seq, EASY{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(); err != nil {
			t.Fatal(err)
		}
		f, _ := Replay(context.Background(), seq, "fcfs", false)
		t.Logf("start %d: easy %.2f fcfs %.2f", st, s.Mean(), f.Mean())
		if s.Mean() > f.Mean() {
			t.Errorf("start %d: EASY %.2f above FCFS %.2f", st, s.Mean(), f.Mean())
		}
	}
}

// TestEASYExtraNodes: a job that ends after the head's reservation starts
// on the extra nodes, a second one does not; their backfilling starts
// neither.
func TestEASYExtraNodes(t *testing.T) {
	log := `; MaxNodes: 4
1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 1 -1 -1 -1
2 1 -1 50 3 -1 -1 3 50 -1 1 1 1 -1 1 -1 -1 -1
3 2 -1 500 1 -1 -1 1 500 -1 1 1 1 -1 1 -1 -1 -1
4 3 -1 500 1 -1 -1 1 500 -1 1 1 1 -1 1 -1 -1 -1
`
	w, err := Load(strings.NewReader(log), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seq := Sequence{w, 0, 4}
	s, err := Simulate(context.Background(), seq, EASY{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 100, 2, 150}; !slices.Equal(s.Starts, want) {
		t.Errorf("EASY starts %v, want %v", s.Starts, want)
	}
	r, err := Replay(context.Background(), seq, "fcfs", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 100, 100, 150}; !slices.Equal(r.Starts, want) {
		t.Errorf("their backfilling starts %v, want %v", r.Starts, want)
	}
}
