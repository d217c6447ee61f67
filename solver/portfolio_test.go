package solver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// slow ignores its context and sleeps, like a cgo solver mid-solve.
type slow struct{ d time.Duration }

func (slow) Name() string { return "slow" }
func (s slow) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	time.Sleep(s.d)
	return &solver.Result{Status: solver.Unknown, Bound: solver.NoBound}, nil
}

// seqLike places the jobs along Q (a stand-in fallback without importing
// heuristics), recording whether it was warm-started.
type seqLike struct{ warm []model.Allocation }

func (seqLike) Name() string { return "seqlike" }
func (s seqLike) WithInitial(a []model.Allocation) solver.Solver {
	s.warm = a
	return s
}
func (s seqLike) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	w := p.Window
	if s.warm != nil {
		return &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Allocations: s.warm, Objective: solver.Objective(w, s.warm)}, nil
	}
	r := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound}
	pos := 0
	for _, j := range p.Jobs {
		n := w.Jobs[j].Nodes
		r.Allocations = append(r.Allocations, model.Allocation{Job: j, Nodes: append([]int(nil), w.Idle[pos:pos+n]...), Start: w.Time})
		pos += n
	}
	r.Objective = solver.Objective(w, r.Allocations)
	return r, nil
}

// TestPortfolioAbandonsLateSolver: an exact solver that ignores the
// deadline is abandoned, and the answer comes within 50 ms of the limit.
func TestPortfolioAbandonsLateSolver(t *testing.T) {
	w := load(t)
	for _, limit := range []time.Duration{time.Microsecond, 10 * time.Millisecond, 100 * time.Millisecond} {
		pf := solver.Portfolio{Exact: slow{2 * time.Second}, Fallback: seqLike{}}
		t0 := time.Now()
		res, err := solver.SolveWindow(context.Background(), w, pf, solver.Options{TimeLimit: limit})
		el := time.Since(t0)
		if err != nil {
			t.Fatal(err)
		}
		if el > limit+50*time.Millisecond {
			t.Errorf("limit %v: answered after %v", limit, el)
		}
		if res.Status != solver.Fallback || len(res.Allocations) != 3 || res.HasBound() {
			t.Errorf("limit %v: %v with %d allocations, bound %v", limit, res.Status, len(res.Allocations), res.Bound)
		}
	}
}

// TestPortfolioKeepsProof: an exact solver that proves optimality within
// its share is returned as is; one that stops with an incumbent and a
// bound hands the incumbent to the fallback (warm start) and its bound to
// the result.
func TestPortfolioKeepsProof(t *testing.T) {
	w := load(t)
	proof := fake{func(p *solver.Problem) (*solver.Result, error) {
		r := place(w, p, []int{4, 5}, []int{0, 1, 2})
		r.Status, r.Bound = solver.Optimal, float64(r.Objective)
		return r, nil
	}}
	res, err := solver.SolveWindow(context.Background(), w, solver.Portfolio{Exact: proof, Fallback: seqLike{}}, solver.Options{TimeLimit: time.Second})
	if err != nil || res.Status != solver.Optimal {
		t.Fatalf("proof lost: %v %v", res, err)
	}
	incumbent := fake{func(p *solver.Problem) (*solver.Result, error) {
		r := place(w, p, []int{4, 5}, []int{0, 1, 2})
		r.Bound = float64(r.Objective) - 100
		return r, nil
	}}
	res, err = solver.SolveWindow(context.Background(), w, solver.Portfolio{Exact: incumbent, Fallback: seqLike{}}, solver.Options{TimeLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The warm-started fallback returns the incumbent unchanged: the
	// answer is the exact solver's, with its status, not "fallback".
	if res.Status != solver.Feasible || !res.HasBound() || res.Bound != float64(res.Objective)-100 {
		t.Errorf("kept incumbent: %v objective %d bound %v", res.Status, res.Objective, res.Bound)
	}
	// The fallback was warm-started: it answered the incumbent's cost
	// (placed cold, along Q, it costs more).
	if res.Allocations[0].Nodes[0] != 4 || pstats(res.Stats).FallbackObjective == nil || *pstats(res.Stats).FallbackObjective != res.Objective {
		t.Errorf("fallback not warm-started: %+v, stats %+v", res.Allocations[0], res.Stats)
	}
	if g, ok := res.Gap(); !ok || g <= 0 {
		t.Errorf("gap %v %v", g, ok)
	}
}

// TestPortfolioWithoutFallback: with no fallback and a late solver the
// jobs are deferred, not dropped silently.
func TestPortfolioWithoutFallback(t *testing.T) {
	w := load(t)
	res, err := solver.SolveWindow(context.Background(), w, solver.Portfolio{Exact: slow{time.Second}}, solver.Options{TimeLimit: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Unknown || len(res.Deferred) != 3 {
		t.Errorf("status %v, deferred %d", res.Status, len(res.Deferred))
	}
}

// fixed is a fallback that answers a fixed placement.
type fixed struct{ nodes [][]int }

func (fixed) Name() string { return "fixed" }
func (f fixed) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	return place(p.Window, p, f.nodes...), nil
}

// TestPortfolioDropsBeatenBound: a fallback answer below the exact
// solver's bound (possible when the fallback searches a wider space) must
// not be reported with that bound, nor with a bound clamped to itself.
func TestPortfolioDropsBeatenBound(t *testing.T) {
	w := load(t)
	exact := fake{func(p *solver.Problem) (*solver.Result, error) {
		r := place(w, p, []int{3, 4}, []int{0, 1, 2}) // b across leaves
		r.Bound = float64(r.Objective) - 500
		return r, nil
	}}
	fb := fixed{[][]int{{4, 5}, {0, 1, 2}}} // 1000 cheaper than exact's answer
	res, err := solver.SolveWindow(context.Background(), w, solver.Portfolio{Exact: exact, Fallback: fb}, solver.Options{TimeLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != solver.Fallback || res.HasBound() || !pstats(res.Stats).FallbackBelowExactBound {
		t.Errorf("status %v objective %d bound %v stats %+v", res.Status, res.Objective, res.Bound, res.Stats)
	}
}

// publisher publishes an incumbent and a bound to the problem's
// publisher, then ignores the deadline like a cgo solver mid-solve.
type publisher struct {
	w     *model.Window
	nodes [][]int
	gap   float64
}

func (publisher) Name() string { return "publisher" }
func (s publisher) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	r := place(s.w, p, s.nodes...)
	b := p.Publish()
	b.Offer(r.Objective+7, "publisher", r.Allocations, nil) // a worse one first
	b.Offer(r.Objective, "publisher", r.Allocations, nil)
	b.Raise(float64(r.Objective) - s.gap)
	b.Raise(float64(r.Objective) - 2*s.gap) // lower: ignored
	time.Sleep(2 * time.Second)
	return &solver.Result{Status: solver.Unknown, Bound: solver.NoBound}, nil
}

// TestPortfolioKeepsAbandonedIncumbent: an exact solver abandoned at the
// deadline keeps what it published — the incumbent beats a worse fallback
// and its bound stands — with a fallback and without one.
func TestPortfolioKeepsAbandonedIncumbent(t *testing.T) {
	w := load(t)
	exact := publisher{w: w, nodes: [][]int{{4, 5}, {0, 1, 2}}, gap: 100}
	want := place(w, solver.NewProblem(w, []int{1, 0}), exact.nodes...).Objective
	worse := fixed{[][]int{{3, 4}, {0, 1, 2}}}
	for _, pf := range []solver.Portfolio{{Exact: exact, Fallback: worse}, {Exact: exact}} {
		res, err := solver.SolveWindow(context.Background(), w, pf, solver.Options{TimeLimit: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != solver.Feasible || res.Objective != want || res.Bound != float64(want)-100 ||
			!pstats(res.Stats).ExactAbandoned {
			t.Errorf("%s: %v objective %d (published %d) bound %v stats %+v", pf.Name(), res.Status, res.Objective, want, res.Bound, res.Stats)
		}
	}
}

// TestBoard: offers keep the best incumbent (copied), raises the highest
// bound, and a nil board ignores both.
func TestBoard(t *testing.T) {
	var nilBoard *solver.Board
	nilBoard.Offer(1, "x", []model.Allocation{{Job: 0}}, nil)
	nilBoard.Raise(3)
	if _, _, b, ok := nilBoard.Best(); ok || !math.IsNaN(b) {
		t.Errorf("nil board: ok %v bound %v", ok, b)
	}
	b := solver.NewBoard()
	if _, _, bound, ok := b.Best(); ok || !math.IsNaN(bound) {
		t.Errorf("empty board: ok %v bound %v", ok, bound)
	}
	a := []model.Allocation{{Job: 0, Nodes: []int{1, 2}}}
	b.Offer(10, "x", a, nil)
	a[0].Nodes[0] = 9 // the board holds a copy
	built := 0
	b.Offer(12, "x", nil, func() []model.Allocation { built++; return a })
	b.Offer(8, "x", nil, func() []model.Allocation { built++; return []model.Allocation{{Job: 0, Nodes: []int{3, 4}}} })
	b.Raise(5)
	b.Raise(4)
	got, obj, bound, ok := b.Best()
	if !ok || obj != 8 || bound != 5 || got[0].Nodes[0] != 3 || built != 1 {
		t.Errorf("best %v %d %v %v, built %d", got, obj, bound, ok, built)
	}
}

// secondTime is an exact solver that gives up at its first call (as when
// its share of a tiny budget is spent) and proves the optimum (its
// fallback's placement, priced) at the second; it records the time left
// to its deadline at each call.
type secondTime struct {
	calls *int
	left  *[]time.Duration
}

func (secondTime) Name() string { return "second" }
func (s secondTime) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	*s.calls++
	dl, _ := ctx.Deadline()
	*s.left = append(*s.left, time.Until(dl))
	if *s.calls == 1 {
		return &solver.Result{Status: solver.Unknown, Bound: solver.NoBound}, nil
	}
	r, _ := seqLike{}.Solve(ctx, p)
	r.Status, r.Bound = solver.Optimal, float64(r.Objective)
	return r, nil
}

// TestPortfolioUsesTimeLeft: the time the fallback leaves goes to the
// exact solver again, whose proof is then the answer (issue 36: at 1 ms
// the answer was Seq's after 0.17 ms); and a minimum reserve larger than
// the budget takes half of it, not all.
func TestPortfolioUsesTimeLeft(t *testing.T) {
	w := load(t)
	calls, left := 0, []time.Duration{}
	pf := solver.Portfolio{Exact: secondTime{&calls, &left}, Fallback: seqLike{}, MinReserve: time.Hour}
	res, err := solver.SolveWindow(context.Background(), w, pf, solver.Options{TimeLimit: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || res.Status != solver.Optimal || !pstats(res.Stats).ExactRerun {
		t.Fatalf("%d calls, status %v, stats %v; want the second call's proof", calls, res.Status, res.Stats)
	}
	// A 1 h minimum reserve on a 20 s budget: the first share is about
	// half of it (10 s), not nothing.
	if left[0] < 5*time.Second || left[0] > 11*time.Second {
		t.Errorf("first share %v, want about half of 20 s", left[0])
	}
}

// refuses is an exact solver that refuses every problem as too large.
type refuses struct{}

func (refuses) Name() string { return "refuses" }
func (refuses) Solve(context.Context, *solver.Problem) (*solver.Result, error) {
	return nil, fmt.Errorf("refuses: %w", solver.ErrTooLarge)
}

// TestPortfolioTooLarge: an exact solver that refuses the problem as too
// large gives way to the fallback, marked exact_too_large; without a
// fallback the refusal is the error.
func TestPortfolioTooLarge(t *testing.T) {
	w := load(t)
	res, err := solver.SolveWindow(context.Background(), w, solver.Portfolio{Exact: refuses{}, Fallback: seqLike{}}, solver.Options{TimeLimit: time.Second})
	if err != nil || res.Status != solver.Fallback || !pstats(res.Stats).ExactTooLarge {
		t.Fatalf("with a fallback: %v, %+v", err, res)
	}
	if _, err := solver.SolveWindow(context.Background(), w, solver.Portfolio{Exact: refuses{}}, solver.Options{TimeLimit: time.Second}); !errors.Is(err, solver.ErrTooLarge) {
		t.Errorf("without a fallback: %v", err)
	}
}

// counted counts the calls of a fallback.
type counted struct {
	seqLike
	calls *int
}

func (c counted) WithInitial(a []model.Allocation) solver.Solver {
	return counted{c.seqLike.WithInitial(a).(seqLike), c.calls}
}
func (c counted) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	*c.calls++
	return c.seqLike.Solve(ctx, p)
}

// TestPortfolioNoTimeLeft: with the exact solver's share spent before
// Solve begins, the exact solver is not started beside the fallback, and
// the fallback answers; with an incumbent from the exact solver and the
// deadline past when it returns, the fallback is not run and the
// incumbent stands.
func TestPortfolioNoTimeLeft(t *testing.T) {
	w := load(t)
	var exact, fallback int
	ex := fake{func(p *solver.Problem) (*solver.Result, error) {
		exact++
		return place(w, p, []int{4, 5}, []int{0, 1, 2}), nil
	}}
	p := solver.NewProblem(w, []int{0, 1})
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	res, err := solver.Portfolio{Exact: ex, Fallback: counted{calls: &fallback}}.Solve(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if exact != 0 || fallback != 1 || res.Status != solver.Fallback || !pstats(res.Stats).ExactNotStarted || len(res.Allocations) != 2 {
		t.Errorf("spent share: exact %d calls, fallback %d, %s, stats %+v", exact, fallback, res.Status, res.Stats)
	}

	exact, fallback = 0, 0
	late := lateFake{func(p *solver.Problem) *solver.Result { exact++; return place(w, p, []int{4, 5}, []int{0, 1, 2}) }}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err = solver.Portfolio{Exact: late, Fallback: counted{calls: &fallback}, Grace: time.Minute}.Solve(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if exact != 1 || fallback != 0 || res.Status != solver.Feasible || res.Solver != "fake+seqlike" || len(res.Allocations) != 2 {
		t.Errorf("incumbent at the deadline: exact %d calls, fallback %d, %s by %s", exact, fallback, res.Status, res.Solver)
	}
}

// lateFake returns its answer once the whole deadline (not only its
// share) has passed.
type lateFake struct {
	solve func(p *solver.Problem) *solver.Result
}

func (lateFake) Name() string { return "fake" }
func (f lateFake) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	<-ctx.Done()
	time.Sleep(30 * time.Millisecond)
	return f.solve(p), nil
}

// pstats returns the portfolio's counters of st (zero when it has none).
func pstats(st solver.Stats) solver.PortfolioStats {
	if st.Portfolio == nil {
		return solver.PortfolioStats{}
	}
	return *st.Portfolio
}

// TestPortfolioStatsAndPublisher: a portfolio's answer carries its own
// counters beside the exact solver's and the fallback's, and what the
// exact solver publishes reaches the caller's publisher too (through the
// portfolio's board).
func TestPortfolioStatsAndPublisher(t *testing.T) {
	w := load(t)
	exact := fake{func(p *solver.Problem) (*solver.Result, error) {
		r := place(w, p, []int{3, 4}, []int{0, 1, 2})
		r.Bound = float64(r.Objective) - 100
		p.Publish().Offer(r.Objective, "fake", r.Allocations, nil)
		p.Publish().Raise(r.Bound)
		r.Stats.Brute = &solver.BruteStats{Steps: 7}
		return r, nil
	}}
	fallback := fake{func(p *solver.Problem) (*solver.Result, error) {
		r := place(w, p, []int{4, 5}, []int{0, 1, 2})
		r.Stats.Anneal = &solver.AnnealStats{Steps: 3}
		return r, nil
	}}
	outer := solver.NewBoard()
	p := solver.NewProblem(w, []int{1, 0})
	p.Publisher = outer
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := solver.Portfolio{Exact: exact, Fallback: fallback}.Solve(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	ps := pstats(res.Stats)
	if res.Stats.Brute == nil || res.Stats.Brute.Steps != 7 || res.Stats.Anneal == nil || res.Stats.Anneal.Steps != 3 ||
		ps.ExactObjective == nil || ps.FallbackObjective == nil || *ps.FallbackObjective != res.Objective {
		t.Errorf("stats %+v, portfolio %+v", res.Stats, ps)
	}
	_, obj, bound, ok := outer.Best()
	want := place(w, p, []int{3, 4}, []int{0, 1, 2}).Objective
	if !ok || obj != want || bound != float64(want)-100 {
		t.Errorf("the caller's publisher: %v objective %d bound %v, want %d and %d", ok, obj, bound, want, want-100)
	}
}
