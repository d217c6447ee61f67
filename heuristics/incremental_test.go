package heuristics_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// TestIncrementalAsSolve: on random windows of every topology kind, each
// Incremental allocator places every job where the allocator's Solve
// places it on the one-job window of the same state (the free nodes idle,
// the jobs placed and not released running, with their Comm), while jobs
// come and go; and it is indexed on the generated layouts and fat-trees.
func TestIncrementalAsSolve(t *testing.T) {
	solvers := map[string]solver.Solver{"slurm": heuristics.Slurm{}, "mishra-greedy": heuristics.MishraGreedy{},
		"mishra-balanced": heuristics.MishraBalanced{}, "mishra-adaptive": heuristics.MishraAdaptive{}}
	patterns := []string{"", model.PatternRD, model.PatternRHVD, model.PatternBinomial}
	rng := rand.New(rand.NewPCG(31, 32))
	placed, indexed, scanned := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range 300 {
		kind := i % (instances.NumKinds + 1)
		var w *model.Window
		if kind < instances.NumKinds {
			w = instances.RandomSmall(rng, kind, 40, 3)
		} else {
			w = interleaved(t, rng) // not ordered: the scan
			kind = instances.KindSlurm
		}
		for _, name := range heuristics.IncrementalNames {
			a, err := heuristics.NewIncremental(name, w.Topology, w.Idle)
			if err != nil {
				t.Fatal(err)
			}
			if a.Indexed() {
				indexed[name]++
			} else if scanned[name]++; kind != instances.KindSlurm {
				t.Fatalf("%s: window %d (kind %d) is not indexed", name, i, kind)
			}
			free := slices.Clone(w.Idle)
			var held []model.RunningJob
			for step := range 40 {
				if len(free) > 0 && (len(held) == 0 || rng.IntN(3) > 0) {
					n := 1 + rng.IntN(len(free))
					if rng.IntN(2) == 0 {
						n = 1 + rng.IntN(min(len(free), 12))
					}
					job := model.Job{ID: "j" + strconv.Itoa(step), Nodes: n, Walltime: 1, Comm: rng.IntN(3) > 0,
						Pattern: patterns[rng.IntN(len(patterns))]}
					one := &model.Window{Topology: w.Topology, Idle: slices.Clone(free), Running: held, Jobs: []model.Job{job}}
					res, err := solvers[name].Solve(context.Background(), solver.NewProblem(one, []int{0}))
					if err != nil {
						t.Fatal(err)
					}
					want := res.Allocations[0].Nodes
					got, err := a.Place(job)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s: window %d step %d, job of %d: incremental %v, Solve %v", name, i, step, n, got, want)
					}
					held = append(held, model.RunningJob{ID: job.ID, Nodes: got, End: 1, Comm: job.Comm})
					free = slices.DeleteFunc(free, func(id int) bool { _, ok := slices.BinarySearch(got, id); return ok })
					placed[name]++
					continue
				}
				if len(held) == 0 {
					break
				}
				k := rng.IntN(len(held))
				a.Release(held[k].Nodes, held[k].Comm)
				free = append(free, held[k].Nodes...)
				slices.Sort(free)
				held = slices.Delete(held, k, k+1)
			}
			if a.Free() != len(free) {
				t.Fatalf("%s: window %d: %d free, want %d", name, i, a.Free(), len(free))
			}
		}
	}
	for _, name := range heuristics.IncrementalNames {
		if placed[name] < 2000 || indexed[name] < 160 || scanned[name] < 10 {
			t.Errorf("%s: only %d jobs placed, %d windows indexed, %d not", name, placed[name], indexed[name], scanned[name])
		}
	}
}

// interleaved returns a window on a random tree whose pods' leaves
// interleave in switch order (pod p owns leaves p, p+P, p+2P, …), so that
// no index applies, with a random half of the nodes idle.
func interleaved(t *testing.T, rng *rand.Rand) *model.Window {
	pods, leaves := 2+rng.IntN(2), 4+rng.IntN(6)
	var specs []model.SwitchSpec
	podKids := make([][]string, pods)
	node := 0
	for l := range leaves {
		leaf := model.SwitchSpec{Name: "leaf" + strconv.Itoa(l)}
		for range 1 + rng.IntN(8) {
			leaf.Nodes = append(leaf.Nodes, "n"+strconv.Itoa(node))
			node++
		}
		specs = append(specs, leaf)
		podKids[l%pods] = append(podKids[l%pods], leaf.Name)
	}
	root := model.SwitchSpec{Name: "root"}
	for p := range pods {
		specs = append(specs, model.SwitchSpec{Name: "pod" + strconv.Itoa(p), Switches: podKids[p]})
		root.Switches = append(root.Switches, "pod"+strconv.Itoa(p))
	}
	topo, err := model.BuildTopology(append(specs, root))
	if err != nil {
		t.Fatal(err)
	}
	w := &model.Window{Topology: topo}
	for id := range topo.NumNodes() {
		if rng.IntN(2) == 0 {
			w.Idle = append(w.Idle, id)
		}
	}
	if len(w.Idle) == 0 {
		w.Idle = []int{0}
	}
	return w
}
