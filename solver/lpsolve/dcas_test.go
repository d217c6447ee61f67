//go:build cgo

package lpsolve

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/draffensperger/golp"

	"github.com/optsched/optsched/encode/dcas"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/free"
)

// TestDCASProgram: lp_solve, solving the free problem's exported count
// program (what `optsched export --encoding dcas` writes), reaches the
// same optimum as the free solver on small windows of both topology kinds
// and both cost models, and the decoded allocation passes model.Check and
// costs what the program says. So the exported model is the free problem.
func TestDCASProgram(t *testing.T) {
	layouts := []instances.GenConfig{
		{Layout: &model.LayoutSpec{Pods: 2, LeavesPerPod: 2, NodesPerLeaf: 4}},
		{FatTree: &model.FatTreeSpec{K: 4}},
	}
	costs := []model.CostModel{model.DefaultCostModel, {Kind: model.CostLanPaper, HopCost: 1000}}
	n := 0
	for li, base := range layouts {
		for ci, cm := range costs {
			for k := 0; k < 6; k++ {
				cfg := base
				cfg.Seed = uint64(100*li + 10*ci + k)
				cfg.Idle, cfg.Jobs = 8+k, 2+k%3
				cfg.MinNodes, cfg.MaxNodes = 1, 4
				cfg.MinWalltime, cfg.MaxWalltime = 10, 100
				w, err := instances.Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				w.Cost = cm
				jobs := model.SelectJobs(w, 0)
				sel := append(append([]int(nil), jobs.Multi...), jobs.Single...)
				if len(sel) == 0 {
					continue
				}
				want, err := free.Solver{}.Solve(context.Background(), solver.NewProblem(w, sel))
				if err != nil || want.Status != solver.Optimal {
					t.Fatalf("free: %v %v", err, want.Status)
				}
				e, err := dcas.Build(context.Background(), w, sel)
				if err != nil {
					t.Fatal(err)
				}
				lp, outcome, err := Solver{}.load(&e.Program, func() bool { return false })
				if err != nil || outcome != loaded {
					t.Fatalf("load: %v (outcome %d)", err, outcome)
				}
				if st := lp.Solve(); st != golp.OPTIMAL {
					t.Fatalf("lp_solve: %v", st)
				}
				obj := lp.Objective()
				x := lp.Variables()
				runtime.KeepAlive(lp)
				if math.Abs(obj-float64(want.Objective)) > 0.5 {
					t.Fatalf("window %d/%d/%d: lp_solve on the dcas program %g, free optimum %d", li, ci, k, obj, want.Objective)
				}
				allocs, err := e.Decode(x)
				if err != nil {
					t.Fatal(err)
				}
				if err := model.Check(w, allocs); err != nil {
					t.Fatal(err)
				}
				if got := w.Cost.TotalCost(w.Topology, allocs); got != want.Objective {
					t.Fatalf("decoded allocation costs %d, program %g", got, obj)
				}
				n++
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d windows", n)
	}
}
