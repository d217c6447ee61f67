package cnf

import (
	"math/rand/v2"
	"testing"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
)

type giniSink struct{ g *gini.Gini }

func (s giniSink) Add(c []Lit) {
	for _, l := range c {
		s.g.Add(z.Dimacs2Lit(int(l)))
	}
	s.g.Add(0)
}

// TestAtMostBDD checks the reduced BDD of Σ w·l ≤ k against the sum on
// every assignment of up to 7 inputs: with the root asserted, an
// assignment is satisfiable exactly when its weighted sum is at most k.
func TestAtMostBDD(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 1 + rng.IntN(7)
		g := gini.New()
		e := &Encoder{S: giniSink{g}}
		e.t = e.newVar()
		e.S.Add([]Lit{e.t})
		var terms []term
		var ws []int64
		for range n {
			w := 1 + rng.Int64N(6)
			terms = append(terms, term{w, e.newVar()})
			ws = append(ws, w)
		}
		lits := make([]Lit, n)
		for i := range terms {
			lits[i] = terms[i].l
		}
		k := rng.Int64N(20) - 2
		root := e.atMost(terms, k)
		for mask := range 1 << n {
			var sum int64
			var assume []z.Lit
			for i := range n {
				if mask>>i&1 == 1 {
					sum += ws[i]
					assume = append(assume, z.Dimacs2Lit(int(lits[i])))
				} else {
					assume = append(assume, z.Dimacs2Lit(int(-lits[i])))
				}
			}
			assume = append(assume, z.Dimacs2Lit(int(root)))
			g.Assume(assume...)
			got := g.Solve() == 1
			if got != (sum <= k) {
				t.Fatalf("weights %v, k %d, mask %b (sum %d): satisfiable %v", ws, k, mask, sum, got)
			}
		}
	}
}
