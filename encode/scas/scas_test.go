package scas_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
)

// vectorOf builds the 0/1 vector of an allocation for e by variable names:
// y_r<r>_<i> (strong) or y_<k>_<i> and x_<k>_<pos> (paper, jobs numbered
// in encoding order). It fails the test for an allocation that is not a
// set of blocks.
func vectorOf(t *testing.T, e *scas.Encoding, allocs []model.Allocation) []float64 {
	t.Helper()
	b := e.Blocks
	pos := map[int]int{}
	for i, id := range b.Q {
		pos[id] = i
	}
	idx := map[string]int{}
	for v, n := range e.Program.VarNames {
		idx[n] = v
	}
	x := make([]float64, e.Program.NumVars())
	set := func(name string) {
		v, ok := idx[name]
		if !ok {
			t.Fatalf("no variable %s", name)
		}
		x[v] = 1
	}
	// Jobs in encoding order: by size index, then problem order.
	k := 0
	byJob := map[int]model.Allocation{}
	for _, a := range allocs {
		byJob[a.Job] = a
	}
	for s, r := range b.Sizes {
		for _, j := range b.Jobs[s] {
			a := byJob[j]
			start := pos[a.Nodes[0]]
			if e.Formulation == scas.Strong {
				set("y_r" + strconv.Itoa(r) + "_" + strconv.Itoa(start))
			} else {
				set("y_" + strconv.Itoa(k) + "_" + strconv.Itoa(start))
				for _, n := range a.Nodes {
					set("x_" + strconv.Itoa(k) + "_" + strconv.Itoa(pos[n]))
				}
			}
			k++
		}
	}
	return x
}

// TestFormulationsAdmitTheOptimum checks both programs against brute force
// without any solver: the optimal allocation, written as a 0/1 vector,
// satisfies every row with objective value equal to its CH cost, and
// Decode gives it back.
func TestFormulationsAdmitTheOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for i := range 200 {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 14, 4)
		sel := model.SelectJobs(w, 0)
		if len(sel.Multi) == 0 {
			continue
		}
		res, err := brute.Solver{}.Solve(context.Background(), solver.NewProblem(w, sel.Multi))
		if err != nil || res.Status != solver.Optimal {
			t.Fatalf("brute: %v %v", res, err)
		}
		for _, f := range []scas.Formulation{scas.Strong, scas.Paper} {
			e, err := scas.Build(w, sel.Multi, f)
			if err != nil {
				t.Fatal(err)
			}
			x := vectorOf(t, e, res.Allocations)
			if v, where := e.Program.Violation(x); v > 1e-9 {
				t.Fatalf("window %d %v: optimum violates %s by %g", i, f, where, v)
			}
			if got := e.Program.Value(x); math.Abs(got-float64(res.Objective)) > 1e-6 {
				t.Fatalf("window %d %v: program value %g, CH cost %d", i, f, got, res.Objective)
			}
			allocs, err := e.Decode(x)
			if err != nil {
				t.Fatal(err)
			}
			if err := model.Check(w, allocs); err != nil || solver.Objective(w, allocs) != res.Objective {
				t.Fatalf("window %d %v: decoded allocation %v (cost %d, want %d)", i, f, err, solver.Objective(w, allocs), res.Objective)
			}
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	w, err := instances.Load("example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	sel := model.SelectJobs(w, 3)
	e, err := scas.Build(w, sel.Multi, scas.Strong)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Decode(make([]float64, 3)); err == nil {
		t.Error("no error for a vector of the wrong length")
	}
	if _, err := e.Decode(make([]float64, e.Program.NumVars())); err == nil {
		t.Error("no error for a vector that starts no job")
	}
	if _, err := scas.ParseFormulation("weak"); err == nil {
		t.Error("no error for an unknown formulation")
	}
	big := *w
	big.Jobs = []model.Job{{ID: "x", Nodes: len(w.Idle) + 1, Walltime: 1}}
	if _, err := scas.Build(&big, []int{0}, scas.Strong); err == nil {
		t.Error("no error for jobs that do not fit")
	}
}

var objLine = regexp.MustCompile(`Value of objective function:\s+(\S+)`)

// TestWritersWithLPSolve hands the LP and MPS files of both formulations to
// the lp_solve command-line program (Debian package lp-solve) and compares
// its optimum with brute force: an independent check of the writers.
func TestWritersWithLPSolve(t *testing.T) {
	bin, err := exec.LookPath("lp_solve")
	if err != nil {
		t.Skip("lp_solve command not found (Debian package lp-solve); make deps installs it")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(41, 42))
	checked := 0
	for i := 0; checked < 24; i++ {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 12, 3)
		sel := model.SelectJobs(w, 0)
		if len(sel.Multi) == 0 {
			continue
		}
		res, err := brute.Solver{}.Solve(context.Background(), solver.NewProblem(w, sel.Multi))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []scas.Formulation{scas.Strong, scas.Paper} {
			e, err := scas.Build(w, sel.Multi, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"lp", "mps"} {
				var buf bytes.Buffer
				args := []string{"-S3"}
				if format == "lp" {
					err = e.Program.WriteLP(&buf)
				} else {
					err = e.Program.WriteMPS(&buf)
					args = append(args, "-fmps")
				}
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "m."+format)
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(bin, append(args, path)...).CombinedOutput()
				if err != nil {
					t.Fatalf("lp_solve %s %v: %v\n%s", format, f, err, out)
				}
				m := objLine.FindStringSubmatch(string(out))
				if m == nil {
					t.Fatalf("lp_solve %s %v printed no objective:\n%s\n%s", format, f, out, strings.SplitN(buf.String(), "\n", 20)[0])
				}
				v, _ := strconv.ParseFloat(m[1], 64)
				if math.Abs(v-float64(res.Objective)) > 0.5 {
					t.Fatalf("window %d %v %s: lp_solve %g, brute %d", i, f, format, v, res.Objective)
				}
			}
		}
		checked++
	}
}
