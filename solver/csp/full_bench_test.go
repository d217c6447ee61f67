package csp_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
)

// nearlyFullWindows returns n seeded windows like those of an
// archive-scale replay that csp's DP takes longest to prove: on a
// 8,000-node layout (200 pods of 4 leaves of 10 nodes), 2,000–6,000
// idle nodes in runs, and 3–12 jobs of 2–5 distinct sizes that cover all
// but 1–5 % of them, so that most placements wrap and the DP needs its
// rotations.
func nearlyFullWindows(n int) []*model.Window {
	rng := rand.New(rand.NewPCG(33, 8))
	topo, err := model.NewLayout(200, 4, 10)
	if err != nil {
		panic(err)
	}
	var ws []*model.Window
	for range n {
		w := &model.Window{Topology: topo, Cost: model.DefaultCostModel}
		want := 2000 + rng.IntN(4001)
		for k := 0; k < topo.NumNodes() && len(w.Idle) < want; {
			run := 1 + rng.IntN(200)
			for j := k; j < min(k+run, topo.NumNodes()) && len(w.Idle) < want; j++ {
				w.Idle = append(w.Idle, j)
			}
			k += run + rng.IntN(int(float64(run)*float64(topo.NumNodes()-want)/float64(want))+1)
		}
		nq := len(w.Idle)
		cover := int(float64(nq) * (0.95 + 0.04*rng.Float64()))
		nsizes, njobs := 2+rng.IntN(4), 3+rng.IntN(10)
		njobs = max(njobs, nsizes)
		// Job j has size sizes[j mod nsizes]; the sizes are scaled so
		// that the jobs cover about cover positions.
		weights := make([]int, nsizes)
		for s := range weights {
			weights[s] = 1 + rng.IntN(8)
		}
		total := 0
		for j := range njobs {
			total += weights[j%nsizes]
		}
		for j := range njobs {
			size := max(2, weights[j%nsizes]*cover/total)
			w.Jobs = append(w.Jobs, model.Job{ID: fmt.Sprint("j", j), Nodes: size, Walltime: 60, Queue: model.DefaultQueue})
		}
		ws = append(ws, w)
	}
	return ws
}

// BenchmarkNearlyFull solves, per iteration, the next of 30 nearly full
// windows (nearlyFullWindows) with a 1 s limit, and reports the share
// proven optimal. Run with -benchtime 30x for the set once.
func BenchmarkNearlyFull(b *testing.B) {
	ws := nearlyFullWindows(30)
	k, proven := 0, 0
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		res, err := solver.SolveWindow(ctx, ws[k%len(ws)], csp.Solver{}, solver.Options{})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if res.Status == solver.Optimal {
			proven++
		}
		k++
	}
	b.ReportMetric(100*float64(proven)/float64(k), "%proven")
}
