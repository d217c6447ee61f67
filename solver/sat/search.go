package sat

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"

	"github.com/optsched/optsched/encode/cnf"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/solver"
)

// highWork bounds the arcs one exact bound diagram from above may visit
// before a coarser one is tried; maxCoarse bounds the coarseness; lowWork
// bounds a probe from below before its step is halved.
const (
	highWork  = 200_000
	lowWork   = 300_000
	maxCoarse = 64
	// firstSlice is a probe's first time slice (it doubles after two
	// timeouts in a row), and lnsFirstSize the jobs a first
	// neighbourhood move frees.
	firstSlice   = 20 * time.Millisecond
	lnsFirstSize = 6
)

// role is what a search is for within Solve. The zero role is a
// search on its own: the quick search, a group's bound.
type role struct {
	// cuts marks the last search: it writes the pool cuts.
	cuts bool
	// prover marks the search that probes from below only, beside the
	// last search (see Solver.Sequential); share is what the two share
	// (nil: one search).
	prover bool
	share  *shared
	// fix, when not nil, is the time-indexed relaxation's reduced-cost
	// fixing, which the search applies to its domains and probes.
	fix *fixing
	// pooled marks the counting relaxation's search: it writes no
	// dominance clauses.
	pooled bool
}

// searcher is one SAT search of a model (steps 2–5 of the package doc).
// It runs once, in three phases: build writes the encoding; probes asks
// the solver for schedules under bounds on Σ ω_i (s_i − EST_i) until
// the incumbent is proven optimal or the deadline; and between probes,
// when a probe from above runs out of its slice, interlude tries to
// improve the incumbent around it.
//
// The probes are a small state machine. Its state: above, the direction
// of the next probe (nextProbe: from above, b just below the incumbent;
// from below, b = proven + step − 1), step, and slice, a probe's time.
// A probe ends one of three ways:
//
//   - a model (answered): when it violates node blocks, they are added
//     and the state is unchanged; else it is the new incumbent → above;
//   - UNSAT (refuted): proven = b + 1 → above; after a probe from below
//     the step doubles;
//   - out of its slice (timedOut): the slice doubles after two timeouts
//     in a row; after a probe from above the interlude runs, and an
//     improvement → above; else the direction flips (one probe from
//     below after a probe from above, and back), a probe from below
//     halving the step. The prover only halves its step.
//
// A probe whose bound diagram cannot be written is skipped (noDiagram).
// The search keeps proven ≤ optimum − LB ≤ best.w − LB; UNSAT right
// below the incumbent proves it optimal.
type searcher struct {
	opt Solver // the options it runs with (a sub-search's: Solver.sub)
	role
	m     *cp.Model
	lb    int64     // LowerBound(m)
	start time.Time // Solve's, for the progress lines
	stats *solver.SATSearchStats

	// The encoding and its solver (build).
	enc *cnf.Encoder
	g   *gini.Gini

	// The incumbent (nil: none yet) and a proven bound on optimum − LB.
	best   *incumbent
	proven int64

	// The probes' state (see above), the coarseness the probes from
	// above start at, and per bound the diagrams' roots (by coarseness)
	// and Encoder.Exclude's literal (0: none).
	above       bool
	step        int64
	slice       time.Duration
	timeouts    int
	startCoarse int
	roots       map[[2]int64]cnf.Lit
	excluded    map[int64]cnf.Lit

	// The interlude's state: its random choices, and the jobs a
	// neighbourhood move frees.
	rng     *rand.Rand
	lnsSize int

	// The counters, written into stats when the probes end.
	calls, blocks                  int
	solveTime, encodeTime, lnsTime time.Duration
}

// probe is one question to the solver: a schedule with
// Σ ω_i (s_i − EST_i) ≤ b under assume (b = −1, no assumption: the first
// question, without an incumbent).
type probe struct {
	b      int64
	high   bool // from above
	coarse int  // the coarseness of b's diagram (1: exact)
	assume []cnf.Lit
}

// flow is what the probe loop does after a step.
type flow int

const (
	proceed flow = iota // go on: ask the probe, or choose the next
	retry               // no probe this round: choose again
	halt                // end the search
)

// newSearcher returns a search of m with s's options in role r that
// counts into stats; start is Solve's.
func (s Solver) newSearcher(m *cp.Model, r role, stats *solver.SATSearchStats, start time.Time) *searcher {
	return &searcher{opt: s, role: r, m: m, lb: LowerBound(m), start: start, stats: stats,
		above: true, slice: firstSlice, startCoarse: 1,
		roots: map[[2]int64]cnf.Lit{}, excluded: map[int64]cnf.Lit{},
		rng: rand.New(rand.NewPCG(uint64(len(m.Jobs)), 0x5a7)), lnsSize: lnsFirstSize}
}

// dominance reports whether the search writes the left-justified
// dominance clauses: not with Ablation.NoDominance, nor for the counting
// relaxation.
func (t *searcher) dominance() bool { return !t.opt.Ablation.NoDominance && !t.pooled }

// search runs a search of m on its own (the zero role; see searcher.run).
func (s Solver) search(ctx context.Context, m *cp.Model, best *incumbent, proven int64, groups *groupBounds, stats *solver.SATSearchStats, start time.Time) (*incumbent, int64, error) {
	return s.newSearcher(m, role{}, stats, start).run(ctx, best, proven, groups)
}

// run improves best (nil: none yet) and raises proven, a proven lower
// bound on optimum − LB (LB = LowerBound(m)), until best is proven
// optimal or ctx ends, and returns both; the group bounds groups, when
// not nil, narrow the domains and shape the objective diagrams. A search
// whose encoding was not written returns best and proven as they were.
func (t *searcher) run(ctx context.Context, best *incumbent, proven int64, groups *groupBounds) (*incumbent, int64, error) {
	t.best, t.proven = best, proven
	ok, err := t.build(ctx, groups)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return best, proven, nil
	}
	if err := t.probes(ctx); err != nil {
		return nil, 0, err
	}
	t.count()
	return t.best, t.proven, nil
}

// probes runs the probes (see searcher) until the incumbent is proven
// optimal, ctx ends, or no probe is left.
func (t *searcher) probes(ctx context.Context) error {
	for !t.finished(ctx) {
		p, next, err := t.nextProbe(ctx)
		if err != nil || next == halt {
			return err
		}
		if next == retry {
			continue
		}
		if next, err = t.ask(ctx, p); err != nil || next == halt {
			return err
		}
	}
	return nil
}

// finished offers the incumbent and proven bound to the other worker and
// takes its (see shared), and reports whether the search is over: the
// incumbent proven optimal, or ctx ended.
func (t *searcher) finished(ctx context.Context) bool {
	if t.share != nil {
		t.best, t.proven = t.share.merge(t.best, t.proven)
	}
	if t.best != nil && t.proven >= t.best.w-t.lb {
		return true
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= 0 {
		return true
	}
	return ctx.Err() != nil
}

// nextProbe returns the next probe: its bound (choose), the bound's
// diagram (diagram) and the starts the fixing excludes under it
// (exclude). Without an incumbent the probe has no bound.
func (t *searcher) nextProbe(ctx context.Context) (*probe, flow, error) {
	p := &probe{b: -1}
	if t.best == nil {
		return p, proceed, nil
	}
	t.choose(p)
	if err := t.diagram(p); err != nil {
		return nil, halt, err
	}
	if len(p.assume) == 0 {
		return nil, t.noDiagram(ctx, p), nil
	}
	if p.coarse > 1 {
		t.stats.CoarseProbes++
	}
	t.exclude(p)
	return p, proceed, nil
}

// choose sets p's bound and direction. From above: a little below the
// incumbent, b = u − 1 − (u − 1 − proven)/8 with u = best − LB (a model
// then improves it by more than one, and UNSAT raises the bound). From
// below: b = proven + step − 1, when the state asks for it and it lies
// below both u − 1 and u/2. The prover always probes from below, under
// the incumbent.
func (t *searcher) choose(p *probe) {
	u := t.best.w - t.lb
	if t.step == 0 {
		t.step = max(1, (u-t.proven)/2)
	}
	t.step = min(t.step, max(1, (u-t.proven)/2))
	high, low := u-1-(u-1-t.proven)/8, t.proven+t.step-1
	switch {
	case t.prover:
		p.b = min(low, u-1)
	case t.above || u-1 <= low || low > u/2:
		p.b = high
	default:
		p.b = low
	}
	p.high = !t.prover && p.b == high
}

// diagram adds to p's assumptions the root of its bound's objective
// diagram: exact when it stays within the work limit, else, from above,
// coarser (doubling the coarseness up to maxCoarse) — a sufficient
// constraint whose models still improve the incumbent, but whose UNSAT
// proves nothing. Probes from below are always exact: when too large,
// the step halves. No root when none could be written.
func (t *searcher) diagram(p *probe) error {
	limit := highWork
	if !p.high {
		limit = lowWork
	}
	p.coarse = 1
	if p.high {
		p.coarse = t.startCoarse
	}
	for ; ; p.coarse *= 2 {
		key := [2]int64{p.b, int64(p.coarse)}
		if root, ok := t.roots[key]; ok {
			p.assume = append(p.assume, root)
			return nil
		}
		te, c0 := time.Now(), t.enc.NumClauses()
		root, err := t.enc.AtMostCoarse(p.b, p.coarse, limit)
		t.encodeTime += time.Since(te)
		t.stats.DiagramClauses += t.enc.NumClauses() - c0
		if !p.high {
			t.stats.LowDiagramClauses += t.enc.NumClauses() - c0
		}
		switch {
		case errors.Is(err, cnf.ErrTooLarge) && p.high && p.coarse < maxCoarse:
			t.startCoarse = 2 * p.coarse // the finer diagrams are too large now
			continue
		case errors.Is(err, cnf.ErrTooLarge) && !p.high:
			t.step = max(1, t.step/2) // a smaller step from below
			return nil
		case errors.Is(err, cnf.ErrTooLarge):
			t.stats.ObjectiveTooLarge = true
			return nil
		case errors.Is(err, cnf.ErrInterrupted):
			return nil // deadline
		case err != nil:
			return err
		}
		t.roots[key] = root
		p.assume = append(p.assume, root)
		return nil
	}
}

// noDiagram is what follows a probe whose diagram could not be written:
// the prover chooses again (with its smaller step) while its bound is
// above the proven one; a probe from below gives way to one from above;
// otherwise (no diagram even from above, or the deadline) the search
// ends.
func (t *searcher) noDiagram(ctx context.Context, p *probe) flow {
	if t.prover {
		if p.b > t.proven && ctx.Err() == nil {
			return retry
		}
		return halt
	}
	if !p.high && t.step >= 1 && !t.stats.ObjectiveTooLarge && ctx.Err() == nil {
		t.above = true
		return retry
	}
	return halt
}

// exclude adds to p's assumptions the reduced-cost fixing against its
// bound (cnf.Encoder.Exclude: the starts whose bound with the job held
// there exceeds b), when there is a fixing.
func (t *searcher) exclude(p *probe) {
	if t.fix == nil {
		return
	}
	r, ok := t.excluded[p.b]
	if !ok {
		starts, n := t.fix.over(t.enc.Candidates, p.b)
		if n > 0 {
			r = t.enc.Exclude(starts)
			t.stats.FixProbeStarts += n
		}
		t.excluded[p.b] = r
	}
	if r != 0 {
		p.assume = append(p.assume, r)
	}
}

// ask asks the solver for probe p and takes its answer (see searcher).
func (t *searcher) ask(ctx context.Context, p *probe) (flow, error) {
	r := t.call(ctx, p)
	if r < 0 && p.high && p.coarse > 1 {
		// A coarse bound is stronger than the objective bound: its
		// UNSAT proves nothing. Treat it like a timeout, and try a
		// finer one next.
		t.startCoarse = max(1, p.coarse/2)
		r = 0
	}
	if r == 0 {
		return t.timedOut(ctx, p)
	}
	t.timeouts = 0
	if r < 0 {
		return proceed, t.refuted(p)
	}
	return proceed, t.answered(ctx, p)
}

// call runs the solver on p: for a slice once there is an incumbent,
// without a limit but ctx's before (1 SAT, −1 UNSAT, 0 stopped).
func (t *searcher) call(ctx context.Context, p *probe) int {
	t.calls++
	ts := time.Now()
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if t.best != nil {
		sctx, cancel = context.WithTimeout(ctx, t.slice)
	}
	r := solve(sctx, t.g, p.assume)
	cancel()
	t.solveTime += time.Since(ts)
	return r
}

// timedOut takes a probe that ran out of its slice (or a coarse one's
// UNSAT): at the deadline the search ends; else see searcher.
func (t *searcher) timedOut(ctx context.Context, p *probe) (flow, error) {
	if ctx.Err() != nil {
		return halt, nil // deadline
	}
	if t.timeouts++; t.timeouts >= 2 {
		t.slice, t.timeouts = t.slice*2, 0
	}
	switch {
	case t.prover:
		t.step = max(1, t.step/2)
		return proceed, nil
	case p.high:
		improved, err := t.interlude(ctx)
		if err != nil {
			return halt, err
		}
		if improved {
			t.above = true
			return proceed, nil
		}
	default:
		t.step = max(1, t.step/2)
	}
	t.above = !t.above // after a probe from above, one from below; then back
	return proceed, nil
}

// refuted takes p's UNSAT: optimum − LB > b.
func (t *searcher) refuted(p *probe) error {
	if t.best == nil {
		return errors.New("sat: the model is unsatisfiable without an objective bound (a bug)")
	}
	t.proven = p.b + 1
	t.opt.post.publish(nil, t.lb+t.proven)
	if !p.high {
		t.step *= 2
	}
	t.above = true
	return nil
}

// answered takes p's model: the node blocks it violates are added (the
// lazy decomposition of step 3), or it is the new incumbent.
func (t *searcher) answered(ctx context.Context, p *probe) error {
	slots, units := t.enc.Decode(func(l cnf.Lit) bool { return t.g.Value(z.Dimacs2Lit(int(l))) })
	if viol := violations(t.m, slots, units); len(viol) > 0 {
		return t.addBlocks(ctx, viol)
	}
	inc := &incumbent{slots: slots, units: units, w: t.m.Total(slots, units), from: t.opt.Name()}
	if t.best != nil && inc.w-t.lb > p.b {
		return fmt.Errorf("sat: model with W − LB = %d under the bound %d (a bug)", inc.w-t.lb, p.b)
	}
	t.improve(inc, "sat")
	return nil
}

// addBlocks adds the node blocks of the (job, node) violations, each for
// the node's whole symmetry class; a violation of a block already
// written is a bug.
func (t *searcher) addBlocks(ctx context.Context, viol [][2]int) error {
	m := t.m
	for _, v := range viol {
		if t.enc.HasBlock(v[0], v[1]) {
			return fmt.Errorf("sat: job %s on node %s violates a constraint already encoded (a bug)",
				m.Jobs[v[0]].ID, m.Window.Topology.Name(m.Nodes[v[1]].ID))
		}
	}
	te := time.Now()
blocking:
	for _, v := range viol {
		for ni := range m.Nodes {
			if m.Nodes[ni].Class == m.Nodes[v[1]].Class && !t.enc.HasBlock(v[0], ni) {
				if ctx.Err() != nil {
					// A class's blocks take long on large windows; the
					// probe loop ends at its top.
					break blocking
				}
				t.enc.NodeBlock(v[0], ni)
				t.blocks++
			}
		}
	}
	t.encodeTime += time.Since(te)
	return nil
}

// improve makes inc, found by from, the incumbent; the next probe is
// from above.
func (t *searcher) improve(inc *incumbent, from string) {
	t.best = inc
	t.above = true
	t.progress(from)
}

// progress publishes the incumbent and the proven bound (poster) and
// writes a progress line (see Solver.Progress), one worker at a time.
func (t *searcher) progress(from string) {
	t.opt.post.publish(t.best, t.lb+t.proven)
	if t.opt.Progress == nil {
		return
	}
	if t.share != nil {
		t.share.out.Lock()
		defer t.share.out.Unlock()
	}
	t.opt.progress(t.m, t.start, from, t.best.w, t.lb+t.proven)
}

// count writes the search's counters into its stats.
func (t *searcher) count() {
	st := t.stats
	st.ProvenDelta, st.LNSMS, st.SATCalls, st.NodeBlocks = t.proven, ms(t.lnsTime), t.calls, t.blocks
	st.Vars, st.Clauses, st.SolveMS, st.EncodeMS = t.enc.NumVars(), t.enc.NumClauses(), ms(t.solveTime), ms(t.encodeTime)
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

// lastSearch runs the last search, with the pool cuts (measured: more
// proofs than with cuts in every search) and the fixing fix (nil: none):
// on one goroutine with Solver.Sequential or when GOMAXPROCS is 1, else
// beside a prover that probes from below (see Solver.Sequential); the
// prover's counters go into st.Prover.
func (s Solver) lastSearch(ctx context.Context, m *cp.Model, best *incumbent, proven int64, groups *groupBounds, fix *fixing, st *solver.SATStats, start time.Time) (*incumbent, int64, error) {
	main := role{cuts: true, fix: fix}
	if s.Sequential || best == nil || runtime.GOMAXPROCS(0) < 2 {
		return s.newSearcher(m, main, &st.Search, start).run(ctx, best, proven, groups)
	}
	sh := &shared{best: best, proven: proven}
	main.share = sh
	prover := main
	prover.prover = true
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var perr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, perr = s.newSearcher(m, prover, &st.Prover, start).run(pctx, best, proven, groups)
	}()
	_, _, err := s.newSearcher(m, main, &st.Search, start).run(ctx, best, proven, groups)
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
