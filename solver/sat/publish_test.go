package sat_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/cpbnb"
	"github.com/optsched/optsched/solver/sat"
)

// recorder is a SchedulePublisher that keeps everything published to it,
// in order.
type recorder struct {
	mu     sync.Mutex
	objs   []float64
	allocs [][]model.Allocation
	bounds []float64
}

func (r *recorder) Offer(obj float64, _ string, allocs []model.Allocation, build func() []model.Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if allocs == nil {
		allocs = build()
	}
	r.objs = append(r.objs, obj)
	r.allocs = append(r.allocs, allocs)
}

func (r *recorder) Raise(bound float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bounds = append(r.bounds, bound)
}

// checkPublished holds what s published on w (through
// ScheduleProblem.Publisher) to its answer and to want, the brute-force
// optimum: an answer with a schedule was published (its objective is the
// last incumbent's); every incumbent passes model.Check, has the objective
// offered and is better than the one before; the bounds rise and stay at
// or below want, and reach the objective of an optimal answer. It returns
// the incumbents and bounds published.
func checkPublished(t *testing.T, i int, s solver.Scheduler, w *model.Window, g int64, want float64) (offers, bounds int) {
	t.Helper()
	rec := &recorder{}
	p := &solver.ScheduleProblem{Window: w, Granularity: g, Publisher: rec}
	sch, err := s.Solve(context.Background(), p)
	if err != nil {
		t.Fatalf("window %d, %s: %v", i, s.Name(), err)
	}
	if err := solver.Verify(w, p, sch); err != nil {
		t.Fatalf("window %d, %s: %v", i, s.Name(), err)
	}
	const eps = 1e-9
	for k, obj := range rec.objs {
		if err := model.Check(w, rec.allocs[k]); err != nil {
			t.Fatalf("window %d, %s: incumbent %d: %v", i, s.Name(), k, err)
		}
		if got := model.WeightedQueueTime(w, rec.allocs[k]); math.Abs(got-obj) > eps {
			t.Fatalf("window %d, %s: incumbent %d offered at %.9g, its objective is %.9g", i, s.Name(), k, obj, got)
		}
		if k > 0 && obj > rec.objs[k-1]+eps {
			t.Fatalf("window %d, %s: incumbent %d (%.9g) worse than the one before (%.9g)", i, s.Name(), k, obj, rec.objs[k-1])
		}
		if obj < want-eps {
			t.Fatalf("window %d, %s: incumbent %d (%.9g) below the brute-force optimum %.9g", i, s.Name(), k, obj, want)
		}
	}
	for k, b := range rec.bounds {
		if b > want+eps {
			t.Fatalf("window %d, %s: bound %d (%.9g) above the brute-force optimum %.9g", i, s.Name(), k, b, want)
		}
		if k > 0 && b < rec.bounds[k-1]-eps {
			t.Fatalf("window %d, %s: bound %d (%.9g) below the one before (%.9g)", i, s.Name(), k, b, rec.bounds[k-1])
		}
	}
	if len(sch.Allocations) == 0 {
		return len(rec.objs), len(rec.bounds)
	}
	if n := len(rec.objs); n == 0 || math.Abs(rec.objs[n-1]-sch.Objective) > eps {
		t.Fatalf("window %d, %s: %s answer %.9g, published incumbents %v", i, s.Name(), sch.Status, sch.Objective, rec.objs)
	}
	if sch.Status == solver.Optimal {
		if n := len(rec.bounds); n == 0 || math.Abs(rec.bounds[n-1]-sch.Objective) > eps {
			t.Fatalf("window %d, %s: optimal %.9g, published bounds %v", i, s.Name(), sch.Objective, rec.bounds)
		}
	}
	return len(rec.objs), len(rec.bounds)
}

// TestSchedulersPublish: on 80 seeded random small windows (the generator
// of TestSATEqualsBruteForce), sat (with and without list schedules, with
// the prover beside the last search and without) and bnb (with and
// without list schedules, and stopped after a few nodes) publish their
// incumbents and bounds to ScheduleProblem.Publisher as checkPublished
// says; some windows must see a second incumbent and some a
// second bound, so that the order checks bite.
func TestSchedulersPublish(t *testing.T) {
	defer sat.BoundsFromJobs(1)()
	rng := rand.New(rand.NewPCG(38, 2))
	const g = 10
	scheds := []solver.Scheduler{sat.Solver{Initial: listSchedulers()}, sat.Solver{}, sat.Solver{Initial: listSchedulers(), Sequential: true},
		cpbnb.Solver{Initial: listSchedulers()}, cpbnb.Solver{}, cpbnb.Solver{NodeLimit: 3}}
	// Per scheduler name: windows with two incumbents, with two bounds.
	twice := map[string][2]int{}
	for i := range 80 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), g)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := bruteForce(t, w)
		for _, s := range scheds {
			offers, bounds := checkPublished(t, i, s, w, g, want)
			c := twice[s.Name()]
			if offers > 1 {
				c[0]++
			}
			if bounds > 1 {
				c[1]++
			}
			twice[s.Name()] = c
		}
	}
	for _, name := range []string{"sat", "bnb"} {
		if c := twice[name]; c[0] == 0 || c[1] == 0 {
			t.Errorf("%s: windows with two incumbents published %d, with two bounds %d; want some of each", name, c[0], c[1])
		}
	}
	t.Logf("windows with two incumbents, two bounds published: %v", twice)
}

// forgetful runs bnb, publishes its schedule and its bound plus over
// (to its problem's publisher), and answers without them: status Unknown with
// drop, else the schedule with no bound; with partial, without its last
// job (deferred for time), as a truncated list schedule answers.
type forgetful struct {
	drop, partial bool
	over          float64
}

func (forgetful) Name() string { return "forgetful" }

func (f forgetful) Solve(ctx context.Context, p *solver.ScheduleProblem) (*solver.Schedule, error) {
	w := p.Window
	pub := p.Publish()
	q := *p
	q.Publisher = nil
	sch, err := cpbnb.Solver{}.Solve(ctx, &q)
	if err != nil || len(sch.Allocations) == 0 {
		return sch, err
	}
	pub.Offer(sch.Objective, f.Name(), sch.Allocations, nil)
	pub.Raise(sch.Bound + f.over)
	out := *sch
	out.Status, out.Bound = solver.Feasible, solver.NoBound
	if f.drop {
		out.Status, out.Allocations, out.Objective = solver.Unknown, nil, 0
	}
	if n := len(out.Allocations); f.partial && n > 0 {
		out.Deferred = append(slices.Clone(out.Deferred), model.Deferral{Job: out.Allocations[n-1].Job, Reason: "time", ForTime: true})
		out.Allocations = out.Allocations[:n-1]
		out.Objective = model.WeightedQueueTime(w, out.Allocations)
	}
	return &out, nil
}

// TestScheduleWindowTakesPublished: SolveWindow's answer (time-and-resource) carries what
// its scheduler published and did not answer — the incumbent of an
// Unknown answer, the bound of an answer without one — but not onto a
// partial answer (jobs deferred for time), and a published bound above
// the objective is a solver bug.
func TestScheduleWindowTakesPublished(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 3))
	const g = 10
	opt := solver.Options{Granularity: g}
	checked := 0
	for i := range 20 {
		w, err := instances.RandomCPWindow(rng, 1+rng.IntN(3), 1+rng.IntN(4), g)
		if err != nil {
			t.Fatal(err)
		}
		want, err := solver.SolveWindow(context.Background(), w, cpbnb.Solver{}, opt)
		if err != nil || want.Status != solver.Optimal || len(want.Allocations) == 0 {
			continue
		}
		checked++
		for _, drop := range []bool{true, false} {
			got, err := solver.SolveWindow(context.Background(), w, forgetful{drop: drop}, opt)
			if err != nil {
				t.Fatalf("window %d, drop %v: %v", i, drop, err)
			}
			if got.Status != solver.Feasible || got.Objective != want.Objective || got.Bound != want.Bound {
				t.Fatalf("window %d, drop %v: %s %.9g bound %.9g, published optimal %.9g", i, drop, got.Status, got.Objective, got.Bound, want.Objective)
			}
		}
		if _, err := solver.SolveWindow(context.Background(), w, forgetful{over: 1}, opt); !errors.Is(err, solver.ErrSolverBug) {
			t.Fatalf("window %d: a published bound above the objective gave %v, want a solver bug", i, err)
		}
		part, err := solver.SolveWindow(context.Background(), w, forgetful{partial: true, over: 1e6}, opt)
		if err != nil {
			t.Fatalf("window %d: a partial answer with a published bound above it: %v", i, err)
		}
		if part.HasBound() {
			t.Fatalf("window %d: a partial answer took the published bound %v", i, part.Bound)
		}
	}
	if checked < 10 {
		t.Errorf("only %d of 20 windows with a schedule proven optimal", checked)
	}
}
