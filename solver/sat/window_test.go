package sat_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-air/gini"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// weighted is W = Σ_i ω_i·s_i of a schedule of m's window, recomputed
// here apart from the package.
func weighted(m *cp.Model, allocs []model.Allocation) int64 {
	var W int64
	for _, a := range allocs {
		for _, j := range m.Jobs {
			if j.Index == a.Job {
				W += j.Weight * ((a.Start - m.Window.Time) / m.Grid)
			}
		}
	}
	return W
}

// TestExportWindow calls ExportWindow (the work of `optsched export
// --format cnf`) on seeded random small windows: against the list
// schedules, the bound is one less than their best W and the CNF is
// satisfiable exactly when the proven optimum beats them; with an
// objective bound at the optimum's objective, the bound is the optimum's
// W and the CNF is satisfiable. A window without a startable job is
// ErrNothingToExport.
func TestExportWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 4))
	const g = 10
	ctx := context.Background()
	solve := func(f *cnf.Formula) bool {
		var buf bytes.Buffer
		if err := f.WriteDIMACS(&buf); err != nil {
			t.Fatal(err)
		}
		gs, err := gini.NewDimacs(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return gs.Solve() == 1
	}
	checked, beaten, exact := 0, 0, 0
	for i := range 40 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), g)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cp.Build(w, g)
		if err != nil {
			t.Fatal(err)
		}
		var f cnf.Formula
		ex, err := sat.ExportWindow(ctx, w, sat.ExportOptions{Granularity: g, Bound: math.NaN(), Baselines: listSchedulers()}, &f)
		if len(m.Jobs) == 0 {
			if !errors.Is(err, sat.ErrNothingToExport) {
				t.Fatalf("window %d: no startable job, got %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
		best := int64(math.MaxInt64)
		for _, h := range listSchedulers() {
			sch, err := h.Solve(ctx, &solver.ScheduleProblem{Window: w, Granularity: g})
			if err != nil {
				t.Fatal(err)
			}
			best = min(best, weighted(m, sch.Allocations))
		}
		if ex.Bound != best-1 {
			t.Fatalf("window %d: bound %d, want the best list schedule's W %d − 1", i, ex.Bound, best)
		}
		res, err := solver.SolveWindow(ctx, w, sat.Solver{Initial: listSchedulers()}, solver.Options{Granularity: g})
		if err != nil || res.Status != solver.Optimal {
			t.Fatalf("window %d: %v %v", i, res, err)
		}
		opt := weighted(m, res.Allocations)
		if got, want := solve(&f), opt < best; got != want {
			t.Fatalf("window %d: satisfiable %v, want %v (optimum %d, list %d)", i, got, want, opt, best)
		}
		if opt < best {
			beaten++
		}
		if len(ex.Comments()) < 3 {
			t.Fatalf("window %d: comments %q", i, ex.Comments())
		}
		var f2 cnf.Formula
		ex2, err := sat.ExportWindow(ctx, w, sat.ExportOptions{Granularity: g, Bound: m.ObjectiveOfWeighted(float64(opt))}, &f2)
		if !m.ExactWeights {
			if !errors.Is(err, sat.ErrInexactBound) {
				t.Fatalf("window %d: inexact weights, got %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if ex2.Bound != opt || !solve(&f2) {
			t.Fatalf("window %d: objective bound at the optimum: W bound %d (optimum %d), satisfiable %v", i, ex2.Bound, opt, solve(&f2))
		}
		exact++
		checked++
	}
	if checked < 20 || exact == 0 {
		t.Errorf("only %d windows checked (%d with exact weights, %d where the optimum beats the list schedules)", checked, exact, beaten)
	}
	t.Logf("%d windows, %d with exact weights, the optimum beats the list schedules in %d", checked, exact, beaten)
}
