//go:build cgo

package lpsolve

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/draffensperger/golp"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/brute"
)

var formulations = []scas.Formulation{scas.Strong, scas.Paper}

// raceEnabled reports whether the test binary was built with -race, which
// slows the Go side (encoding) several times over.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// randomWindows returns n seeded random small windows that have at least
// one multi-node job to optimise.
func randomWindows(seed uint64, n int) []*model.Window {
	rng := rand.New(rand.NewPCG(seed, 0x5ca5))
	var out []*model.Window
	for i := 0; len(out) < n; i++ {
		w := instances.RandomSmall(rng, i%instances.NumKinds, 14, 4)
		if len(model.SelectJobs(w, 0).Multi) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// TestAgainstBrute cross-checks lp_solve's optimum, in both formulations,
// with brute force on random small windows, through the whole pipeline
// (SolveWindow runs model.Check and recomputes the objective).
func TestAgainstBrute(t *testing.T) {
	const n = 320
	ctx := context.Background()
	statuses := map[string]int{}
	for i, w := range randomWindows(1, n) {
		want, err := solver.SolveWindow(ctx, w, brute.Solver{}, solver.Options{})
		if err != nil {
			t.Fatalf("window %d: brute: %v", i, err)
		}
		if want.Status != solver.Optimal {
			t.Fatalf("window %d: brute says %v", i, want.Status)
		}
		for _, f := range formulations {
			got, err := solver.SolveWindow(ctx, w, Solver{Formulation: f}, solver.Options{})
			if err != nil {
				t.Fatalf("window %d, %v: %v", i, f, err)
			}
			statuses[got.Status.String()]++
			if got.Status != solver.Optimal || got.Objective != want.Objective || got.Bound != float64(got.Objective) {
				t.Errorf("window %d, %v: lpsolve %v objective %d bound %g; brute optimum %d\n%s",
					i, f, got.Status, got.Objective, got.Bound, want.Objective, windowText(w))
			}
			if got.Encoding != "scas" || got.Solver != "lpsolve" || lpStats(got.Stats).Formulation != f.String() {
				t.Errorf("window %d: result labels %q %q %v", i, got.Encoding, got.Solver, lpStats(got.Stats).Formulation)
			}
		}
	}
	t.Logf("%d windows × %d formulations: statuses %v", n, len(formulations), statuses)
}

func windowText(w *model.Window) string {
	data, err := windowjson.Marshal(w)
	if err != nil {
		return fmt.Sprint("(unwritable window: ", err, ")")
	}
	return string(data)
}

// TestTinyTimeLimits gives a paper-scale window 1 µs, and then budgets
// that run out inside lp_solve (after the model is loaded, during the LP
// or the branch and bound): every answer must be a valid status, and a
// Feasible one must pass model.Check.
func TestTinyTimeLimits(t *testing.T) {
	w, err := instances.Load("paper-s3-i300.json")
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]int{}
	limits := []time.Duration{time.Microsecond, 100 * time.Microsecond, time.Millisecond,
		3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond,
		300 * time.Millisecond}
	for _, f := range formulations {
		for _, limit := range limits {
			for _, maxJobs := range []int{0, 3} {
				start := time.Now()
				res, err := solver.SolveWindow(context.Background(), w, Solver{Formulation: f},
					solver.Options{TimeLimit: limit, MaxJobs: maxJobs})
				took := time.Since(start)
				if err != nil {
					t.Fatalf("%v, %v: %v", f, limit, err)
				}
				switch res.Status {
				case solver.Unknown:
					for _, a := range res.Allocations {
						if w.Jobs[a.Job].Nodes >= 2 {
							t.Errorf("%v, %v: unknown with an allocation of multi-node job %s", f, limit, w.Jobs[a.Job].ID)
						}
					}
				case solver.Feasible, solver.Optimal:
					if err := model.Check(w, res.Allocations); err != nil {
						t.Errorf("%v, %v: %v", f, limit, err)
					}
				default:
					t.Errorf("%v, %v: status %v", f, limit, res.Status)
				}
				statuses[fmt.Sprintf("%v/%v", res.Status, lpStats(res.Stats).Status)]++
				t.Logf("%v limit %v maxjobs %d: %v in %v (lp_status %v, %v iterations, %v nodes)", f, limit, maxJobs,
					res.Status, took.Round(time.Microsecond), lpStats(res.Stats).Status, lpCount(lpStats(res.Stats).Iterations), lpCount(lpStats(res.Stats).Nodes))
				if limit == time.Microsecond && took > 50*time.Millisecond {
					t.Errorf("%v: 1 µs limit took %v", f, took)
				}
			}
		}
	}
	t.Logf("status/lp_status seen: %v", statuses)

	// An expired context gives Unknown straight away.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sel := model.SelectJobs(w, 5)
	res, err := Solver{}.Solve(ctx, solver.NewProblem(w, sel.Multi))
	if err != nil || res.Status != solver.Unknown {
		t.Errorf("cancelled context: %v, %v", res, err)
	}
}

// TestIncumbentAtDeadline stops lp_solve's branch and bound on a program
// where it finds an incumbent early but cannot close the gap in time
// (example window, five jobs, paper form): the answer must be Feasible
// (lp_solve's SUBOPTIMAL) with a valid allocation no better than the
// optimum, which the strong form proves at once.
func TestIncumbentAtDeadline(t *testing.T) {
	w, err := instances.Load("example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	opt, err := solver.SolveWindow(context.Background(), w, Solver{}, solver.Options{MaxJobs: 5})
	if err != nil || opt.Status != solver.Optimal {
		t.Fatalf("strong form: %v, %v", opt, err)
	}
	feasible := 0
	// The limits double until a solve stops with an incumbent: on a
	// loaded machine lp_solve gets a share of a core, and 800 ms may not
	// see it past the root LP (seen at load 7 on 2 cores).
	for _, limit := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond} {
		if feasible > 0 {
			break
		}
		res, err := solver.SolveWindow(context.Background(), w, Solver{Formulation: scas.Paper},
			solver.Options{MaxJobs: 5, TimeLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("limit %v: %v objective %d (optimum %d), lp_status %v, %v nodes", limit, res.Status,
			res.Objective, opt.Objective, lpStats(res.Stats).Status, lpCount(lpStats(res.Stats).Nodes))
		switch res.Status {
		case solver.Feasible:
			feasible++
			if res.Objective < opt.Objective || res.HasBound() {
				t.Errorf("feasible objective %d below the optimum %d, or with bound %g", res.Objective, opt.Objective, res.Bound)
			}
			if err := model.Check(w, res.Allocations); err != nil {
				t.Error(err)
			}
		case solver.Optimal:
			if res.Objective != opt.Objective {
				t.Errorf("paper form optimum %d, strong form %d", res.Objective, opt.Objective)
			}
		case solver.Unknown:
		default:
			t.Errorf("status %v", res.Status)
		}
	}
	if feasible == 0 && !raceEnabled() {
		t.Error("no solve stopped with an incumbent")
	}
}

// TestGCPressure runs a few thousand small solves with the collector
// running all the time, so that golp's finalizers free models while other
// models are built and solved: nothing may crash, every answer must stay
// right.
func TestGCPressure(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	n := 3000
	if testing.Short() {
		n = 300
	}
	ws := randomWindows(2, 100)
	want := make([]int64, len(ws))
	for i, w := range ws {
		r, err := solver.SolveWindow(context.Background(), w, brute.Solver{}, solver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r.Objective
	}
	start := time.Now()
	done := 0
	for i := 0; i < n && time.Since(start) < 15*time.Second; i++ {
		k := i % len(ws)
		res, err := solver.SolveWindow(context.Background(), ws[k], Solver{Formulation: formulations[i%2]}, solver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != solver.Optimal || res.Objective != want[k] {
			t.Fatalf("solve %d: %v %d, want optimal %d", i, res.Status, res.Objective, want[k])
		}
		if i%7 == 0 {
			runtime.GC()
		}
		done++
	}
	t.Logf("%d solves under GC pressure in %v", done, time.Since(start).Round(time.Millisecond))
	if done < n/2 {
		t.Errorf("only %d of %d solves in the time", done, n)
	}
}

// TestConcurrent solves from several goroutines at once with one shared
// Solver value, small windows checked against brute force and paper-scale
// windows stopped by deadlines mixed in. Run it under -race.
func TestConcurrent(t *testing.T) {
	ws := randomWindows(3, 120)
	want := make([]int64, len(ws))
	for i, w := range ws {
		r, err := solver.SolveWindow(context.Background(), w, brute.Solver{}, solver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r.Objective
	}
	big, err := instances.Load("paper-s2-i150.json")
	if err != nil {
		t.Fatal(err)
	}
	s := Solver{Formulation: scas.Paper}
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Go(func() {
			for k := g; k < len(ws); k += workers {
				res, err := solver.SolveWindow(context.Background(), ws[k], s, solver.Options{})
				if err != nil {
					errs <- err
					return
				}
				if res.Status != solver.Optimal || res.Objective != want[k] {
					errs <- fmt.Errorf("window %d: %v %d, want optimal %d", k, res.Status, res.Objective, want[k])
					return
				}
				if k%16 == g {
					// A paper-scale solve cut by its deadline.
					res, err := solver.SolveWindow(context.Background(), big, s,
						solver.Options{MaxJobs: 5, TimeLimit: time.Duration(20+10*g) * time.Millisecond})
					if err != nil {
						errs <- err
						return
					}
					if res.Status == solver.Infeasible {
						errs <- fmt.Errorf("paper-s2: %v", res.Status)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDeadline holds Solve to its deadline on hard programs: each must
// return within the limit plus 200 ms of wall time (a correctness bound,
// not a benchmark). In the first case the time goes to encoding and
// loading the 345,664-row paper form; in the others lp_solve's branch and
// bound must be stopped by the abort callback.
func TestDeadline(t *testing.T) {
	// The slack is generous because the machine may be loaded (other test
	// binaries, other work): a deadline that does not reach lp_solve
	// leaves it running for many seconds on these models, far past it.
	const limit, slack = 300 * time.Millisecond, 5 * time.Second
	cases := []struct {
		window  string
		maxJobs int
	}{
		{"fattree16-s7-i600.json", 0},
		{"paper-s2-i150.json", 5},
		{"example-window.json", 0},
		{"paper-s6-i1000.json", 5},
	}
	for _, c := range cases {
		w, err := instances.Load(c.window)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := solver.SolveWindow(context.Background(), w, Solver{Formulation: scas.Paper},
			solver.Options{MaxJobs: c.maxJobs, TimeLimit: limit})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", c.window, err)
		}
		t.Logf("%s (max jobs %d, %v rows), paper form, %v limit: %v after %v (lp_status %v, %v iterations, %v nodes)",
			c.window, c.maxJobs, lpStats(res.Stats).Rows, limit, res.Status, took.Round(time.Millisecond),
			lpStats(res.Stats).Status, lpCount(lpStats(res.Stats).Iterations), lpCount(lpStats(res.Stats).Nodes))
		if took > limit+slack {
			if raceEnabled() {
				t.Logf("%s: %v over the limit under -race (encoding is slowed several times)", c.window, took-limit)
			} else {
				t.Errorf("%s: returned %v after a %v limit", c.window, took, limit)
			}
		}
	}
}

// TestCancel stops a long solve by cancelling a context that has no
// deadline: the abort flag, set from ctx.Done, must reach lp_solve.
func TestCancel(t *testing.T) {
	w, err := instances.Load("paper-s2-i150.json")
	if err != nil {
		t.Fatal(err)
	}
	sel := model.SelectJobs(w, 5)
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(300*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	res, err := Solver{Formulation: scas.Paper}.Solve(ctx, solver.NewProblem(w, sel.Multi))
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cancelled after 300 ms: %v after %v (lp_status %v)", res.Status, took.Round(time.Millisecond), lpStats(res.Stats).Status)
	if res.Status == solver.Optimal || res.Status == solver.Infeasible {
		t.Errorf("cancelled solve claims %v", res.Status)
	}
	// The status above is the test of the abort flag (an uncancelled
	// solve ends optimal); the time only generously: on a shared 2-core
	// machine at a load of 10 the cancelled solve returned after 2.6 s.
	if took > 300*time.Millisecond+10*time.Second && !raceEnabled() {
		t.Errorf("cancelled solve returned after %v", took)
	}
}

// TestMIPGaps checks that the shim reaches lp_solve on golp's model: it
// reads the build's default gaps and sets the package's.
func TestMIPGaps(t *testing.T) {
	lp := golp.NewLP(0, 1)
	defer runtime.KeepAlive(lp)
	h, err := lprecOf(lp)
	if err != nil {
		t.Fatal(err)
	}
	abs, rel := mipGaps(h)
	t.Logf("lp_solve's default MIP gaps: absolute %g, relative %g", abs, rel)
	setGaps(h, 1e-3, 2e-3)
	if abs, rel := mipGaps(h); abs != 1e-3 || rel != 2e-3 {
		t.Errorf("after setting 1e-3, 2e-3: %g, %g", abs, rel)
	}
	setGaps(h, absMIPGap, relMIPGap)
	if abs, rel := mipGaps(h); abs != absMIPGap || rel != relMIPGap {
		t.Errorf("gaps %g, %g", abs, rel)
	}
	if _, err := lprecOf(nil); err == nil {
		t.Error("lprecOf(nil) did not fail")
	}
}

// TestVerbose checks that lp_solve's log reaches Verbose.
func TestVerbose(t *testing.T) {
	w, err := instances.Load("paper-s1-i50.json")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	res, err := solver.SolveWindow(context.Background(), w, Solver{Verbose: &log}, solver.Options{MaxJobs: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Optimal || !strings.Contains(log.String(), "lp_solve") {
		t.Errorf("%v; log:\n%s", res.Status, log.String())
	}
}

// TestEmptyRows checks load's handling of rows without columns.
func TestEmptyRows(t *testing.T) {
	w, err := instances.Load("paper-s1-i50.json")
	if err != nil {
		t.Fatal(err)
	}
	e, err := scas.Build(w, model.SelectJobs(w, 5).Multi, scas.Strong)
	if err != nil {
		t.Fatal(err)
	}
	never := func() bool { return false }
	e.Program.AddRow("empty_ok", nil, nil, encode.LE, 1)
	lp, outcome, err := Solver{}.load(&e.Program, never)
	if err != nil || outcome != loaded || lp.NumRows() != len(e.Program.Rows)-1 {
		t.Errorf("satisfied empty row: %v, %v", outcome, err)
	}
	e.Program.Rows[len(e.Program.Rows)-1].Sense = encode.EQ
	if _, outcome, err := (Solver{}).load(&e.Program, never); err != nil || outcome != loadInfeasible {
		t.Errorf("violated empty row: %v, %v", outcome, err)
	}
}

// BenchmarkLPSolve solves the shipped paper-scale windows (at most five
// multi-node jobs, as the published code of [Lan23] selects) in the strong
// formulation; building and loading the program are included.
func BenchmarkLPSolve(b *testing.B) {
	for _, name := range instances.Names() {
		if !strings.HasPrefix(name, "paper-s") {
			continue
		}
		w, err := instances.Load(name)
		if err != nil {
			b.Fatal(err)
		}
		p := solver.NewProblem(w, model.SelectJobs(w, 5).Multi)
		b.Run(strings.TrimSuffix(name, ".json"), func(b *testing.B) {
			var res *solver.Result
			for b.Loop() {
				res, err = Solver{}.Solve(context.Background(), p)
				if err != nil {
					b.Fatal(err)
				}
				if res.Status != solver.Optimal {
					b.Fatalf("status %v", res.Status)
				}
			}
			b.ReportMetric(float64(lpCount(lpStats(res.Stats).Iterations)), "iters/op")
			b.ReportMetric(float64(lpCount(lpStats(res.Stats).Nodes)), "nodes/op")
		})
	}
}

// lpCount is an lp_solve counter, -1 when lp_solve did not run.
func lpCount(c *int64) int64 {
	if c == nil {
		return -1
	}
	return *c
}

// lpStats are the LP counters of st, zero (status -1) when it has none.
func lpStats(st solver.Stats) solver.LPStats {
	if st.LP == nil {
		return solver.LPStats{Status: -1}
	}
	return *st.LP
}
