package heuristics

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/model"
)

// TestBestFitMultiMoves: on 16 vnodes in quads of pairs, a 2-vnode job
// solved onto a pair of an empty quad moves to the free pair of a quad
// that is half used (same CH cost), which leaves the empty quad whole; a
// 4-vnode job on a whole quad keeps a whole quad; a single-vnode start's
// vnode is never taken.
func TestBestFitMultiMoves(t *testing.T) {
	topo, err := model.NewLayout(4, 2, 2) // quads (pods) of pairs (leaves)
	if err != nil {
		t.Fatal(err)
	}
	// Busy: 4, 5 (quad 1 keeps the pair 6, 7), 8..11 (quad 2).
	idle := []int{0, 1, 2, 3, 6, 7, 12, 13, 14, 15}
	w := &model.Window{Topology: topo, Idle: idle, Cost: model.DefaultCostModel}
	w.Jobs = []model.Job{{ID: "two", Nodes: 2}, {ID: "four", Nodes: 4}, {ID: "one", Nodes: 1}}
	allocs := []model.Allocation{{Job: 0, Nodes: []int{0, 1}}, {Job: 1, Nodes: []int{12, 13, 14, 15}}, {Job: 2, Nodes: []int{2}}}
	before := make([]int64, len(allocs))
	for i, a := range allocs {
		before[i] = w.Cost.Cost(topo, a.Nodes)
	}
	BestFitMulti(w, allocs)
	if !slices.Equal(allocs[0].Nodes, []int{6, 7}) {
		t.Errorf("the 2-vnode job on %v, want the free pair 6, 7 of the half-used quad", allocs[0].Nodes)
	}
	if got := allocs[1].Nodes; !slices.Equal(got, []int{12, 13, 14, 15}) {
		t.Errorf("the 4-vnode job on %v, want the empty quad 12–15 (quad 0 has a single-vnode start)", got)
	}
	if !slices.Equal(allocs[2].Nodes, []int{2}) {
		t.Errorf("the single-vnode start moved to %v", allocs[2].Nodes)
	}
	for i, a := range allocs {
		if c := w.Cost.Cost(topo, a.Nodes); c != before[i] {
			t.Errorf("job %d: cost %d, was %d", i, c, before[i])
		}
	}
}

// TestBestFitMultiKeepsCosts: on random layouts, idle sets and disjoint
// allocations, BestFitMulti leaves every job's CH cost, size and
// single-vnode vnodes as they were, and the allocations disjoint and on
// idle vnodes; it moves something on some of them.
func TestBestFitMultiKeepsCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 34))
	moved := 0
	for iter := range 2000 {
		topo, err := model.NewLayout(1+rng.IntN(4), 1+rng.IntN(4), 1+rng.IntN(5))
		if err != nil {
			t.Fatal(err)
		}
		n := topo.NumNodes()
		perm := rng.Perm(n)
		idle := slices.Clone(perm[:rng.IntN(n+1)])
		slices.Sort(idle)
		w := &model.Window{Topology: topo, Idle: idle, Cost: model.DefaultCostModel}
		if rng.IntN(2) == 0 {
			w.Cost.Kind = model.CostLanPaper
		}
		// Half the windows scatter their jobs at random; the others place
		// each on a run of consecutive idle vnodes, as a solve that packs
		// them would (and where other runs of the same cost exist).
		pool := slices.Clone(idle)
		scatter := rng.IntN(2) == 0
		if scatter {
			rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		}
		var allocs []model.Allocation
		for len(pool) > 0 && rng.IntN(5) > 0 {
			k := 1 + rng.IntN(min(len(pool), 6))
			at := 0
			if !scatter {
				at = rng.IntN(len(pool) - k + 1)
			}
			w.Jobs = append(w.Jobs, model.Job{ID: "j", Nodes: k})
			allocs = append(allocs, model.Allocation{Job: len(allocs), Nodes: slices.Clone(pool[at : at+k])})
			pool = slices.Delete(pool, at, at+k)
		}
		was := make([][]int, len(allocs))
		for i, a := range allocs {
			was[i] = slices.Clone(a.Nodes)
		}
		BestFitMulti(w, allocs)
		used := map[int]bool{}
		changed := false
		for i, a := range allocs {
			if len(a.Nodes) != len(was[i]) {
				t.Fatalf("iter %d: job %d has %d vnodes, had %d", iter, i, len(a.Nodes), len(was[i]))
			}
			if c, c0 := w.Cost.Cost(topo, a.Nodes), w.Cost.Cost(topo, was[i]); c != c0 {
				t.Fatalf("iter %d: job %d costs %d, cost %d", iter, i, c, c0)
			}
			if len(was[i]) == 1 && a.Nodes[0] != was[i][0] {
				t.Fatalf("iter %d: a single-vnode start moved", iter)
			}
			for _, x := range a.Nodes {
				if used[x] || !slices.Contains(idle, x) {
					t.Fatalf("iter %d: vnode %d used twice or not idle (%v)", iter, x, allocs)
				}
				used[x] = true
			}
			a2, w2 := slices.Clone(a.Nodes), slices.Clone(was[i])
			slices.Sort(a2)
			slices.Sort(w2)
			changed = changed || !slices.Equal(a2, w2)
		}
		if changed {
			moved++
		}
	}
	if moved < 40 {
		t.Errorf("only %d of 2000 random windows moved a job", moved)
	}
}
