package dcas_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/encode/dcas"
	"github.com/optsched/optsched/model"
)

func uneven(t *testing.T) *model.Topology {
	t.Helper()
	top, err := model.BuildTopology([]model.SwitchSpec{
		{Name: "l0", Nodes: []string{"a0", "a1", "a2"}},
		{Name: "l1", Nodes: []string{"b0", "b1", "b2", "b3"}},
		{Name: "l2", Nodes: []string{"c0", "c1"}},
		{Name: "s2", Switches: []string{"l2"}},
		{Name: "s1", Switches: []string{"l1", "s2"}},
		{Name: "top", Switches: []string{"l0", "s1"}},
		{Name: "other", Nodes: []string{"d0", "d1", "d2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return top
}

// TestHopsMatchesPairwise: the count tree's hop count of a node set, and so
// its price, equals the all-pairs definition, on a layout, a fat-tree and
// a forest of unequal depths.
func TestHopsMatchesPairwise(t *testing.T) {
	layout, _ := model.NewLayout(3, 2, 4)
	fat, _ := model.NewFatTree(4, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, top := range []*model.Topology{layout, fat, uneven(t)} {
		for k := 0; k < 200; k++ {
			idle := rng.Perm(top.NumNodes())[:1+rng.IntN(top.NumNodes())]
			slices.Sort(idle)
			w := &model.Window{Topology: top, Idle: idle, Cost: model.DefaultCostModel}
			tr, err := dcas.NewTree(context.Background(), w)
			if err != nil {
				t.Fatal(err)
			}
			set := idle[:1+rng.IntN(len(idle))]
			lc, err := tr.Counts(top, set)
			if err != nil {
				t.Fatal(err)
			}
			if lc.Len() != len(set) {
				t.Fatalf("counts hold %d nodes for %d", lc.Len(), len(set))
			}
			var want int64
			for i := range set {
				for j := i + 1; j < len(set); j++ {
					want += int64(top.Hops(set[i], set[j]))
				}
			}
			if got := tr.Hops(lc, nil); got != want {
				t.Fatalf("hops of %v: tree %d, pairwise %d", set, got, want)
			}
			buf := make([]int, tr.NumVertices())
			if got := tr.Hops(lc, buf); got != want || slices.ContainsFunc(buf, func(x int) bool { return x != 0 }) {
				t.Fatalf("Hops of %v with a scratch: %d (buffer %v), pairwise %d", set, got, buf, want)
			}
			for _, cm := range []model.CostModel{model.DefaultCostModel, {Kind: model.CostLanPaper, HopCost: 3}} {
				if got, want := cm.FromHops(len(set), tr.Hops(lc, buf)), cm.PairwiseCost(top, set); got != want {
					t.Fatalf("%v: price %d, pairwise %d", cm.Kind, got, want)
				}
			}
			allocs, err := tr.Decode([]int{0}, []dcas.LeafCounts{lc})
			if err != nil {
				t.Fatal(err)
			}
			if got := model.DefaultCostModel.Cost(top, allocs[0].Nodes); got != model.DefaultCostModel.Cost(top, set) {
				t.Fatalf("decoded set costs %d, the set %d", got, model.DefaultCostModel.Cost(top, set))
			}
		}
	}
}

func TestBuildAndDecodeErrors(t *testing.T) {
	top := uneven(t)
	w := &model.Window{Topology: top, Idle: []int{0, 1, 2, 3}, Cost: model.DefaultCostModel,
		Jobs: []model.Job{{ID: "a", Nodes: 3}, {ID: "b", Nodes: 2}}}
	if _, err := dcas.Build(context.Background(), w, []int{0, 1}); err == nil || !strings.Contains(err.Error(), "need 5 nodes and 4 are idle") {
		t.Fatalf("over-full window: %v", err)
	}
	if _, err := dcas.Build(context.Background(), w, []int{2}); err == nil || !strings.Contains(err.Error(), "not a job") {
		t.Fatalf("bad job index: %v", err)
	}
	e, err := dcas.Build(context.Background(), w, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Decode([]float64{1}); err == nil {
		t.Fatal("short solution vector decoded")
	}
	tr := e.Tree
	leaf := -1
	for v := range tr.Cap {
		if tr.IsLeaf(v) {
			leaf = v
			break
		}
	}
	if _, err := tr.Decode([]int{0}, []dcas.LeafCounts{{Vertex: []int{leaf}, Count: []int{tr.Cap[leaf] + 1}}}); err == nil {
		t.Fatal("a leaf over its capacity decoded")
	}
	if _, err := tr.Decode([]int{0}, []dcas.LeafCounts{{Vertex: []int{0}, Count: []int{1}}}); err == nil {
		t.Fatal("a count on the root decoded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := dcas.Build(ctx, w, []int{0}); err == nil {
		t.Fatal("Build ignored its cancelled context")
	}
}
