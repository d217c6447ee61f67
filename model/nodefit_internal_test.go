package model

import (
	"math/rand/v2"
	"testing"
)

// TestNodeUsesFitMatchesCheckNode: on random uses of one node,
// NodeUsesFit says the node fits exactly when checkNode, Check's own
// per-node rule, reports nothing.
func TestNodeUsesFitMatchesCheckNode(t *testing.T) {
	names := []string{"mem", "ncpus"}
	topo, err := BuildTopology([]SwitchSpec{{Name: "s", Nodes: []string{"n0"}}})
	if err != nil {
		t.Fatal(err)
	}
	w := &Window{Topology: topo, Resources: []Resources{{"ncpus": 8, "mem": 16}}}
	capacity := []int64{16, 8}
	r := rand.New(rand.NewPCG(5, 9))
	fits, trials := 0, 4000
	for range trials {
		var uses []nodeUse
		var vec []NodeUse
		for range 1 + r.IntN(4) {
			from := int64(r.IntN(4))
			if r.IntN(5) == 0 {
				from = -1 << 40
			}
			to := from + int64(r.IntN(4))
			u := nodeUse{from: from, to: to, excl: r.IntN(5) == 0, units: r.IntN(3) > 0, alloc: r.IntN(4) > 0}
			var v []int64
			if r.IntN(6) > 0 {
				u.use = Resources{}
				v = make([]int64, len(names))
				for i, k := range names {
					if r.IntN(4) > 0 {
						a := int64(r.IntN(10))
						u.use[k], v[i] = a, a
					}
				}
			}
			uses = append(uses, u)
			vec = append(vec, NodeUse{From: u.from, To: u.to, Use: v, Excl: u.excl, Units: u.units, Alloc: u.alloc})
		}
		var problems []string
		checkNode(w, 0, uses, func(string, ...any) { problems = append(problems, "x") })
		got := NodeUsesFit(vec, capacity)
		if got != (len(problems) == 0) {
			t.Fatalf("uses %+v: NodeUsesFit %v, checkNode %d problems", uses, got, len(problems))
		}
		if got {
			fits++
		}
	}
	if fits < trials/10 || fits > trials*9/10 {
		t.Errorf("%d of %d fit: the draws do not exercise both answers", fits, trials)
	}
}
