package heuristics

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/optsched/optsched/model"
)

// alignWindow: 16 nodes, pairs in quads (quads(t)); nodes 3 (pair 1 of
// quad 0) and 7 (pair 3 of quad 1) idle, every other node busy: nodes 2
// and 6, the idle nodes' pair partners, end at now+100 and now+10, the
// rest at now+1000.
func alignWindow(t *testing.T) *model.Window {
	const now = 5000
	w := &model.Window{Time: now, Topology: quads(t), Idle: []int{3, 7}, Cost: model.DefaultCostModel}
	w.Running = []model.RunningJob{{ID: "a", Nodes: []int{2}, End: now + 100}, {ID: "b", Nodes: []int{6}, End: now + 10},
		{ID: "rest", Nodes: []int{0, 1, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15}, End: now + 1000}}
	return w
}

// TestBestFitSinglesAlign: the counts do not separate nodes 3 and 7 (each
// alone in its pair and its quad); TieFirst takes 3, TieAlign the node
// whose pair partner ends nearest the job's own end: 7 for a 10 s job,
// 3 for a 100 s one.
func TestBestFitSinglesAlign(t *testing.T) {
	for _, c := range []struct {
		tie  FitTie
		wall int64
		want int
	}{{TieFirst, 10, 3}, {TieFirst, 100, 3}, {TieAlign, 10, 7}, {TieAlign, 100, 3}, {TieAlign, 15, 7}} {
		w := alignWindow(t)
		w.Jobs = []model.Job{{ID: "one", Nodes: 1, Walltime: c.wall}}
		allocs := []model.Allocation{{Job: 0, Nodes: []int{3}}}
		BestFitSinglesWith(w, allocs, c.tie)
		if allocs[0].Nodes[0] != c.want {
			t.Errorf("tie %d, walltime %d: node %d, want %d", c.tie, c.wall, allocs[0].Nodes[0], c.want)
		}
	}
}

// TestBestFitMultiAlign: two quads each with one free pair (0,1 and 4,5)
// and the same counts; quad 0's busy nodes end at now+10, quad 1's at
// now+500. A 2-node job of 500 s goes to quad 1 under TieAlign, to quad
// 0 (the first) under TieFirst; a 10 s job to quad 0 either way. Its
// cost stays a pair's.
func TestBestFitMultiAlign(t *testing.T) {
	for _, c := range []struct {
		tie  FitTie
		wall int64
		want []int
	}{{TieFirst, 500, []int{0, 1}}, {TieAlign, 500, []int{4, 5}}, {TieAlign, 10, []int{0, 1}}} {
		const now = 100
		w := &model.Window{Time: now, Topology: quads(t), Idle: []int{0, 1, 4, 5}, Cost: model.DefaultCostModel}
		w.Running = []model.RunningJob{{ID: "q0", Nodes: []int{2, 3}, End: now + 10}, {ID: "q1", Nodes: []int{6, 7}, End: now + 500},
			{ID: "rest", Nodes: []int{8, 9, 10, 11, 12, 13, 14, 15}, End: now + 50}}
		w.Jobs = []model.Job{{ID: "two", Nodes: 2, Walltime: c.wall}}
		allocs := []model.Allocation{{Job: 0, Nodes: []int{4, 5}}}
		if c.want[0] == 4 {
			allocs[0].Nodes = []int{0, 1}
		}
		was := w.Cost.Cost(w.Topology, allocs[0].Nodes)
		BestFitMultiWith(w, allocs, c.tie)
		if !slices.Equal(allocs[0].Nodes, c.want) || w.Cost.Cost(w.Topology, allocs[0].Nodes) != was {
			t.Errorf("tie %d, walltime %d: nodes %v, want %v (cost %d, was %d)", c.tie, c.wall, allocs[0].Nodes, c.want, w.Cost.Cost(w.Topology, allocs[0].Nodes), was)
		}
	}
}

// TestBestFitSinglesTopFirst: quad 0 has only its pair 0,1 free; quad 1
// has node 5 (its partner 4 busy) and the pair 6,7. The leaf-first
// counts (TieFirst) put a single-node job on 5, alone in its pair;
// TieTopFirst on the fuller quad 0 (node 0), so quad 1 keeps 3 free
// nodes for a 3-node job.
func TestBestFitSinglesTopFirst(t *testing.T) {
	for _, c := range []struct {
		tie  FitTie
		want int
	}{{TieFirst, 5}, {TieTopFirst, 0}} {
		w := &model.Window{Topology: quads(t), Idle: []int{0, 1, 5, 6, 7}, Cost: model.DefaultCostModel}
		w.Jobs = []model.Job{{ID: "one", Nodes: 1}}
		allocs := []model.Allocation{{Job: 0, Nodes: []int{7}}}
		BestFitSinglesWith(w, allocs, c.tie)
		if allocs[0].Nodes[0] != c.want {
			t.Errorf("tie %d: node %d, want %d", c.tie, allocs[0].Nodes[0], c.want)
		}
	}
}

// TestBestFitTiesKeepCosts: on random layouts, idle sets, running jobs
// and disjoint allocations, both passes under every tie rule keep each
// job's size and CH cost, and the allocations disjoint on idle nodes.
func TestBestFitTiesKeepCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 7))
	for iter := range 1500 {
		topo, err := model.NewLayout(1+rng.IntN(4), 1+rng.IntN(4), 1+rng.IntN(5))
		if err != nil {
			t.Fatal(err)
		}
		n := topo.NumNodes()
		perm := rng.Perm(n)
		k := rng.IntN(n + 1)
		idle := slices.Clone(perm[:k])
		slices.Sort(idle)
		w := &model.Window{Time: 1000, Topology: topo, Idle: idle, Cost: model.DefaultCostModel}
		for _, b := range perm[k:] {
			w.Running = append(w.Running, model.RunningJob{ID: "r", Nodes: []int{b}, End: 1000 + rng.Int64N(500)})
		}
		pool := slices.Clone(idle)
		rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		var allocs []model.Allocation
		for len(pool) > 0 && rng.IntN(5) > 0 {
			m := 1 + rng.IntN(min(len(pool), 5))
			w.Jobs = append(w.Jobs, model.Job{ID: "j", Nodes: m, Walltime: rng.Int64N(600)})
			allocs = append(allocs, model.Allocation{Job: len(allocs), Nodes: slices.Clone(pool[:m])})
			pool = pool[m:]
		}
		was := make([]int64, len(allocs))
		for i, a := range allocs {
			was[i] = w.Cost.Cost(topo, a.Nodes)
		}
		tie := FitTie(rng.IntN(3))
		BestFitMultiWith(w, allocs, tie)
		BestFitSinglesWith(w, allocs, tie)
		used := map[int]bool{}
		for i, a := range allocs {
			if len(a.Nodes) != w.Jobs[i].Nodes || w.Cost.Cost(topo, a.Nodes) != was[i] {
				t.Fatalf("iter %d tie %d: job %d on %v (cost %d, was %d)", iter, tie, i, a.Nodes, w.Cost.Cost(topo, a.Nodes), was[i])
			}
			for _, x := range a.Nodes {
				if used[x] || !slices.Contains(idle, x) {
					t.Fatalf("iter %d tie %d: node %d used twice or not idle", iter, tie, x)
				}
				used[x] = true
			}
		}
	}
}
