package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCheckNodeAsBefore: checkNode, which sums the uses active at each
// start once over the sorted starts, reports what it reported when it
// summed them in maps for every pair of uses (checkNodeBefore), message
// for message, on random uses of one node: few and crowded, or up to 60.
func TestCheckNodeAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	w := &Window{Topology: mustLayout(t)}
	resNames := []string{"ncpus", "ngpus", "mem"}
	for i := range 6000 {
		// Half the cases are small and crowded (ties of every kind), half
		// long lists over a longer span, as on a pseudo-node.
		n, span := 1+rng.IntN(8), 6
		if i%2 == 1 {
			n, span = 1+rng.IntN(60), 40
		}
		if rng.IntN(2) == 0 {
			w.Resources = []Resources{{"ncpus": int64(rng.IntN(20 * (1 + n/4))), "ngpus": int64(rng.IntN(3 * (1 + n/4)))}, nil}
		} else {
			w.Resources = nil
		}
		var uses []nodeUse
		for k := range n {
			u := nodeUse{from: int64(rng.IntN(span)), excl: rng.IntN(4) == 0, id: fmt.Sprint(k), running: rng.IntN(5) == 0,
				units: rng.IntN(4) > 0, alloc: rng.IntN(3) > 0}
			u.to = u.from + int64(1+rng.IntN(5))
			if !u.alloc && rng.IntN(2) == 0 {
				u.from = math.MinInt64 // a running job's use
			}
			if rng.IntN(4) > 0 {
				u.use = Resources{}
				for _, r := range resNames {
					if rng.IntN(2) == 0 {
						u.use[r] = int64(rng.IntN(10))
					}
				}
			}
			uses = append(uses, u)
		}
		var got, want []string
		checkNode(w, 0, uses, func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) })
		checkNodeBefore(w, 0, uses, func(f string, a ...any) { want = append(want, fmt.Sprintf(f, a...)) })
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: %q, before %q", i, got, want)
		}
	}
}

func mustLayout(t *testing.T) *Topology {
	topo, err := NewLayout(1, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// checkNodeBefore is checkNode as it was before 2026-11-26's archive-scale
// work.
func checkNodeBefore(w *Window, k int, uses []nodeUse, add func(string, ...any)) {
	hasUnits := false
	for _, u := range uses {
		hasUnits = hasUnits || u.units
	}
	if !hasUnits {
		return
	}
	name := w.Topology.Name(k)
	var capacity Resources
	if w.Resources != nil {
		capacity = w.Resources[k]
	}
	overflow := map[string]bool{}
	for si, s := range uses {
		if !s.alloc {
			continue
		}
		t := s.from
		var active []int
		unitsActive := false
		for oi, o := range uses {
			if o.from <= t && t < o.to {
				active = append(active, oi)
				unitsActive = unitsActive || o.units
			}
		}
		if !unitsActive {
			continue
		}
		for _, oi := range active {
			o := uses[oi]
			if oi == si || !(s.excl || o.excl) || !(s.units || o.units) {
				continue
			}
			if o.from == t && o.alloc && oi > si {
				continue
			}
			excl := s.who()
			if !s.excl {
				excl = o.who()
			}
			add("node %s: %s and %s share the node at %d, but %s is exclusive", name, o.who(), s.who(), t, excl)
		}
		total := Resources{}
		for _, oi := range active {
			for res, v := range uses[oi].use {
				total[res] += v
			}
		}
		for _, res := range sortedKeys(total) {
			if total[res] > capacity[res] && !overflow[res] {
				overflow[res] = true
				add("node %s: at %d the jobs on it use %s=%d, above its capacity %d", name, t, res, total[res], capacity[res])
			}
		}
	}
}
