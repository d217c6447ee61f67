package sat

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/solver"
)

// phase is a step of Solve's time plan: its name, its part of the time
// left when it begins — share percent, at least floor and at most ceiling
// (0: none) — and what it does. run gets Solve's context (whole) and
// the phase's part of it (ctx), and reports whether Solve has its
// answer: the incumbent proven optimal, or the time up.
type phase struct {
	name           string
	share          int64
	floor, ceiling time.Duration
	run            func(sc *scheduling, whole, ctx context.Context) (done bool, err error)
}

// plan is how Solve spends its time limit, after the model is built
// and the Initial list schedulers have run under the whole deadline (they
// are fast, and a truncated list schedule answers when they are not).
// Solve walks the phases in order. Each gets share percent of the
// time left when it begins, at least floor and at most ceiling, never
// past Solve's own deadline; a phase that does not apply (see its run
// method), or ends early, leaves its time to the phases after it; the
// last search takes all that is left. Without a deadline no phase is
// cut. Within a phase, the group bounds split their time by partition
// and group (Solver.groupBounds) and the searches theirs into probe
// slices (searcher).
//
// For a 1 s limit with the list schedules taking nothing and every phase
// using all of its part: serial schedules 100 ms (10 %, at most 150 ms),
// quick search 45 ms (5 % of the 900 ms left, at least 20 ms), then
// either the time-indexed relaxation 257 ms and the last search the 598
// ms left (the relaxation's fixing skips the counting relaxation and the
// group bounds), or — windows of more than tiMaxJobs jobs — the counting
// relaxation 128 ms, the group bounds 254 ms and the last search 472 ms.
// Below about 22 ms, the quick search's floor leaves the phases after
// it nothing: the quick search is then the search.
var plan = [...]phase{
	{"serial schedules", 10, 0, 150 * time.Millisecond, (*scheduling).runSerial},
	{"quick search", 5, 20 * time.Millisecond, 0, (*scheduling).runQuick},
	// A window whose time-indexed relaxation ran skips the counting
	// relaxation and the group bounds: the relaxation's bound was the
	// larger on those windows, and the last search in the fixed domains
	// uses their time better. Measured with the faster subgradient, on
	// bench cp's default corpus (90 windows of 7–14 jobs, 1 s), against
	// all three bounds with a 20 % share: proven 36 → 35, within 1 % of
	// the own bound 44 → 51 (at 10–14 jobs 6 → 12 of 32), mean gap 2.67
	// → 2.50 %; with a 20 % share 37 and 48, with 40 % 34 and 50. (Before
	// it, with the slower subgradient, the groups halved the mean gap at
	// 13–14 jobs and stayed above 9 jobs.)
	{"time-indexed relaxation", 30, 0, 0, (*scheduling).runTimeIndexed},
	{"counting relaxation", 15, 0, 0, (*scheduling).runPool},
	{"group bounds", 35, 0, 0, (*scheduling).runGroups},
	{"last search", 100, 0, 0, (*scheduling).runLast},
}

// part returns the phase's part of left, the time left when it begins.
func (ph *phase) part(left time.Duration) time.Duration {
	d := left * time.Duration(ph.share) / 100
	if ph.floor > 0 {
		d = max(d, ph.floor)
	}
	if ph.ceiling > 0 {
		d = min(d, ph.ceiling)
	}
	return d
}

// budget returns ctx with its deadline cut to the phase's part of the
// time it has left: ctx itself, with a no-op cancel, when it has no
// deadline or the part is all of it.
func (ph *phase) budget(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok || ph.share >= 100 && ph.ceiling == 0 {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, time.Now().Add(ph.part(time.Until(dl))))
}

// scheduling is one Solve call from its first incumbent on: what the
// phases of plan read and write.
type scheduling struct {
	s     Solver
	m     *cp.Model
	lb    int64 // LowerBound(m)
	start time.Time
	st    *solver.SATStats

	// The incumbent (nil: none) and a proven bound on optimum − LB.
	best   *incumbent
	proven int64
	// bounds: the window gets the quick search and the bounds' phases.
	bounds bool
	// The bounds' phases' results: the time-indexed relaxation's bound
	// and fixing, the counting relaxation's bound, the group bounds.
	ti, pooled int64
	fix        *fixing
	groups     *groupBounds
}

// walk runs the phases of plan and returns the answer.
func (sc *scheduling) walk(ctx context.Context, out *solver.Schedule) (*solver.Schedule, error) {
	for _, ph := range plan {
		pctx, cancel := ph.budget(ctx)
		done, err := ph.run(sc, ctx, pctx)
		cancel()
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	if sc.best == nil {
		out.Why = sc.why()
		return out, nil
	}
	return sc.s.result(sc.m, out, sc.best, sc.optimal(), sc.lb+sc.proven, sc.start, sc.st), nil
}

// why says why the walk ended with no schedule (no list schedule was
// asked for, and no search found one): the searches' own reasons, from
// their counters — an encoding too large for the memory bound or for the
// time left, one the deadline stopped — or that none found one in time.
func (sc *scheduling) why() string {
	st, p := sc.st.Search, sc.st.Prover
	if p.EncodingSkippedVars > st.EncodingSkippedVars {
		st.EncodingSkippedVars, st.EncodingSkippedLeftMS = p.EncodingSkippedVars, p.EncodingSkippedLeftMS
	}
	st.EncodingSkipped += p.EncodingSkipped
	st.EncodingInterrupted += p.EncodingInterrupted
	left := "the time limit"
	if st.EncodingSkippedLeftMS >= 0 {
		left = fmt.Sprintf("the %.0f ms its phase had left", math.Floor(st.EncodingSkippedLeftMS))
	}
	switch v := st.EncodingSkippedVars; {
	case st.EncodingSkipped > 0 && v > maxEncodeVars:
		return fmt.Sprintf("its SAT encoding of this window needs %d variables, above the memory bound of %d: no search was started, and no list schedule was asked for (drop --fallback none)", v, maxEncodeVars)
	case st.EncodingSkipped > 0:
		return fmt.Sprintf("its SAT encoding of this window (%d variables, about %d ms to write at %d variables/s) cannot be written in %s: no search was started, and no list schedule was asked for (give a longer --time-limit, or drop --fallback none)",
			v, int64(math.Ceil(float64(v)/encodeRate*1000)), encodeRate, left)
	case st.EncodingInterrupted > 0:
		return "the time limit ended while its SAT encoding was being written, and no list schedule was asked for (give a longer --time-limit, or drop --fallback none)"
	}
	return "its searches found no schedule within the time limit, and no list schedule was asked for (give a longer --time-limit, or drop --fallback none)"
}

// optimal reports whether the incumbent is proven optimal.
func (sc *scheduling) optimal() bool { return sc.proven >= sc.best.w-sc.lb }

// progress writes a progress line for the incumbent and the proven bound.
// It publishes them too (poster).
func (sc *scheduling) progress(from string) {
	sc.s.post.publish(sc.best, sc.lb+sc.proven)
	sc.s.progress(sc.m, sc.start, from, sc.best.w, sc.lb+sc.proven)
}

// runSerial adds serial schedules with weight-aware priorities to the
// list schedules' first incumbent (when there are list schedulers), and
// ends Solve when the incumbent is at the lower bound.
func (sc *scheduling) runSerial(_, ctx context.Context) (bool, error) {
	s, m := sc.s, sc.m
	if len(s.Initial) > 0 && !s.Ablation.NoSGS {
		inc := sgsIncumbent(ctx, m, sgsTries, rand.New(rand.NewPCG(uint64(len(m.Jobs)), 0x565)))
		if inc != nil && (sc.best == nil || inc.w < sc.best.w) {
			sc.best = inc
			sc.st.IncumbentFromSGS = true
		}
	}
	if sc.best == nil {
		return false, nil
	}
	sc.progress("initial " + sc.best.from)
	sc.bounds = len(m.Jobs) > boundsMinJobs && (!s.Ablation.NoPool || !s.Ablation.NoGroups)
	return sc.optimal(), nil
}

// runQuick is a first, short search, with a deadline and where the bounds
// apply: many windows are proven in milliseconds without them.
func (sc *scheduling) runQuick(whole, ctx context.Context) (bool, error) {
	if _, ok := whole.Deadline(); !ok || !sc.bounds {
		return false, nil
	}
	best, proven, err := sc.s.search(ctx, sc.m, sc.best, 0, nil, &sc.st.Search, sc.start)
	if err != nil {
		return false, err
	}
	sc.best, sc.proven = best, proven
	if sc.optimal() || whole.Err() != nil {
		return true, nil
	}
	sc.st.QuickMS = ms(time.Since(sc.start))
	return false, nil
}

// runTimeIndexed computes the time-indexed relaxation's Lagrangian bound
// and its reduced-cost fixing, on windows of at most tiMaxJobs jobs.
func (sc *scheduling) runTimeIndexed(_, ctx context.Context) (bool, error) {
	if !sc.bounds || sc.s.Ablation.NoTimeIndexed || len(sc.m.Jobs) > tiMaxJobs {
		return false, nil
	}
	te := time.Now()
	ti, fix, err := sc.s.timeIndexedBound(ctx, sc.m, sc.best, sc.st)
	if err != nil {
		return false, err
	}
	sc.ti, sc.fix = ti, fix
	sc.st.TIMS, sc.st.TIProvenDelta = ms(time.Since(te)), ti
	if ti > sc.proven {
		sc.proven = ti
		sc.progress("time-indexed relaxation")
	}
	return sc.optimal(), nil
}

// runPool computes the counting relaxation's optimum (cp.Model.Pool), a
// bound, on windows of at most poolMaxJobs jobs whose time-indexed
// relaxation did not run.
func (sc *scheduling) runPool(_, ctx context.Context) (bool, error) {
	s, m, best := sc.s, sc.m, sc.best
	if !sc.bounds || s.Ablation.NoPool || len(m.Jobs) > poolMaxJobs || sc.fix != nil {
		return false, nil
	}
	te := time.Now()
	pm := m.Pool(poolResources)
	pinc := &incumbent{slots: best.slots, units: make([][]int, len(m.Jobs)), w: m.Weighted(best.slots), from: best.from}
	for i, j := range m.Jobs {
		pinc.units[i] = []int{j.Units}
	}
	_, pp, err := s.sub().newSearcher(pm, role{pooled: true}, &solver.SATSearchStats{}, sc.start).run(ctx, pinc, 0, nil)
	if err != nil {
		return false, fmt.Errorf("counting relaxation: %w", err)
	}
	sc.pooled = pp
	sc.st.PoolMS, sc.st.PoolProvenDelta = ms(time.Since(te)), pp
	return false, nil
}

// runGroups computes the lower bounds of job groups, each solved alone,
// which start the proof; not after the time-indexed relaxation's fixing
// (unless Ablation.NoFixing).
func (sc *scheduling) runGroups(_, ctx context.Context) (bool, error) {
	s := sc.s
	if !sc.bounds || s.Ablation.NoGroups || sc.fix != nil && !s.Ablation.NoFixing {
		return false, nil
	}
	te := time.Now()
	groups, err := s.groupBounds(ctx, sc.m, sc.best, groupSize, sc.start)
	if err != nil {
		return false, err
	}
	sc.groups = groups
	sc.st.GroupMS = ms(time.Since(te))
	if groups != nil && groups.total > sc.proven {
		sc.proven = groups.total
		sc.st.GroupProvenDelta = groups.total
		sc.progress("group bounds")
	}
	return false, nil
}

// runLast runs the last search (Solver.lastSearch) from the larger
// whole-window bound (see wholeBound), with the fixing unless Ablation.NoFixing.
func (sc *scheduling) runLast(_, ctx context.Context) (bool, error) {
	sc.wholeBound()
	fix := sc.fix
	if sc.s.Ablation.NoFixing {
		fix = nil
	}
	best, proven, err := sc.s.lastSearch(ctx, sc.m, sc.best, sc.proven, sc.groups, fix, sc.st, sc.start)
	if err != nil {
		return false, err
	}
	sc.best, sc.proven = best, proven
	return true, nil
}

// wholeBound raises the proven bound to the larger whole-window bound,
// the time-indexed or the counting relaxation's, which also becomes one
// group of all jobs when there are no group bounds. With group bounds,
// their diagrams stay: the search starts from the larger bound, and the
// groups' structure still raises it (measured on simulated Eurora
// windows).
func (sc *scheduling) wholeBound() {
	whole, from := sc.pooled, "counting relaxation"
	if sc.ti > whole {
		whole, from = sc.ti, "time-indexed relaxation"
	}
	if whole > 0 && whole >= sc.proven && sc.groups == nil {
		all := make([]int, len(sc.m.Jobs))
		for i := range all {
			all[i] = i
		}
		sc.groups = &groupBounds{groups: [][]int{all}, delta: []int64{whole}, total: whole}
	}
	if whole > sc.proven {
		sc.proven = whole
		sc.progress(from)
	}
}
