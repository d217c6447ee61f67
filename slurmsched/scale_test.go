package slurmsched

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/optsched/optsched/slurmsched/slurmtest"
)

// scaleCycle is a cycle's work after the commands answered: parse,
// decide, check, and recheck on the same documents read again.
func scaleCycle(b testing.TB, squeue, sinfo []byte, topo string, limit time.Duration) *Plan {
	parse := func() *State {
		st := &State{Topology: topo, Now: 100000}
		var err error
		if st.Jobs, err = ParseJobs(squeue); err != nil {
			b.Fatal(err)
		}
		if st.Nodes, err = ParseNodes(sinfo); err != nil {
			b.Fatal(err)
		}
		return st
	}
	st := parse()
	sc := &Scope{Partitions: []string{"batch"}}
	p, err := Decide(context.Background(), st, sc, Options{TimeLimit: limit})
	if err != nil {
		b.Fatal(err)
	}
	if err := Check(st, sc, p); err != nil {
		b.Fatal(err)
	}
	Recheck(parse(), sc, p)
	if len(p.Dropped) > 0 {
		b.Fatalf("recheck on the same state dropped %d starts: %v", len(p.Dropped), p.Dropped[0])
	}
	return p
}

// TestScaleCycle: a 2,000-node cycle with 1,000 held jobs passes its
// own check and starts jobs of both kinds.
func TestScaleCycle(t *testing.T) {
	sq, si, topo := slurmtest.ScaleDocs("testdata", 2000, 0.5, 1)
	p := scaleCycle(t, sq, si, topo, time.Second)
	kinds := map[string]int{}
	for _, s := range p.Starts {
		kinds[s.Path]++
	}
	if kinds[PathWhole] == 0 || kinds[PathShared] == 0 {
		t.Errorf("starts by path: %v", kinds)
	}
}

// BenchmarkCycle: one cycle (parse, decide, check, recheck) from 100 to
// 10,000 nodes, with half as many held jobs, half of them whole-node.
func BenchmarkCycle(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		sq, si, topo := slurmtest.ScaleDocs("testdata", n, 0.5, 1)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				scaleCycle(b, sq, si, topo, 5*time.Second)
			}
		})
	}
}

// BenchmarkCheck: Check and Recheck of one decided plan (the adapter's
// view and sched's rules), at 1,000 and 10,000 nodes.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		sq, si, topo := slurmtest.ScaleDocs("testdata", n, 0.5, 1)
		st := &State{Topology: topo, Now: 100000}
		st.Jobs, _ = ParseJobs(sq)
		st.Nodes, _ = ParseNodes(si)
		sc := &Scope{Partitions: []string{"batch"}}
		p, err := Decide(context.Background(), st, sc, Options{TimeLimit: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				if err := Check(st, sc, p); err != nil {
					b.Fatal(err)
				}
				q := *p
				Recheck(st, sc, &q)
			}
		})
	}
}
