package pbsched

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/output"
	"github.com/optsched/optsched/solver"
)

// The two paths a job can take to a start (StartDoc.Path).
const (
	PathWhole   = "whole-node"
	PathPartial = "partial-node"
)

// Start is one job that starts this cycle.
type Start struct {
	Job   string
	Queue string
	// Path is PathWhole or PathPartial; Placement names what placed it
	// (the window solver, or "first-fit"); Why says why the job took
	// this path.
	Path, Placement, Why string
	Chunks               []VChunk
	// Cost is the CH cost of a whole-node job's vnode set; -1 for a
	// partial-node job.
	Cost int64
}

// ExecVnode returns the start's qrun -H vnode specification.
func (s *Start) ExecVnode() string { return execVnode(s.Chunks) }

// Nodes returns the distinct vnodes of the start, in order.
func (s *Start) Nodes() []string {
	var out []string
	for _, c := range s.Chunks {
		if !slices.Contains(out, c.Vnode) {
			out = append(out, c.Vnode)
		}
	}
	return out
}

// Plan is a cycle's decision.
type Plan struct {
	// Header is what the plan's documents say of the state and the
	// cluster it was made from.
	Header   Header
	Starts   []*Start
	Deferred []Reason
	// Window is the whole-node jobs' window (nil when there were none),
	// Allocs their allocations as the solver gave them, checked by
	// model.Check.
	Window *model.Window
	Allocs []model.Allocation
	// Solve summarises the window solve.
	Solve SolveDoc[int64]
	// CP summarises the partial-node cp schedule (nil when there was
	// none); CPWindow and CPAllocs are its window and checked schedule.
	CP       *SolveDoc[float64]
	CPWindow *model.Window
	CPAllocs []model.Allocation
	Notes    []string
	Digest   string
	// Selection is the selection the plan was made with
	// (SelectionBackfill or SelectionLan2023); Reservation the start it
	// holds for the first job that does not fit now (backfill only; nil
	// when every job fits or none waits behind one).
	Selection   string
	Reservation *Reservation
	// Order is the order the queued jobs were considered in (OrderFIFO or
	// OrderSJF).
	Order string
}

// Header is what a plan's documents say of the state and the cluster it
// was made from.
type Header struct {
	// Server and PBSVersion name the server; Time is the state's time.
	Server, PBSVersion string
	Time               int64
	// Topology says how the topology was built; Nodes counts the vnodes;
	// Skipped are the queued jobs that are not candidates, with why.
	Topology string
	Nodes    NodesDoc
	Skipped  []Reason
}

// header is the Header of plans made on c.
func (c *cluster) header() Header {
	h := Header{Server: c.st.Jobs.Server, PBSVersion: c.st.Jobs.Version, Time: c.st.Now, Topology: c.topoNote,
		Nodes: c.nodeCounts(), Skipped: c.skipped}
	if h.Server == "" {
		h.Server = c.st.Nodes.Server
	}
	return h
}

// SolveDoc reports one solve of a cycle: the whole-node window
// (SolveDoc[int64], its objective the CH cost) or the partial-node cp
// schedule (SolveDoc[float64], its objective the total queue time).
type SolveDoc[O solver.ObjectiveValue] struct {
	Jobs      int      `json:"jobs"`
	Status    string   `json:"status"`
	Solver    string   `json:"solver"`
	Objective *O       `json:"objective"`
	Bound     *float64 `json:"bound"`
	Gap       *float64 `json:"gap"`
	ElapsedMS float64  `json:"elapsed_ms"`
	// Fallback says why a fallback placed the jobs, when one did.
	Fallback string `json:"fallback,omitempty"`
}

// solveDoc returns the report of res, the answer of the solve of window
// w, with the fallback note fallback.
func solveDoc[O solver.ObjectiveValue](w *model.Window, res *solver.WindowAnswer[O], fallback string) SolveDoc[O] {
	head := *res // the figures only: its document would list every allocation
	head.Allocations, head.Deferred = nil, nil
	d := output.Answer(w, &head)
	return SolveDoc[O]{Jobs: len(w.Jobs), Status: d.Status, Solver: d.Solver, Objective: d.Objective, Bound: d.Bound, Gap: d.Gap,
		ElapsedMS: d.ElapsedMS, Fallback: fallback}
}

// Options are the decision settings of a cycle.
type Options struct {
	// TimeLimit bounds the cycle's solves together.
	TimeLimit time.Duration
	// MaxJobs caps the multi-node whole-node jobs of a cycle; 0 = no cap.
	MaxJobs int
	// Cost is the CH cost model of the whole-node window (lan-code or
	// lan-paper; "" is the default).
	Cost string
	// Solver is the whole-node window solver, built (an exact solver in
	// the time-limited portfolio with its fallback; nil:
	// catalog.DefaultWindow, csp with SA in the reserve).
	Solver solver.Solver
	// Fallbacks are tried in order when the solver fails or finds
	// nothing (nil: catalog.WindowFallbacks).
	Fallbacks []solver.Solver
	// Partial is PartialCP or PartialFirstFit ("" is first fit).
	Partial string
	// ReserveAfter and StarveAfter delay the backfill selection's
	// reservation: the first job that does not fit now gets it only once
	// its bounded slowdown so far, (wait + walltime) / max(walltime,
	// 10 s), has reached ReserveAfter, or once it has waited StarveAfter
	// (when positive: PBS's max_starve); until then it waits without
	// holding anything back, and the jobs behind it start whenever they
	// fit, as under PBS's own scheduler without strict ordering.
	// ReserveAfter at most 1 (the zero value) reserves at once: EASY;
	// +Inf never by slowdown.
	ReserveAfter float64
	StarveAfter  time.Duration
	// Selection is SelectionBackfill or SelectionLan2023 ("" is
	// backfill).
	Selection string
	// CompactWait, when on, holds a whole-node job of several vnodes
	// that fits now but not within one switch back for a while, when one
	// switch will have room soon (heuristics.DecideCompactWait): it gets
	// the cycle's reservation, on that switch's vnodes, and the window
	// leaves the switch's idle vnodes alone. Backfill selection only.
	CompactWait heuristics.CompactWait
	// Order is the order in which queued jobs are considered: OrderSJF
	// or OrderFIFO; "" is OrderSJF, and OrderFIFO under SelectionLan2023
	// (the paper's selection in the paper's order).
	Order string
	// Schedulers schedule the partial-node jobs under PartialCP, the
	// first that answers wins (nil: catalog.PartialSchedulers).
	Schedulers []solver.Scheduler
	// Start is when the cycle began (its documents were read from then
	// on): TimeLimit counts from there (the zero time: from Decide's
	// call). The solves end at cycleDeadline, which keeps a reserve for
	// the work after them.
	Start time.Time
	// deadline ends the cycle's solves: plan sets it to timeLimit from
	// its start, so the CP/SAT schedule (at most half of it per run) and
	// the whole-node window share one time limit.
	deadline time.Time
}

// Decide builds the scheduling view of a state within a scope and decides
// one cycle: which queued jobs start now and on which vnodes, and why
// every other waits. Input that cannot be trusted is an error naming the
// job or vnode and the attribute; the plan still has to pass Check before
// anything runs.
func Decide(ctx context.Context, st *State, sc *Scope, opt Options) (*Plan, error) {
	c, err := buildCluster(st, sc)
	if err != nil {
		return nil, err
	}
	if opt.Fallbacks == nil {
		opt.Fallbacks = catalog.WindowFallbacks()
	}
	if opt.Solver == nil {
		opt.Solver = catalog.DefaultWindow()
	}
	if opt.Schedulers == nil {
		opt.Schedulers = catalog.PartialSchedulers()
	}
	if opt.Start.IsZero() {
		opt.Start = time.Now()
	}
	opt.deadline = cycleDeadline(opt.Start, opt.TimeLimit, c)
	return plan(ctx, c, opt)
}

// selectFloor is how many jobs, in priority order, a cycle's selection
// considers whatever the time left.
const selectFloor = 16

// plan decides one cycle: which candidates start and where, in three
// stages with plain values between them: the selection (selectJobs: which
// candidates go on, by which path, which wait, the reservation), the
// placement (place: the whole-node window and the cp schedule) and the
// plan (assemble: the starts in selection order, the reservation enforced
// on the final starts).
//
// Candidates are taken in the order of the window selection of [Lan23]
// §III-C (model.Order: more waiting periods first, then fewer units, then
// qstat order), each while it fits: a whole-node job needs as many idle
// vnodes as it has units, counting those held by the whole-node jobs
// before it; a partial-node job is placed at once by the first fit
// (fitState), using idle vnodes only as far as the earlier whole-node
// jobs leave them. With SelectionLan2023, selection stops at the first
// job that does not fit now (so that small jobs do not starve a large
// one); with SelectionBackfill (the default) that job gets a reservation
// (reserve, backfill.go) and later jobs start when they fit now and do
// not delay it, re-checked on the final starts (enforceReservation); a
// job that could not
// run on the owned vnodes even if they were all free is deferred without
// stopping it. The whole-node jobs then go through the usual window solve
// on the idle vnodes the partial-node jobs left (solver.SolveWindow: the
// exact solver within the time limit, its fallback, model.Check), and a
// solver error or an empty answer falls back to the heuristics.
//
// With opt.Partial == PartialCP the partial-node jobs the time-and-resource
// model can express (cpEligible) go through the cp schedule of pbscp.go,
// which decides when and where they start. Queue order holds across the
// paths: in selection order each cp job holds, by the first fit, the room
// it needs now (so the whole-node jobs behind it get only the idle vnodes
// it leaves), and a cp job that does not fit now stops the whole-node and
// first-fit jobs behind it, as any job that does not fit does; the cp jobs
// behind it still go to the cp schedule, which plans every cp job's start.
// The whole-node window then solves on the idle vnodes nobody holds, and
// the cp schedule runs on every free vnode the whole-node starts leave —
// at least the room the first fit held. When every cp scheduler fails, the
// cp jobs start where the first fit held room for them.
func plan(ctx context.Context, c *cluster, opt Options) (*Plan, error) {
	if opt.deadline.IsZero() {
		opt.deadline = time.Now().Add(opt.TimeLimit)
	}
	selectionKind, order := opt.Selection, opt.Order
	if selectionKind == "" {
		selectionKind = SelectionBackfill
	}
	if order == "" {
		// The paper's selection keeps the paper's order.
		order = OrderSJF
		if selectionKind == SelectionLan2023 {
			order = OrderFIFO
		}
	}
	sel := selectJobs(c, opt, selectionKind, order)
	pl, err := place(ctx, c, sel, opt)
	if err != nil {
		return nil, err
	}
	p := assemble(c, sel, pl)
	p.Selection, p.Order = selectionKind, order
	return p, nil
}

// assemble is the plan stage: the selection's and the placement's
// starts, deferrals and notes in one Plan, the reservation re-derived on
// the final starts (enforceReservation), starts and deferrals in
// selection order.
func assemble(c *cluster, sel selection, pl *placement) *Plan {
	p := &Plan{Header: c.header(), Digest: c.st.Digest,
		Notes:    slices.Concat(c.notes, sel.notes, pl.Notes),
		Deferred: slices.Concat(sel.deferred, pl.deferred),
		Solve:    pl.Solve, Window: pl.Window, Allocs: pl.Allocs, CP: pl.CP, CPWindow: pl.CPWindow, CPAllocs: pl.CPAllocs}
	if sel.hold != nil {
		p.Reservation = &sel.hold.res.doc
	}
	p.Starts = slices.Concat(pl.whole, pl.partial)
	c.enforceReservation(p, sel.rank, sel.hold)
	slices.SortStableFunc(p.Starts, func(a, b *Start) int { return sel.rank[a.Job] - sel.rank[b.Job] })
	slices.SortStableFunc(p.Deferred, func(a, b Reason) int { return sel.rank[a.Job] - sel.rank[b.Job] })
	return p
}

// neverFits says why a candidate could not run on the owned vnodes even
// if all of them were free and empty, or "". The answer of the first fit
// on the empty vnodes depends only on the job's queue, place and chunks,
// so it is kept by those (fitKey): each fit costs a pass over every vnode
// per unit.
func (c *cluster) neverFits(cand *candidate) string {
	if cand.whole {
		if n := len(cand.units); n > len(c.vnodes) {
			return fmt.Sprintf("needs %s, optsched has %d", plural(n, "whole vnode"), len(c.vnodes))
		}
		return ""
	}
	key := fitKey(cand)
	if why, ok := c.never[key]; ok {
		return why
	}
	if c.never == nil {
		c.never = map[string]string{}
	}
	why := ""
	switch fits, decided := c.fitsEmpty(cand); {
	case fits:
	case decided:
		// No vnode takes the packed job: the first fit's reason
		// depends on the number of chunks only (the key cannot be a
		// fitKey, which starts with a quote).
		pk := fmt.Sprintf("pack %d", len(cand.units))
		var ok bool
		if why, ok = c.never[pk]; !ok {
			_, _, why = newFitState(c, true).place(cand, math.MaxInt)
			c.never[pk] = why
		}
	default:
		_, _, why = newFitState(c, true).place(cand, math.MaxInt)
	}
	c.never[key] = why
	return why
}

// fitsEmpty answers, for a job of one kind of chunk, what the first fit
// on the empty vnodes would, from unitFits (unitMisfit: the first fit's
// test of an empty vnode) alone, without the first fit's pass over every
// vnode per unit. A packed job fits when some vnode takes all its chunks
// at once, and does not otherwise; any other job fits when each unit fits
// a vnode of its own (the first fit fills the vnodes in turn, or puts one
// unit on each for scatter), and is not decided otherwise (decided false).
func (c *cluster) fitsEmpty(cand *candidate) (fits, decided bool) {
	if len(cand.chunks) != 1 || cand.job.Place.Group != "" || c.anyMultiVnodeHost() {
		// place=group, and scatter, pack and exclhost on multi-vnode
		// hosts, are the first fit's to decide.
		return false, false
	}
	u := cand.chunks[0]
	if cand.job.Place.Arrangement == "pack" && len(cand.units) > 1 {
		all := chunkReq{amounts: model.Resources{}, labels: u.labels}
		for k, a := range u.amounts {
			all.amounts[k] = a * int64(len(cand.units))
		}
		for _, v := range c.vnodes {
			if unitFits(c, v, all, cand.job) {
				return true, true
			}
		}
		return false, true
	}
	n := 0
	for _, v := range c.vnodes {
		if unitFits(c, v, u, cand.job) {
			if n++; n >= len(cand.units) {
				return true, true
			}
		}
	}
	return false, false
}

// fitKey writes what fitState.place reads of a candidate: its queue, its
// place, and each chunk of its select (resources and properties) with
// its count — or every unit, should the chunks not add up to them.
func fitKey(cand *candidate) string {
	j := cand.job
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %q %q", j.Queue, j.Place.Arrangement, j.Place.Sharing, j.Place.Group)
	unit := func(count int, u chunkReq) {
		fmt.Fprintf(&b, " %d", count)
		for _, k := range slices.Sorted(maps.Keys(u.amounts)) {
			fmt.Fprintf(&b, " a%q=%d", k, u.amounts[k])
		}
		for _, k := range slices.Sorted(maps.Keys(u.labels)) {
			fmt.Fprintf(&b, " l%q=%q", k, u.labels[k])
		}
	}
	counts := []int{len(cand.units)} // no select: one chunk
	if j.Select != nil {
		counts = counts[:0]
		for _, ch := range j.Select {
			counts = append(counts, ch.Count)
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if len(counts) != len(cand.chunks) || total != len(cand.units) {
		for _, u := range cand.units {
			unit(1, u)
		}
		return b.String()
	}
	for i, ch := range cand.chunks {
		unit(counts[i], ch)
	}
	return b.String()
}

// solveWithFallback solves the whole-node window with the configured
// solver and, when it fails or finds nothing, with each fallback
// heuristic in turn; the plan records what happened. It returns an error
// only when every one of them failed.
func solveWithFallback(ctx context.Context, w *model.Window, opt Options, p *placement) (*solver.WindowResult, error) {
	p.Solve.Jobs = len(w.Jobs)
	ss := append([]solver.Solver{opt.Solver}, opt.Fallbacks...)
	res, failures := firstAnswer(ctx, w, ss, "allocation",
		func(solver.Solver) (solver.Options, error) {
			return solver.Options{TimeLimit: opt.left(opt.TimeLimit)}, nil
		})
	if res == nil {
		return nil, fmt.Errorf("whole-node window: every solver failed: %w", errors.Join(failures...))
	}
	var fallback string
	if len(failures) > 0 { // the failures are ss's first ones, in order
		fallback = fmt.Sprintf("%v; the %s heuristic placed the whole-node jobs", errors.Join(failures...), ss[len(failures)].Name())
		p.Notes = append(p.Notes, "window solver failed, fallback used: "+fallback)
	}
	p.Solve = solveDoc(w, res, fallback)
	return res, nil
}

// firstAnswer solves w with each of ss in turn (solver.SolveWindow, with
// the options opt gives, or skipped with its error) until one answers
// with an allocation (what: allocation, schedule), and returns that
// answer (nil when none did) and why each before it failed, one error
// a solver of ss in order.
func firstAnswer[O solver.ObjectiveValue](ctx context.Context, w *model.Window, ss []solver.SolverOf[O], what string,
	opt func(solver.SolverOf[O]) (solver.Options, error)) (*solver.WindowAnswer[O], []error) {
	var failures []error
	for _, s := range ss {
		o, err := opt(s)
		var res *solver.WindowAnswer[O]
		if err == nil {
			res, err = solver.SolveWindow(ctx, w, s, o)
		}
		switch {
		case err != nil:
			failures = append(failures, fmt.Errorf("%s: %w", s.Name(), err))
		case res.Status == solver.Unknown || res.Status == solver.Infeasible:
			failures = append(failures, fmt.Errorf("%s: %s, no %s", s.Name(), res.Status, what))
		default:
			return res, failures
		}
	}
	return nil, failures
}

// left returns the time limit of one solve of the cycle: at most want,
// and no more than what is left before the cycle's deadline (1 ms at
// least, so that a late solve still answers with its heuristic).
func (o Options) left(want time.Duration) time.Duration {
	if o.deadline.IsZero() {
		return want
	}
	return max(time.Millisecond, min(want, time.Until(o.deadline)))
}

// slowdownSoFar is a queued job's bounded slowdown were it to start now,
// (wait + walltime) / max(walltime, 10 s), on its requested walltime.
func slowdownSoFar(cand *candidate, now int64) float64 {
	w := max(cand.walltime, 10)
	return float64(max(now-cand.submit, 0)+cand.walltime) / float64(w)
}
