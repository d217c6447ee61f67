//go:build cgo

package clp

import (
	"context"
	"testing"
	"time"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/solver"
)

// TestKnownOptima: the CLP bound never exceeds a proven optimum of
// known.tsv, and its allocation never beats it.
func TestKnownOptima(t *testing.T) {
	table, err := instances.KnownTable()
	if err != nil {
		t.Fatal(err)
	}
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
		if res.Objective < k.Objective || !res.HasBound() || res.Bound > float64(k.Objective)+1e-6 {
			t.Errorf("%s: clp objective %d bound %g around the optimum %d", k.Window, res.Objective, res.Bound, k.Objective)
		}
	}
}
