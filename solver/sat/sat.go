package sat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Solver is the CP/SAT scheduler (see the package doc).
type Solver struct {
	// Initial are list schedulers whose schedules give the first
	// incumbent (heuristics.PBSWalltime, heuristics.PBSFifo); they run on
	// the same grid and within the same deadline. None: the search starts
	// from the serial horizon alone.
	Initial []solver.Scheduler
	// Progress, when set, receives incumbents and bounds as they improve.
	Progress io.Writer
	// Eager writes every cumulative/noOverlap node block up front instead
	// of on demand (the same CNF as `optsched export --format cnf`).
	Eager bool
	// NoGroups skips the group bounds (see groupBounds) that otherwise
	// start the proof.
	NoGroups bool
	// NoPool skips the counting relaxation (cp.Model.Pool) whose optimum
	// otherwise bounds the search from below (windows of up to
	// poolMaxJobs jobs).
	NoPool bool
	// NoSGS skips the serial schedules (highest weight first, and
	// perturbations) that join the Initial schedulers' first incumbent
	// when there are Initial schedulers.
	NoSGS bool
	// NoDominance leaves out the clauses that restrict the search to
	// left-justified schedules (cnf.Encoder.LeftJustified).
	NoDominance bool
	// NoTimeIndexed skips the time-indexed relaxation (timeIndexed, its
	// Lagrangian bound) that otherwise bounds the search from below
	// before the pool and group bounds.
	NoTimeIndexed bool
	// NoFixing keeps in the last search the start candidates that the
	// time-indexed relaxation's reduced costs rule out (timeIndexed.bound:
	// no schedule better than the incumbent starts a job there).
	NoFixing bool
	// LNS adds large-neighbourhood moves that try to improve a resisting
	// incumbent (step 4 of the package comment). They are off by default
	// for Eq. (2) alone: on optsched bench cp's default corpus (90 windows
	// of 7–14 jobs, 1 s) they improved the incumbent on 19 windows but
	// took the time of more proofs (without them: proven 22 → 33, above 1 %
	// 59 → 45) and changed nothing on 15–30-job windows. With CHWeight > 0
	// they always run (not measured without).
	LNS bool
	// CHWeight, when positive, adds CHWeight times the CH cost of every
	// job's node set (model.CostModel.Cost) to Eq. (2) as the objective
	// (cp.Model.SetCHWeight, cnf.Encoder.CHTerm).
	CHWeight float64
	// NoPoolCuts leaves out the counting relaxation's constraints
	// (cnf.Encoder.PoolCuts, the poolResources most contended pooled
	// resources) that the last search — after the pool and group bounds —
	// otherwise adds as redundant clauses.
	NoPoolCuts bool
	// Sequential keeps the last search on one goroutine. Otherwise, when
	// GOMAXPROCS allows two, a second search on its own SAT solver
	// probes from below only (exact bounds b = proven + step − 1), while
	// the first probes from above and improves the incumbent; they share
	// the incumbent and the proven bound as either improves them.
	Sequential bool
	// cuts marks that last search.
	cuts bool
	// prover marks the search that probes from below only, and share the
	// state both searches see (nil: one search).
	prover bool
	share  *shared
	// fix, when not nil, is the time-indexed relaxation's reduced-cost
	// fixing, which the last search applies to its domains and probes.
	fix *fixing
	// Grid keeps every slot of the grid in the start domains instead of
	// the compressed time domain (cnf.Closure: the window time, the
	// running jobs' and reservations' ends and the sums of durations).
	Grid bool
}

var _ solver.Scheduler = Solver{}

// Name returns "sat".
func (Solver) Name() string { return "sat" }

// highWork bounds the arcs one exact bound diagram from above may visit
// before a coarser one is tried; maxCoarse bounds the coarseness; lowWork
// bounds a probe from below before its step is halved.
const (
	highWork  = 200_000
	lowWork   = 300_000
	maxCoarse = 64
	// groupShare is the share of the remaining time, in percent, the
	// group bounds may take.
	groupShare = 35
	// poolShare is the share of the remaining time, in percent, the
	// counting relaxation may take, and poolResources the resources it
	// keeps.
	poolShare     = 15
	poolResources = 3
	// tiShare is the share of the remaining time, in percent, the
	// time-indexed relaxation may take; tiIters bounds its subgradient
	// iterations and tiMaxStarts the start candidates it takes on (its
	// work per iteration grows with them).
	//
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
	tiShare     = 30
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
	// sgsTries bounds the perturbed serial schedules (see sgsBudget).
	sgsTries = 2000
	// quickShare percent of the time limit, at least quickMin, go to a
	// first search without the pool and group bounds.
	quickShare = 5
	quickMin   = 20 * time.Millisecond
)

// encodeRate is how many of its variables (start candidates, units and
// the dominance's equalities) a search's encoding is taken to write per
// second, and maxEncodeVars the most a search may have. Measured on
// heavy-load Eurora-like windows (120 jobs at 95 % load, 0.5–1.5 million
// candidates, a 2-core machine): 650,000 variables a second with the main
// and proving searches writing at once, about 900 bytes of resident memory
// a variable per search, the SAT solver's tables included. Growing those
// tables is the one step no deadline can interrupt (up to half a second
// when it happened in the middle of an encoding), so a search grows them
// once, before writing. 600,000 variables keep the two searches under
// 1 GiB at the very worst; the 30-job windows of bench limits peak under
// 250 MB.
const (
	encodeRate    = 500_000
	maxEncodeVars = 600_000
)

// encodingFits reports whether a search of vars variables may be encoded:
// at most maxEncodeVars, and, with a deadline, written within the time
// left at encodeRate.
func encodingFits(ctx context.Context, vars int) bool {
	if vars > maxEncodeVars {
		return false
	}
	if dl, ok := ctx.Deadline(); ok {
		return float64(vars) <= encodeRate*time.Until(dl).Seconds()
	}
	return true
}

// boundsMinJobs: windows of at most this many jobs get no pool and group
// bounds (one job has none to get). Tests change it.
var boundsMinJobs = 1

// giniSink adds clauses to a gini solver. It reserves variables ahead,
// in doubling blocks, with a tautology on the block's last variable:
// gini rescans every clause for its initial phases whenever a solve finds
// new variables, which the lazy blocks and diagrams add between solves.
type giniSink struct {
	g        *gini.Gini
	reserved int
}

// reserve makes gini hold variables up to n (see Add).
func (s *giniSink) reserve(n int) {
	if n > s.reserved {
		s.reserved = n
		v := z.Var(s.reserved)
		s.g.Add(v.Pos())
		s.g.Add(v.Neg())
		s.g.Add(0)
	}
}

func (s *giniSink) Add(c []cnf.Lit) {
	top := 0
	for _, l := range c {
		top = max(top, l.Var())
	}
	if top > s.reserved {
		s.reserved = max(2*s.reserved, top+4096)
		v := z.Var(s.reserved)
		s.g.Add(v.Pos())
		s.g.Add(v.Neg())
		s.g.Add(0)
	}
	for _, l := range c {
		s.g.Add(z.Dimacs2Lit(int(l)))
	}
	s.g.Add(0)
}

// incumbent is a schedule in model terms.
type incumbent struct {
	slots []int
	units [][]int // per job, per option
	w     int64   // Σ ω_i s_i
	from  string  // the scheduler that found it
}

// Schedule schedules every waiting job of w that can ever start. Its
// counters are in the answer's Stats (a map, for JSON) and Details (a
// *Stats).
func (s Solver) Schedule(ctx context.Context, w *model.Window, opt solver.ScheduleOptions) (*solver.Schedule, error) {
	st := &Stats{}
	out, err := s.schedule(ctx, w, opt, st)
	if out != nil {
		out.Stats, out.Details = st.Map(), st
	}
	return out, err
}

// schedule is Schedule, counting in st.
func (s Solver) schedule(ctx context.Context, w *model.Window, opt solver.ScheduleOptions, st *Stats) (*solver.Schedule, error) {
	start := time.Now()
	if dl, ok := ctx.Deadline(); ok {
		if n := cp.Options(w); !cp.Fits(n, time.Until(dl)) {
			return s.listOnly(ctx, w, opt, n, start, st)
		}
	}
	m, err := cp.BuildContext(ctx, w, opt.Grid())
	if ctx.Err() != nil && err != nil {
		// Out of time while building the model: the list schedules
		// answer on the window itself.
		st.BuildInterrupted = true
		return s.listOnly(ctx, w, opt, cp.Options(w), start, st)
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
	best, from, ok, err := solver.BestInitial(ctx, w, opt, s.Initial, func(sch *solver.Schedule) (*incumbent, int64, error) {
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
		return s.listOnly(ctx, w, opt, cp.Options(w), start, st)
	}
	if len(s.Initial) > 0 && !s.NoSGS {
		// Serial schedules with weight-aware priorities.
		sctx, cancel := sgsBudget(ctx)
		inc := sgsIncumbent(sctx, m, sgsTries, rand.New(rand.NewPCG(uint64(len(m.Jobs)), 0x565)))
		cancel()
		if inc != nil && (best == nil || inc.w < best.w) {
			best = inc
			st.IncumbentFromSGS = true
		}
	}
	if best != nil {
		s.progress(m, start, "initial "+best.from, best.w, lb)
	}
	if best != nil && best.w == lb {
		return s.result(m, out, best, true, lb, start, st), nil
	}

	var proven int64
	bounds := best != nil && len(m.Jobs) > boundsMinJobs && (!s.NoPool || !s.NoGroups)
	if dl, ok := ctx.Deadline(); ok && bounds {
		// A first, short search: many windows are proven in
		// milliseconds without the bounds below.
		qctx, cancel := context.WithDeadline(ctx, time.Now().Add(max(quickMin, time.Until(dl)*quickShare/100)))
		best, proven, err = s.search(qctx, m, best, 0, nil, &st.Search, start)
		cancel()
		if err != nil {
			return nil, err
		}
		if proven >= best.w-lb || ctx.Err() != nil {
			return s.result(m, out, best, proven >= best.w-lb, lb+proven, start, st), nil
		}
		st.QuickMS = ms(time.Since(start))
	}
	var ti int64
	var fix *fixing
	if bounds && !s.NoTimeIndexed && len(m.Jobs) <= tiMaxJobs {
		// The time-indexed relaxation's Lagrangian bound and its
		// reduced-cost fixing.
		te := time.Now()
		tctx, cancel := withShare(ctx, tiShare)
		ti, fix, err = s.timeIndexedBound(tctx, m, best, st)
		cancel()
		if err != nil {
			return nil, err
		}
		st.TIMS, st.TIProvenDelta = ms(time.Since(te)), ti
		if ti > proven {
			proven = ti
			s.progress(m, start, "time-indexed relaxation", best.w, lb+proven)
		}
		if proven >= best.w-lb {
			return s.result(m, out, best, true, lb+proven, start, st), nil
		}
	}
	var groups *groupBounds
	var pooled int64
	if bounds && !s.NoPool && len(m.Jobs) <= poolMaxJobs && fix == nil {
		// The counting relaxation (cp.Model.Pool): its optimum is a bound.
		te := time.Now()
		pctx, cancel := withShare(ctx, poolShare)
		pm := m.Pool(poolResources)
		pinc := &incumbent{slots: best.slots, units: make([][]int, len(m.Jobs)), w: m.Weighted(best.slots), from: best.from}
		for i, j := range m.Jobs {
			pinc.units[i] = []int{j.Units}
		}
		sub := s.sub()
		sub.NoDominance = true
		_, pp, err := sub.search(pctx, pm, pinc, 0, nil, &SearchStats{}, start)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("counting relaxation: %w", err)
		}
		pooled = pp
		st.PoolMS, st.PoolProvenDelta = ms(time.Since(te)), pp
	}
	if bounds && !s.NoGroups && (fix == nil || s.NoFixing) {
		// Lower bounds of job groups, each solved alone, start the proof.
		te := time.Now()
		gctx, cancel := withShare(ctx, groupShare)
		groups, err = s.groupBounds(gctx, m, best, groupSize, start)
		cancel()
		if err != nil {
			return nil, err
		}
		st.GroupMS = ms(time.Since(te))
		if groups != nil && groups.total > proven {
			proven = groups.total
			st.GroupProvenDelta = groups.total
			s.progress(m, start, "group bounds", best.w, lb+proven)
		}
	}
	// The larger whole-window bound (one group of all jobs when there
	// are no groups; with groups, their diagrams stay: the search starts
	// from the larger bound, and the groups' structure still raises it —
	// measured on simulated Eurora windows).
	whole, from := pooled, "counting relaxation"
	if ti > whole {
		whole, from = ti, "time-indexed relaxation"
	}
	if whole > 0 && whole >= proven && groups == nil {
		all := make([]int, len(m.Jobs))
		for i := range all {
			all[i] = i
		}
		groups = &groupBounds{groups: [][]int{all}, delta: []int64{whole}, total: whole}
	}
	if whole > proven {
		proven = whole
		s.progress(m, start, from, best.w, lb+proven)
	}
	main := s
	main.cuts = true // measured: more proofs than with cuts in every search
	if !s.NoFixing {
		main.fix = fix
	}
	best, proven, err = main.lastSearch(ctx, m, best, proven, groups, st, start)
	if err != nil {
		return nil, err
	}
	if best == nil {
		return out, nil
	}
	return s.result(m, out, best, proven >= best.w-lb, lb+proven, start, st), nil
}

// listOnly is Schedule for a window too large to model in the time left:
// the best schedule of the Initial list schedulers, run on the window
// itself (status fallback, no bound), or Unknown when there are none or
// none finished. Stats "model_options" holds the options not modelled.
func (s Solver) listOnly(ctx context.Context, w *model.Window, opt solver.ScheduleOptions, options int, start time.Time, st *Stats) (*solver.Schedule, error) {
	switch W := s.CHWeight; {
	case math.IsNaN(W) || math.IsInf(W, 0) || W < 0:
		return nil, fmt.Errorf("sat: CH weight must be a finite number at least 0, got %v", W)
	case W > 0 && w.Topology == nil:
		return nil, errors.New("sat: the CH term needs the window's topology, and the window has none")
	}
	out := &solver.Schedule{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "cp", Solver: s.Name()}
	st.ModelOptions = options
	best, bestObj, truncated, err := solver.BestListSchedule(ctx, w, opt, s.Initial, func(sch *solver.Schedule) float64 {
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

// kept returns cands less the starts that s.fix rules out for a
// schedule better than best (LB = lb): each job keeps its first
// candidate (Lo_i, which cnf.Encoder.Compress needs) and the incumbent's
// start.
func (s Solver) kept(cands [][]int, best *incumbent, lb int64) [][]int {
	out := make([][]int, len(cands))
	for i, c := range cands {
		for k, t := range c {
			if k == 0 || t == best.slots[i] || s.fix.at(i, t) < best.w-lb {
				out[i] = append(out[i], t)
			}
		}
	}
	return out
}

// withShare returns ctx with its deadline cut to percent of the time it
// has left (ctx itself, with a no-op cancel, when it has no deadline).
func withShare(ctx context.Context, percent int64) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, time.Now().Add(time.Until(dl)*time.Duration(percent)/100))
}

// sub returns the solver of a sub-search — a group's bound, the counting
// relaxation: the caller's encoding switches (Grid, Eager, NoDominance),
// none of its search state (the fixing, the shared incumbent, the
// prover's role, the cuts) and no progress lines, which belong to the
// whole window.
func (s Solver) sub() Solver {
	return Solver{Grid: s.Grid, Eager: s.Eager, NoDominance: s.NoDominance}
}

// domains returns the start domains of a search, [Lo_i, Hi_i]: Hi_i from
// the incumbent's slack, narrowed by the group bounds and the reduced-cost
// fixing and kept at least at the incumbent's start; the serial horizon
// without an incumbent.
func (s Solver) domains(m *cp.Model, best *incumbent, groups *groupBounds) (lo, hi []int) {
	lb := LowerBound(m)
	if best != nil {
		lo, hi = Domains(m, best.w)
		if groups != nil {
			// A schedule no worse than best leaves job i of group g at
			// most W_UB − LB − (the other groups' bounds) of weighted
			// delay.
			for g, jobs := range groups.groups {
				room := best.w - lb - (groups.total - groups.delta[g])
				for _, i := range jobs {
					hi[i] = min(hi[i], lo[i]+int(max(0, room)/m.Jobs[i].Weight))
				}
			}
		}
		if s.fix != nil {
			// Past its last candidate that the fixing leaves, no better
			// schedule starts job i.
			for i, c := range s.fix.cands {
				for k := len(c) - 1; k >= 0; k-- {
					if s.fix.lb[i][k] < best.w-lb {
						hi[i] = max(lo[i], min(hi[i], c[k]))
						break
					}
				}
			}
		}
		for i := range hi {
			hi[i] = max(hi[i], best.slots[i])
		}
	} else {
		lo, hi = Domains(m, math.MaxInt64/2)
	}
	return lo, hi
}

// encoder writes a search's SAT encoding of m on the domains [lo, hi]:
// the base (alternative, cumulative and noOverlap by node blocks written
// lazily), the CH term, the left-justified dominance, the pool cuts and
// the group bounds' objective. ok is false when it was not written — the
// deadline stopped it, or it would not fit in the time or memory left —
// and the search ends with what it has.
func (s Solver) encoder(ctx context.Context, m *cp.Model, best *incumbent, groups *groupBounds, lo, hi []int, stats *SearchStats) (enc *cnf.Encoder, g *gini.Gini, ok bool, err error) {
	lb := LowerBound(m)
	g = gini.New()
	sink := &giniSink{g: g}
	enc, err = cnf.New(m, sink, lo, hi)
	if err != nil {
		return nil, nil, false, err
	}
	enc.Stop = func() bool { return ctx.Err() != nil }
	// Writing the encoding polls the deadline: on a large window it takes
	// longer than the time limit, and an interrupted encoding is dropped
	// (the incumbent and bound stand).
	interrupted := func(err error) bool {
		if errors.Is(err, cnf.ErrInterrupted) {
			stats.EncodingInterrupted++
			return true
		}
		return false
	}
	grid := 0
	for i := range lo {
		grid += hi[i] - lo[i] + 1
	}
	stats.DomainSlots += grid
	if s.Grid {
		stats.DomainCandidates += grid
	} else {
		// The compressed time domain, holding the incumbent's starts.
		var extra [][]int
		if best != nil {
			extra = make([][]int, len(m.Jobs))
			for i := range extra {
				extra[i] = []int{best.slots[i]}
			}
		}
		cands, err := cnf.ClosureStop(m, lo, hi, extra, closureWork, enc.Stop)
		switch {
		case interrupted(err):
			return nil, nil, false, nil
		case errors.Is(err, cnf.ErrClosureTooLarge):
			stats.ClosureFallback++
			stats.DomainCandidates += grid
		case err != nil:
			return nil, nil, false, err
		default:
			if s.fix != nil && best != nil {
				cands = s.kept(cands, best, lb)
			}
			if err := enc.Compress(cands); err != nil {
				return nil, nil, false, err
			}
			for _, c := range cands {
				stats.DomainCandidates += len(c)
			}
		}
	}
	// The encoding's size, known now: a search whose encoding cannot be
	// written within the time left, or would outgrow the memory bound,
	// is not started (the incumbent and bound stand).
	// The variables: a start literal per candidate, a unit literal per
	// option and unit, and with the left-justified dominance up to one
	// [s_j = x] literal per candidate more.
	vars := 0
	for i, j := range m.Jobs {
		c := enc.NumCandidates(i)
		vars += c
		if !s.NoDominance {
			vars += c
		}
		for _, o := range j.Options {
			vars += o.MaxUnits
		}
	}
	if !encodingFits(ctx, vars) {
		stats.EncodingSkipped++
		stats.EncodingSkippedVars = max(stats.EncodingSkippedVars, vars)
		return nil, nil, false, nil
	}
	// Grow the solver's tables once, now, rather than by doubling in the
	// middle of writing the encoding, where no deadline can stop it.
	sink.reserve(vars + vars/4)
	if err := enc.Base(); interrupted(err) {
		return nil, nil, false, nil
	}
	if err := enc.CHTerm(); interrupted(err) {
		return nil, nil, false, nil
	} else if err != nil {
		return nil, nil, false, err
	}
	if !s.NoDominance {
		if err := enc.LeftJustified(); interrupted(err) {
			return nil, nil, false, nil
		}
	}
	if s.cuts && !s.NoPoolCuts && len(m.Nodes) > 1 && len(m.Jobs) > 1 {
		if err := enc.PoolCuts(m.Pool(poolResources)); interrupted(err) {
			return nil, nil, false, nil
		} else if err != nil {
			return nil, nil, false, err
		}
	}
	if groups != nil {
		if err := enc.ObjectiveGroups(groups.groups, groups.delta); err != nil {
			return nil, nil, false, err
		}
	}
	if s.Eager {
		enc.EncodeAll()
	}
	return enc, g, true, nil
}

// search improves best (nil: none yet) and raises proven, a proven lower
// bound on optimum − LB (LB = LowerBound(m)), until best is proven optimal
// or ctx ends (see the package doc); it returns both and adds its
// counters to stats.
func (s Solver) search(ctx context.Context, m *cp.Model, best *incumbent, proven int64, groups *groupBounds, stats *SearchStats, start time.Time) (*incumbent, int64, error) {
	w := m.Window
	lb := LowerBound(m)
	lo, hi := s.domains(m, best, groups)
	enc, g, ok, err := s.encoder(ctx, m, best, groups, lo, hi, stats)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return best, proven, nil
	}
	calls, blocks := 0, 0
	var solveTime, encodeTime time.Duration
	// The search keeps proven ≤ optimum − LB ≤ best.w − LB and probes
	// bounds b on Σ ω_i (s_i − EST_i) (see the package doc): from above,
	// b = best − 1 less an eighth of the room to proven, with an exact
	// diagram or, when that grows too large, a coarse one; after a probe
	// from above gives nothing, serial schedules (and with LNS,
	// neighbourhood moves) for a slice and then one probe from below, b = proven + step − 1 (the step doubles after
	// an UNSAT and halves after a timeout). A model that violates no node
	// block is a new incumbent; UNSAT of an exact probe proves
	// optimum − LB > b. The slice doubles after two timeouts in a row.
	// Without an incumbent the first call has no bound and no slice.
	slice := 20 * time.Millisecond
	var step int64
	high, timeouts := true, 0
	roots := map[[2]int64]cnf.Lit{}
	excluded := map[int64]cnf.Lit{} // Encoder.Exclude's literal per probe bound (0: none)
	coarse, startCoarse := 1, 1
	rng := rand.New(rand.NewPCG(uint64(len(m.Jobs)), 0x5a7))
	lnsSize := 6
	var lnsTime time.Duration
	for {
		if s.share != nil {
			// Offer this search's incumbent and bound, take the other's.
			best, proven = s.share.merge(best, proven)
		}
		if best != nil && proven >= best.w-lb {
			break
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= 0 {
			break
		}
		if ctx.Err() != nil {
			break
		}
		var assume []cnf.Lit
		b := int64(-1)
		isHigh := false
		if best != nil {
			u := best.w - lb
			if step == 0 {
				step = max(1, (u-proven)/2)
			}
			step = min(step, max(1, (u-proven)/2))
			if s.prover {
				b = min(proven+step-1, u-1)
			} else if high || u-1 <= proven+step-1 || proven+step-1 > u/2 {
				// A little below the incumbent: a model then improves it
				// by more than one, and UNSAT raises the bound.
				b = u - 1 - (u-1-proven)/8
			} else {
				b = proven + step - 1
			}
			// The bound's diagram: exact when it stays small enough,
			// else coarser (doubling c) — a sufficient constraint whose
			// models still improve the incumbent, but whose UNSAT proves
			// nothing. Low probes are always exact.
			isHigh = !s.prover && b == u-1-(u-1-proven)/8
			limit := highWork
			if !isHigh {
				limit = lowWork
			}
			coarse = 1
			if isHigh {
				coarse = startCoarse
			}
			for ; ; coarse *= 2 {
				key := [2]int64{b, int64(coarse)}
				root, ok := roots[key]
				if ok {
					assume = append(assume, root)
					break
				}
				te, c0 := time.Now(), enc.NumClauses()
				root, err = enc.AtMostCoarse(b, coarse, limit)
				encodeTime += time.Since(te)
				stats.DiagramClauses += enc.NumClauses() - c0
				if !isHigh {
					stats.LowDiagramClauses += enc.NumClauses() - c0
				}
				if errors.Is(err, cnf.ErrTooLarge) && isHigh && coarse < maxCoarse {
					startCoarse = 2 * coarse // the finer diagrams are too large now
					continue
				}
				if errors.Is(err, cnf.ErrTooLarge) && !isHigh {
					step = max(1, step/2) // a smaller step from below
					break
				}
				if errors.Is(err, cnf.ErrTooLarge) {
					stats.ObjectiveTooLarge = true
					break
				}
				if errors.Is(err, cnf.ErrInterrupted) {
					break // deadline
				}
				if err != nil {
					return nil, 0, err
				}
				roots[key] = root
				assume = append(assume, root)
				break
			}
			if len(assume) == 0 && s.prover {
				if b > proven && ctx.Err() == nil {
					continue // a smaller step
				}
				break // no exact diagram even one above the bound
			}
			if len(assume) == 0 && !isHigh && step >= 1 && !stats.ObjectiveTooLarge && ctx.Err() == nil {
				high = true
				continue
			}
			if len(assume) == 0 {
				break
			}
			if coarse > 1 {
				stats.CoarseProbes++
			}
			if s.fix != nil {
				// Reduced-cost fixing against the probe's bound.
				r, ok := excluded[b]
				if !ok {
					starts, n := s.fix.over(enc.Candidates, b)
					if n > 0 {
						r = enc.Exclude(starts)
						stats.FixProbeStarts += n
					}
					excluded[b] = r
				}
				if r != 0 {
					assume = append(assume, r)
				}
			}
		}
		calls++
		ts := time.Now()
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if best != nil {
			sctx, cancel = context.WithTimeout(ctx, slice)
		}
		r := solve(sctx, g, assume)
		cancel()
		solveTime += time.Since(ts)
		if r < 0 && isHigh && coarse > 1 {
			// A coarse bound is stronger than the objective bound: its
			// UNSAT proves nothing. Treat it like a timeout, and try a
			// finer one next.
			startCoarse = max(1, coarse/2)
			r = 0
		}
		if r == 0 {
			if ctx.Err() != nil {
				break // deadline
			}
			if timeouts++; timeouts >= 2 {
				slice, timeouts = slice*2, 0
			}
			if s.prover {
				step = max(1, step/2)
				continue
			}
			if isHigh && len(s.Initial) > 0 && !s.NoSGS {
				// Serial schedules around the incumbent, for a while.
				sctx, cancel := context.WithTimeout(ctx, slice/2)
				inc := sgsImprove(sctx, m, best, sgsTries, rng)
				cancel()
				if inc != nil {
					best = inc
					s.progress(m, start, "sgs", best.w, lb+proven)
					stats.SGSImprovements++
					high = true
					continue
				}
			}
			if !isHigh {
				step = max(1, step/2)
			} else if s.LNS || s.CHWeight > 0 {
				// The incumbent resists: search its neighbourhoods for
				// a slice.
				te := time.Now()
				inc, err := s.lns(ctx, m, enc, g, best, lb, slice, rng, &lnsSize, &blocks)
				lnsTime += time.Since(te)
				if err != nil {
					return nil, 0, err
				}
				if inc != nil {
					best = inc
					s.progress(m, start, "sat-lns", best.w, lb+proven)
					stats.LNSImprovements++
					high = true
					continue
				}
			}
			high = !high // after a high timeout, one low probe; then back
			continue
		}
		timeouts = 0
		if r < 0 {
			if best == nil {
				return nil, 0, errors.New("sat: the model is unsatisfiable without an objective bound (a bug)")
			}
			proven = b + 1
			if !isHigh {
				step *= 2
			}
			high = true
			continue
		}
		slots, units := enc.Decode(func(l cnf.Lit) bool { return g.Value(z.Dimacs2Lit(int(l))) })
		viol := violations(m, slots, units)
		if len(viol) > 0 {
			for _, v := range viol {
				if enc.HasBlock(v[0], v[1]) {
					return nil, 0, fmt.Errorf("sat: job %s on node %s violates a constraint already encoded (a bug)",
						m.Jobs[v[0]].ID, w.Topology.Name(m.Nodes[v[1]].ID))
				}
			}
			te := time.Now()
		blocking:
			for _, v := range viol {
				for ni := range m.Nodes {
					if m.Nodes[ni].Class == m.Nodes[v[1]].Class && !enc.HasBlock(v[0], ni) {
						if ctx.Err() != nil {
							// A class's blocks take long on large
							// windows; the loop ends at its top.
							break blocking
						}
						enc.NodeBlock(v[0], ni)
						blocks++
					}
				}
			}
			encodeTime += time.Since(te)
			continue
		}
		inc := &incumbent{slots: slots, units: units, w: m.Total(slots, units), from: s.Name()}
		if best != nil && inc.w-lb > b {
			return nil, 0, fmt.Errorf("sat: model with W − LB = %d under the bound %d (a bug)", inc.w-lb, b)
		}
		best = inc
		high = true
		s.progress(m, start, "sat", best.w, lb+proven)
	}
	stats.ProvenDelta, stats.LNSMS, stats.SATCalls, stats.NodeBlocks = proven, ms(lnsTime), calls, blocks
	stats.Vars, stats.Clauses, stats.SolveMS, stats.EncodeMS = enc.NumVars(), enc.NumClauses(), ms(solveTime), ms(encodeTime)
	return best, proven, nil
}

// result fills out from the incumbent.
func (s Solver) result(m *cp.Model, out *solver.Schedule, best *incumbent, proven bool, lb int64, start time.Time, st *Stats) *solver.Schedule {
	w := m.Window
	out.Allocations = m.Allocations(best.slots, best.units)
	out.Objective = model.WeightedQueueTime(w, out.Allocations)
	if m.CHWeight > 0 {
		out.Objective += m.CHWeight * float64(solver.Objective(w, out.Allocations))
	}
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

func (s Solver) progress(m *cp.Model, start time.Time, from string, w, lb int64) {
	if s.Progress == nil {
		return
	}
	if s.share != nil {
		s.share.out.Lock()
		defer s.share.out.Unlock()
	}
	obj, bound := math.NaN(), math.NaN()
	if m.ExactWeights {
		obj, bound = m.ObjectiveOfWeighted(float64(w)), m.ObjectiveOfWeighted(float64(lb))
	}
	fmt.Fprintf(s.Progress, "sat: %8.3f ms  incumbent %.6g (%s)  bound %.6g\n",
		float64(time.Since(start).Microseconds())/1000, obj, from, bound)
}

// shared is what the two workers of the last search share (see
// Solver.Sequential): the best incumbent and the largest proven bound on
// optimum − LB either has found.
type shared struct {
	mu     sync.Mutex
	best   *incumbent
	proven int64
	out    sync.Mutex // Solver.Progress's lines
}

// merge offers a worker's incumbent and proven bound and returns the
// best of both workers'.
func (sh *shared) merge(best *incumbent, proven int64) (*incumbent, int64) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if best != nil && (sh.best == nil || best.w < sh.best.w) {
		sh.best = best
	}
	sh.proven = max(sh.proven, proven)
	return sh.best, sh.proven
}

// lastSearch runs the last search: on one goroutine with
// Solver.Sequential or when GOMAXPROCS is 1, else beside a prover that
// probes from below (see Solver.Sequential); the prover's counters go
// into stats with the prefix "prover_".
func (s Solver) lastSearch(ctx context.Context, m *cp.Model, best *incumbent, proven int64, groups *groupBounds, st *Stats, start time.Time) (*incumbent, int64, error) {
	if s.Sequential || best == nil || runtime.GOMAXPROCS(0) < 2 {
		return s.search(ctx, m, best, proven, groups, &st.Search, start)
	}
	sh := &shared{best: best, proven: proven}
	s.share = sh
	prover := s
	prover.prover = true
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var perr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, perr = prover.search(pctx, m, best, proven, groups, &st.Prover, start)
	}()
	_, _, err := s.search(ctx, m, best, proven, groups, &st.Search, start)
	if b, p := sh.merge(nil, 0); err != nil || p >= b.w-LowerBound(m) {
		cancel() // proven: the prover may be inside a slice
	}
	<-done // else until the deadline, or its own end
	if err == nil {
		err = perr
	}
	if err != nil {
		return nil, 0, err
	}
	best, proven = sh.merge(nil, 0)
	return best, proven, nil
}

// solve runs gini under assumptions until ctx ends: 1 SAT, −1 UNSAT, 0
// stopped.
func solve(ctx context.Context, g *gini.Gini, assume []cnf.Lit) int {
	for {
		if ctx.Err() != nil {
			return 0
		}
		d := 100 * time.Millisecond
		if dl, ok := ctx.Deadline(); ok {
			d = min(d, time.Until(dl))
		}
		if d <= 0 {
			return 0
		}
		for _, l := range assume {
			g.Assume(z.Dimacs2Lit(int(l)))
		}
		if r := g.Try(d); r != 0 {
			return r
		}
	}
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

// violations returns the (job, node) pairs whose start-time check fails:
// at job j's start on node n, the jobs then running on n break
// exclusivity, or their use of a resource j needs exceeds n's capacity.
// These are exactly the constraints of cnf's node blocks.
func violations(m *cp.Model, slots []int, units [][]int) [][2]int {
	var out [][2]int
	type on struct{ i, u int }
	byNode := make([][]on, len(m.Nodes))
	for i, j := range m.Jobs {
		for o, u := range units[i] {
			if u > 0 {
				byNode[j.Options[o].Node] = append(byNode[j.Options[o].Node], on{i, u})
			}
		}
	}
	for ni, list := range byNode {
		nd := &m.Nodes[ni]
		for _, a := range list {
			ja := &m.Jobs[a.i]
			s := slots[a.i]
			use := make([]int64, len(m.Resources))
			for l := range use {
				use[l] = int64(a.u) * ja.Req[l]
			}
			for _, r := range nd.Running {
				if s < r.EndSlot {
					for l, v := range r.Use {
						use[l] += v
					}
				}
			}
			bad := false
			for _, b := range list {
				if b.i == a.i {
					continue
				}
				sb := slots[b.i]
				if sb <= s && s < sb+m.Jobs[b.i].Dur {
					if ja.Excl || m.Jobs[b.i].Excl {
						bad = true
					}
					for l := range use {
						use[l] += int64(b.u) * m.Jobs[b.i].Req[l]
					}
				}
			}
			for l, need := range ja.Req {
				if need > 0 && use[l] > nd.Cap[l] {
					bad = true
				}
			}
			if bad {
				out = append(out, [2]int{a.i, ni})
			}
		}
	}
	return out
}

// lns improves best by large-neighbourhood moves for about budget: each
// move frees a few jobs (a delayed job and the jobs starting nearest to
// it), fixes the others to best by assumptions, and asks for a strictly
// smaller weighted delay of the freed jobs, with a diagram over those jobs
// only. It returns the first improvement, or nil.
func (s Solver) lns(ctx context.Context, m *cp.Model, enc *cnf.Encoder, g *gini.Gini, best *incumbent, lb int64,
	budget time.Duration, rng *rand.Rand, size *int, blocks *int) (*incumbent, error) {
	end := time.Now().Add(budget)
	var delayed []int
	for i := range m.Jobs {
		if best.slots[i] > enc.Lo[i] {
			delayed = append(delayed, i)
		}
	}
	if len(delayed) == 0 {
		return nil, nil
	}
	for time.Now().Before(end) && ctx.Err() == nil {
		k := min(*size, len(m.Jobs))
		seed := delayed[rng.IntN(len(delayed))]
		others := make([]int, 0, len(m.Jobs))
		for i := range m.Jobs {
			if i != seed {
				others = append(others, i)
			}
		}
		rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
		slices.SortStableFunc(others, func(a, b int) int {
			da, db := abs(best.slots[a]-best.slots[seed]), abs(best.slots[b]-best.slots[seed])
			return da - db
		})
		free := append([]int{seed}, others[:k-1]...)
		for _, i := range others[k-1:] {
			if !enc.IsCandidate(i, best.slots[i]) {
				free = append(free, i) // outside the compressed domain: it cannot be fixed
			}
		}
		var cur int64
		isFree := make([]bool, len(m.Jobs))
		for _, i := range free {
			isFree[i] = true
			cur += m.Jobs[i].Weight*int64(best.slots[i]-enc.Lo[i]) + m.CHKappa*(m.CH(i, best.units[i])-m.CHMin(i))
		}
		if cur == 0 {
			continue
		}
		root, err := enc.AtMostJobs(free, cur-1)
		if errors.Is(err, cnf.ErrInterrupted) || errors.Is(err, cnf.ErrTooLarge) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		assume := []cnf.Lit{root}
		for i := range m.Jobs {
			if !isFree[i] {
				assume = append(assume, enc.Fix(i, best.slots[i], best.units[i])...)
			}
		}
		for try := 0; try < 8; try++ {
			mctx, cancel := context.WithDeadline(ctx, minTime(end, time.Now().Add(budget/4)))
			r := solve(mctx, g, assume)
			cancel()
			if r == 0 {
				*size = max(2, *size-1) // too hard: smaller moves
				break
			}
			if r < 0 {
				*size = min(len(m.Jobs), *size+1) // no gain here: larger moves
				break
			}
			slots, units := enc.Decode(func(l cnf.Lit) bool { return g.Value(z.Dimacs2Lit(int(l))) })
			viol := violations(m, slots, units)
			if len(viol) == 0 {
				inc := &incumbent{slots: slots, units: units, w: m.Total(slots, units), from: s.Name()}
				if inc.w >= best.w {
					return nil, fmt.Errorf("sat: neighbourhood model with W = %d, not below %d (a bug)", inc.w, best.w)
				}
				return inc, nil
			}
			for _, v := range viol {
				for ni := range m.Nodes {
					if m.Nodes[ni].Class == m.Nodes[v[1]].Class && !enc.HasBlock(v[0], ni) {
						enc.NodeBlock(v[0], ni)
						*blocks++
					}
				}
			}
		}
	}
	return nil, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
