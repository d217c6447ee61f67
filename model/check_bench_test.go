package model_test

import (
	"testing"

	"github.com/optsched/optsched/model"
)

// BenchmarkCheckWholeNode checks whole-node allocations on a layout of
// pods × 4 leaves × 10 nodes: a few jobs on a large cluster (the
// simulator's case) and jobs over most of a small one, all idle, and with
// the busy nodes freed by running jobs.
func BenchmarkCheckWholeNode(b *testing.B) {
	for _, c := range []struct {
		name       string
		pods, jobs int
		running    bool
	}{{"few-of-100k", 2500, 4, false}, {"most-of-4k", 100, 300, false}, {"most-of-4k-running", 100, 300, true}} {
		b.Run(c.name, func(b *testing.B) {
			topo, err := model.NewLayout(c.pods, 4, 10)
			if err != nil {
				b.Fatal(err)
			}
			n := topo.NumNodes()
			w := &model.Window{Time: 100, Topology: topo}
			for k := range n {
				if c.running && k%2 == 1 {
					w.Running = append(w.Running, model.RunningJob{ID: "r", Nodes: []int{k}, End: 150})
					continue
				}
				w.Idle = append(w.Idle, k)
			}
			var allocs []model.Allocation
			next := 0
			for j := range c.jobs {
				w.Jobs = append(w.Jobs, model.Job{ID: "j", Nodes: 10, Walltime: 60})
				a := model.Allocation{Job: j, Start: 200}
				for range 10 {
					a.Nodes = append(a.Nodes, next%n)
					next += max(1, n/(10*c.jobs))
				}
				allocs = append(allocs, a)
			}
			if err := model.Check(w, allocs); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				model.Check(w, allocs)
			}
		})
	}
}
