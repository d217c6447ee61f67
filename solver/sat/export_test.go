package sat_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// TestDIMACSRoundTrip writes the complete CNF (every node block, the
// objective bound as a unit clause) of seeded random small windows as
// DIMACS at the proven optimum W* and at W* − 1, reads it back into a
// fresh gini, and checks the answers: satisfiable at W*, with a model that
// decodes into a schedule model.Check accepts and whose W is W*; and
// unsatisfiable at W* − 1. The cadical binary, when on PATH, must agree.
func TestDIMACSRoundTrip(t *testing.T) {
	cadical, _ := exec.LookPath("cadical")
	if cadical == "" {
		t.Log("cadical not on PATH: skipping the cross-check with an outside solver")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 22))
	const g = 10
	checked := 0
	for i := range 60 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), g)
		if err != nil {
			t.Fatal(err)
		}
		res, err := solver.SolveWindow(context.Background(), w, sat.Solver{Initial: listSchedulers()}, solver.Options{Granularity: g})
		if err != nil || res.Status != solver.Optimal {
			t.Fatalf("window %d: %v %v", i, res, err)
		}
		m, err := cp.Build(w, g)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Jobs) == 0 {
			continue
		}
		var best int64
		for _, a := range res.Allocations {
			for k, j := range m.Jobs {
				if j.Index == a.Job {
					best += m.Jobs[k].Weight * (a.Start - w.Time) / g
				}
			}
		}
		for _, c := range []struct {
			bound int64
			sat   bool
		}{{best, true}, {best - 1, false}} {
			var f cnf.Formula
			enc, err := sat.EncodeBounded(m, c.bound, &f)
			if err != nil {
				t.Fatal(err)
			}
			f.Comments = sat.Comments(m, enc, c.bound)
			var buf bytes.Buffer
			if err := f.WriteDIMACS(&buf); err != nil {
				t.Fatal(err)
			}
			gs, err := gini.NewDimacs(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("window %d: gini cannot read the DIMACS: %v", i, err)
			}
			r := gs.Solve()
			if (r == 1) != c.sat || r == 0 {
				t.Fatalf("window %d, bound %d (optimum %d): gini says %d, want satisfiable=%v", i, c.bound, best, r, c.sat)
			}
			if c.sat {
				slots, units := enc.Decode(func(l cnf.Lit) bool { return gs.Value(z.Dimacs2Lit(int(l))) })
				if got := m.Weighted(slots); got != best {
					t.Fatalf("window %d: the DIMACS model has W = %d, optimum %d", i, got, best)
				}
				var allocs []model.Allocation
				for k, j := range m.Jobs {
					a := model.Allocation{Job: j.Index, Start: w.Time + int64(slots[k])*g, Units: map[int]int{}}
					for o, u := range units[k] {
						if u > 0 {
							id := m.Nodes[j.Options[o].Node].ID
							a.Units[id] = u
							a.Nodes = append(a.Nodes, id)
						}
					}
					allocs = append(allocs, a)
				}
				if err := model.Check(w, allocs); err != nil {
					t.Fatalf("window %d: the DIMACS model's schedule: %v", i, err)
				}
			}
			if cadical != "" {
				path := filepath.Join(dir, "w.cnf")
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				err := exec.Command(cadical, "-q", "-n", path).Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("cadical: %v", err)
				}
				if got, want := ee.ExitCode(), map[bool]int{true: 10, false: 20}[c.sat]; got != want {
					t.Fatalf("window %d, bound %d: cadical exits %d, want %d", i, c.bound, got, want)
				}
			}
			checked++
		}
	}
	if checked < 60 {
		t.Errorf("only %d encodings checked", checked)
	}
}
