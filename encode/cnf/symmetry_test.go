package cnf

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
)

// refSymmetry is symmetry as first written: for every pair of nodes of a
// class and every job, the job's option on each node by a scan of its
// options.
func (e *Encoder) refSymmetry() {
	m := e.M
	byClass := map[int][]int{}
	leaf := map[[2]int]int{}
	for ni, nd := range m.Nodes {
		c := nd.Class
		if m.CHKappa > 0 {
			sw := -1
			if anc := m.Window.Topology.Ancestors(nd.ID); len(anc) > 0 {
				sw = int(anc[0])
			}
			k, ok := leaf[[2]int{c, sw}]
			if !ok {
				k = len(leaf)
				leaf[[2]int{c, sw}] = k
			}
			c = k
		}
		byClass[c] = append(byClass[c], ni)
	}
	optOn := func(i, ni int) int {
		for o, opt := range m.Jobs[i].Options {
			if opt.Node == ni {
				return o
			}
		}
		return -1
	}
	for _, c := range slices.Sorted(maps.Keys(byClass)) {
		nodes := byClass[c]
		for k := 1; k < len(nodes); k++ {
			prev, cur := nodes[k-1], nodes[k]
			var prefix []Lit
			for i := range m.Jobs {
				if o := optOn(i, prev); o >= 0 {
					prefix = append(prefix, e.x[i][o][0])
				}
				if o := optOn(i, cur); o >= 0 {
					e.add(append([]Lit{-e.x[i][o][0]}, prefix...)...)
				}
			}
		}
	}
}

// TestSymmetryMatchesReference: Base writes exactly the clauses it wrote
// when symmetry scanned every job's options for every pair of nodes, on
// random windows with and without the CH term (which splits the classes
// by leaf switch).
func TestSymmetryMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	clauses := 0
	for i := range 300 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(8), 1+rng.IntN(8), 10)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cp.Build(w, 10)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if err := m.SetCHWeight(0.5); err != nil {
				t.Fatal(err)
			}
		}
		lo, hi := make([]int, len(m.Jobs)), make([]int, len(m.Jobs))
		for j := range m.Jobs {
			lo[j], hi[j] = m.Jobs[j].EST, m.Jobs[j].EST+6
		}
		var got, want Formula
		e, err := New(m, &got, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Base(); err != nil {
			t.Fatal(err)
		}
		r, _ := New(m, &want, lo, hi)
		if err := r.base(); err != nil {
			t.Fatal(err)
		}
		r.refSymmetry()
		var a, b bytes.Buffer
		if err := got.WriteDIMACS(&a); err != nil {
			t.Fatal(err)
		}
		if err := want.WriteDIMACS(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("window %d: Base wrote a different CNF:\n%s\nwant\n%s", i, a.String(), b.String())
		}
		clauses += got.NumClauses()
	}
	t.Logf("%d clauses compared", clauses)
}
