//go:build cgo

package lpsolve

import (
	"context"
	"testing"
	"time"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/solver"
)

// TestKnownOptima: lp_solve must reach every proven optimum in known.tsv
// with at most five multi-node jobs (the paper's windows).
func TestKnownOptima(t *testing.T) {
	table, err := instances.KnownTable()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range table {
		if k.Method != "optimal" || k.MaxJobs != 5 {
			continue
		}
		w, err := instances.Load(k.Window)
		if err != nil {
			t.Fatal(err)
		}
		res, err := solver.SolveWindow(context.Background(), w, Solver{}, solver.Options{MaxJobs: 5, TimeLimit: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != solver.Optimal || res.Objective != k.Objective {
			t.Errorf("%s: lpsolve %v %d, known optimum %d", k.Window, res.Status, res.Objective, k.Objective)
		}
		n++
	}
	if n == 0 {
		t.Fatal("known.tsv has no optimum with max_jobs 5")
	}
}
