package sat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Solver is the CP/SAT scheduler (see the package doc). Its fields are
// its options; Ablation holds the switches that turn parts of the search
// off for measurements and tests. The zero Solver is the full search with
// no list schedulers, no progress lines and Eq. (2) alone as the
// objective.
type Solver struct {
	// Initial are list schedulers whose schedules give the first
	// incumbent (heuristics.PBSWalltime, heuristics.PBSFifo); they run on
	// the same grid and within the same deadline. None: the search starts
	// from the serial horizon alone.
	Initial []solver.Scheduler
	// Progress, when set, receives incumbents and bounds as they improve.
	Progress io.Writer
	// CHWeight, when positive, adds CHWeight times the CH cost of every
	// job's node set (model.CostModel.Cost) to Eq. (2) as the objective
	// (cp.Model.SetCHWeight, cnf.Encoder.CHTerm).
	CHWeight float64
	// Grid keeps every slot of the grid in the start domains instead of
	// the compressed time domain (cnf.Closure: the window time, the
	// running jobs' and reservations' ends and the sums of durations).
	Grid bool
	// LNS adds large-neighbourhood moves that try to improve a resisting
	// incumbent (step 4 of the package comment). They are off by default
	// for Eq. (2) alone: on optsched bench cp's default corpus (90 windows
	// of 7–14 jobs, 1 s) they improved the incumbent on 19 windows but
	// took the time of more proofs (without them: proven 22 → 33, above 1 %
	// 59 → 45) and changed nothing on 15–30-job windows. With CHWeight > 0
	// they always run (not measured without).
	LNS bool
	// Sequential keeps the last search on one goroutine. Otherwise, when
	// GOMAXPROCS allows two, a second search on its own SAT solver
	// probes from below only (exact bounds b = proven + step − 1), while
	// the first probes from above and improves the incumbent; they share
	// the incumbent and the proven bound as either improves them.
	Sequential bool
	// Ablation turns parts of the search off (the zero value: none).
	Ablation Ablation

	// post publishes the whole window's incumbents and bounds (set by
	// schedule when the options have a publisher; nil otherwise, and in
	// a sub-search).
	post *poster
}

// Ablation switches parts of Solver's search off, or to a simpler
// variant, to measure what each gives (the package's tests compare every
// switch against brute force). The zero value is the full search.
type Ablation struct {
	// Eager writes every cumulative/noOverlap node block up front instead
	// of on demand (the same CNF as `optsched export --format cnf`).
	Eager bool
	// NoSGS skips the serial schedules (highest weight first, and
	// perturbations) that join the Initial schedulers' first incumbent
	// when there are Initial schedulers, and those around the incumbent
	// between probes.
	NoSGS bool
	// NoTimeIndexed skips the time-indexed relaxation (timeIndexed, its
	// Lagrangian bound) that otherwise bounds the search from below
	// before the pool and group bounds.
	NoTimeIndexed bool
	// NoFixing keeps in the last search the start candidates that the
	// time-indexed relaxation's reduced costs rule out (timeIndexed.bound:
	// no schedule better than the incumbent starts a job there).
	NoFixing bool
	// NoPool skips the counting relaxation (cp.Model.Pool) whose optimum
	// otherwise bounds the search from below (windows of up to
	// poolMaxJobs jobs).
	NoPool bool
	// NoGroups skips the group bounds (see groupBounds) that otherwise
	// start the proof.
	NoGroups bool
	// NoDominance leaves out the clauses that restrict the search to
	// left-justified schedules (cnf.Encoder.LeftJustified).
	NoDominance bool
	// NoPoolCuts leaves out the counting relaxation's constraints
	// (cnf.Encoder.PoolCuts, the poolResources most contended pooled
	// resources) that the last search — after the pool and group bounds —
	// otherwise adds as redundant clauses.
	NoPoolCuts bool
}

var _ solver.Scheduler = Solver{}

// Name returns "sat".
func (Solver) Name() string { return "sat" }

// The phases' parameters; their time is in plan.
const (
	// poolResources is the resources the counting relaxation keeps.
	poolResources = 3
	// tiIters bounds the time-indexed relaxation's subgradient iterations
	// and tiMaxStarts the start candidates it takes on (its work per
	// iteration grows with them).
	tiIters     = 3000
	tiMaxStarts = 80_000
	// tiMaxJobs: beyond it the relaxation is not tried. With the slower
	// subgradient, at most 20,000 starts and the pool and groups beside
	// it, it was kept to 14 jobs (on simulated 15–26-job windows its
	// share cost more than its bound gave: median gap 31.5 → 34.6 %).
	// With the faster one, 80,000 starts and it alone, on 65 such
	// windows at 1 s: mean gap 29.4 → 19.9 %, better on 50, worse on 13
	// (bench cp's default corpus: proven 35 → 36, above 1 % 40 → 38;
	// the 20- and 30-job Eurora benchmark: 0 above 1 % either way).
	tiMaxJobs = 26
	// closureWork bounds the work of cnf.Closure; beyond it the search
	// keeps the grid (stats "closure_fallback").
	closureWork = 4_000_000
	// poolMaxJobs: beyond it the pool's capacity diagrams, over all jobs
	// on its one node, take longer than its share (measured on 30-job
	// Eurora windows: four times over, with no bound).
	poolMaxJobs = 24
	// sgsTries bounds the perturbed serial schedules.
	sgsTries = 2000
)

// boundsMinJobs: windows of at most this many jobs get no pool and group
// bounds (one job has none to get). Tests change it.
var boundsMinJobs = 1

// incumbent is a schedule in model terms.
type incumbent struct {
	slots []int
	units [][]int // per job, per option
	w     int64   // Σ ω_i s_i
	from  string  // the scheduler that found it
}

// Solve schedules every waiting job of w that can ever start. Its
// counters are the answer's Stats.SAT.
func (s Solver) Solve(ctx context.Context, p *solver.ScheduleProblem) (*solver.Schedule, error) {
	st := &solver.SATStats{}
	out, err := s.schedule(ctx, p, st)
	if out != nil {
		out.Stats.SAT = st
	}
	return out, err
}

// schedule is Solve, counting in st.
func (s Solver) schedule(ctx context.Context, p *solver.ScheduleProblem, st *solver.SATStats) (*solver.Schedule, error) {
	w := p.Window
	start := time.Now()
	if dl, ok := ctx.Deadline(); ok {
		if n := cp.Options(w); !cp.Fits(n, time.Until(dl)) {
			return s.listOnly(ctx, p, n, start, st)
		}
	}
	m, err := cp.BuildContext(ctx, w, p.Grid())
	if ctx.Err() != nil && err != nil {
		// Out of time while building the model: the list schedules
		// answer on the window itself.
		st.BuildInterrupted = true
		return s.listOnly(ctx, p, cp.Options(w), start, st)
	}
	if err != nil {
		return nil, err
	}
	if err := m.SetCHWeight(s.CHWeight); err != nil {
		return nil, err
	}
	out := &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: s.Name(),
		Deferred: slices.Clone(m.Deferred), CHWeight: m.CHWeight}
	if len(m.Jobs) == 0 {
		out.Status, out.Bound = solver.Optimal, 0
		return out, nil
	}
	lb := LowerBound(m)

	// The first incumbent: the best list schedule.
	best, from, ok, err := solver.BestInitial(ctx, p, s.Initial, func(sch *solver.Schedule) (*incumbent, int64, error) {
		inc, err := fromSchedule(m, sch)
		if err != nil {
			return nil, 0, err
		}
		return inc, inc.w, nil
	})
	if err != nil {
		return nil, err
	}
	if ok {
		best.from = from
	} else if len(s.Initial) > 0 && ctx.Err() != nil {
		// The list schedules ran out of time: a truncated one answers.
		return s.listOnly(ctx, p, cp.Options(w), start, st)
	}
	// Then the phases of plan, in its time, publishing as they improve
	// (not before: a truncated list schedule answers some jobs only).
	if p.Publisher != nil {
		s.post = &poster{pub: p.Publisher, m: m, w: math.MaxInt64, lb: -1}
	}
	s.post.publish(nil, lb)
	sc := &scheduling{s: s, m: m, lb: lb, start: start, st: st, best: best}
	return sc.walk(ctx, out)
}

// listOnly is Solve for a window too large to model in the time left:
// the best schedule of the Initial list schedulers, run on the window
// itself (status fallback, no bound), or Unknown when there are none or
// none finished. Stats.SAT.ModelOptions holds the options not modelled.
func (s Solver) listOnly(ctx context.Context, p *solver.ScheduleProblem, options int, start time.Time, st *solver.SATStats) (*solver.Schedule, error) {
	w := p.Window
	switch W := s.CHWeight; {
	case math.IsNaN(W) || math.IsInf(W, 0) || W < 0:
		return nil, fmt.Errorf("sat: CH weight must be a finite number at least 0, got %v", W)
	case W > 0 && w.Topology == nil:
		return nil, errors.New("sat: the CH term needs the window's topology, and the window has none")
	}
	out := &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: s.Name()}
	st.ModelOptions = options
	best, bestObj, truncated, err := solver.BestListSchedule(ctx, p, s.Initial, func(sch *solver.Schedule) float64 {
		obj := model.WeightedQueueTime(w, sch.Allocations)
		if s.CHWeight > 0 {
			obj += s.CHWeight * float64(solver.Objective(w, sch.Allocations))
		}
		return obj
	})
	if err != nil {
		return nil, err
	}
	if truncated {
		st.TruncatedList = true
	}
	if best == nil && len(s.Initial) == 0 {
		out.Why = fmt.Sprintf("its model of this window (%d job-node options) cannot be built in the time left, and no list schedule was asked for", options)
	}
	if best != nil {
		out.Status, out.Allocations, out.Deferred, out.Objective = solver.Fallback, best.Allocations, best.Deferred, bestObj
		if s.CHWeight > 0 {
			out.CHWeight = s.CHWeight
		}
	}
	st.ElapsedMS = ms(time.Since(start))
	return out, nil
}

// sub returns the solver of a sub-search — a group's bound, the counting
// relaxation: the caller's encoding switches (Grid, Ablation.Eager,
// Ablation.NoDominance) and none of its other options: no Initial
// schedulers (so no serial schedules between probes), no neighbourhood
// moves, no progress lines, which belong to the whole window.
func (s Solver) sub() Solver {
	return Solver{Grid: s.Grid, Ablation: Ablation{Eager: s.Ablation.Eager, NoDominance: s.Ablation.NoDominance}}
}

// result fills out from the incumbent.
func (s Solver) result(m *cp.Model, out *solver.Schedule, best *incumbent, proven bool, lb int64, start time.Time, st *solver.SATStats) *solver.Schedule {
	s.post.publish(best, min(lb, best.w))
	out.Allocations = m.Allocations(best.slots, best.units)
	out.Objective = objective(m, out.Allocations)
	switch {
	case proven && m.ExactWeights:
		out.Status, out.Bound = solver.Optimal, out.Objective
	case best.from == s.Name():
		out.Status = solver.Feasible
	default:
		out.Status = solver.Fallback
	}
	if !proven && m.ExactWeights {
		out.Bound = min(out.Objective, m.ObjectiveOfWeighted(float64(lb)))
	}
	if proven && !m.ExactWeights {
		out.Status = solver.Feasible // optimal for rounded weights only
	}
	st.IncumbentFromSAT = best.from == s.Name()
	st.ElapsedMS = ms(time.Since(start))
	return out
}

// objective returns the objective of allocs, schedules of m's window:
// Eq. (2), plus the CH term when m has one.
func objective(m *cp.Model, allocs []model.Allocation) float64 {
	obj := model.WeightedQueueTime(m.Window, allocs)
	if m.CHWeight > 0 {
		obj += m.CHWeight * float64(solver.Objective(m.Window, allocs))
	}
	return obj
}

// poster publishes the whole window's incumbents and proven bounds to the
// publisher of its problem (solver.ScheduleProblem.Publisher),
// each when it improves on the last it published; the two workers of the
// last search share it. Bounds are published with exact weights only
// (see cp.Model.ExactWeights). The methods of a nil *poster do nothing.
type poster struct {
	pub solver.SchedulePublisher
	m   *cp.Model
	mu  sync.Mutex
	w   int64 // the last incumbent's Σ ω_i s_i (math.MaxInt64: none)
	lb  int64 // the last bound on it (−1: none)
}

// publish publishes best (nil: none) and lb, a proven lower bound on
// Σ ω_i s_i, when they improve on the last.
func (p *poster) publish(best *incumbent, lb int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if best != nil && best.w < p.w {
		p.w = best.w
		allocs := p.m.Allocations(best.slots, best.units)
		from := best.from
		if from == "" {
			from = "sat"
		}
		p.pub.Offer(objective(p.m, allocs), from, allocs, nil)
	}
	if p.m.ExactWeights && lb > p.lb {
		p.lb = lb
		p.pub.Raise(p.m.ObjectiveOfWeighted(float64(lb)))
	}
}

func (s Solver) progress(m *cp.Model, start time.Time, from string, w, lb int64) {
	if s.Progress == nil {
		return
	}
	obj, bound := math.NaN(), math.NaN()
	if m.ExactWeights {
		obj, bound = m.ObjectiveOfWeighted(float64(w)), m.ObjectiveOfWeighted(float64(lb))
	}
	fmt.Fprintf(s.Progress, "sat: %8.3f ms  incumbent %.6g (%s)  bound %.6g\n",
		float64(time.Since(start).Microseconds())/1000, obj, from, bound)
}

// fromSchedule reads a scheduler's schedule of w as slots and units per
// option of m's jobs (cp.Model.Encode).
func fromSchedule(m *cp.Model, sch *solver.Schedule) (*incumbent, error) {
	slots, units, err := m.Encode(sch.Allocations)
	if err != nil {
		return nil, err
	}
	return &incumbent{slots: slots, units: units, w: m.Total(slots, units)}, nil
}
