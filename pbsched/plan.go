package pbsched

import (
	"cmp"
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
	// Result of running qrun, when applied; Args are the arguments it
	// ran with when the Runner says (see Apply).
	Applied  bool
	ExitCode int
	Error    string
	Args     []string
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
	c        *cluster
	Starts   []*Start
	Deferred []Reason
	// Window is the whole-node jobs' window (nil when there were none),
	// Allocs their allocations as the solver gave them, checked by
	// model.Check.
	Window *model.Window
	Allocs []model.Allocation
	// Solve summarises the window solve.
	Solve SolveDoc
	// CP summarises the partial-node cp schedule (nil when there was
	// none); CPWindow and CPAllocs are its window and checked schedule.
	CP       *CPDoc
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
	// headReason is the reserved whole-node or first-fit job's reason
	// before its reservation is described.
	headReason string
}

// SolveDoc reports the whole-node window solve.
type SolveDoc struct {
	Jobs      int      `json:"jobs"`
	Status    string   `json:"status"`
	Solver    string   `json:"solver"`
	Objective *int64   `json:"objective"`
	Bound     *float64 `json:"bound"`
	Gap       *float64 `json:"gap"`
	ElapsedMS float64  `json:"elapsed_ms"`
	// Fallback says why the heuristic fallback placed the jobs, when it did.
	Fallback string `json:"fallback,omitempty"`
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
	// NewSolver makes the window solver (the exact solver in the
	// time-limited portfolio with its fallback; DefaultSolver when nil).
	NewSolver func() (solver.Solver, error)
	// Fallbacks are tried in order when the solver fails or finds
	// nothing (DefaultFallbacks when nil).
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
	// Order is the order in which queued jobs are considered: OrderSJF
	// or OrderFIFO; "" is OrderSJF, and OrderFIFO under SelectionLan2023
	// (the paper's selection in the paper's order).
	Order string
	// NewSchedulers, when set, replaces DefaultCPSchedulers.
	NewSchedulers func() []solver.Scheduler
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
		opt.Fallbacks = DefaultFallbacks()
	}
	if opt.NewSolver == nil {
		opt.NewSolver = func() (solver.Solver, error) { return DefaultSolver(), nil }
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

// DefaultSolver is the whole-node window solver of a cycle: csp within
// the time limit, with simulated annealing (Table I) in the reserve —
// what `optsched pbs` runs by default (catalog.DefaultWindow).
func DefaultSolver() solver.Solver { return catalog.DefaultWindow() }

// Applied reports whether qrun ran for any start.
func (p *Plan) Applied() bool {
	for _, s := range p.Starts {
		if s.Applied {
			return true
		}
	}
	return false
}

// plan decides one cycle: which candidates start and where.
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
	p := &Plan{c: c, Notes: slices.Clone(c.notes), Digest: c.st.Digest, Selection: opt.Selection, Order: opt.Order}
	if p.Selection == "" {
		p.Selection = SelectionBackfill
	}
	if p.Order == "" {
		// The paper's selection keeps the paper's order.
		p.Order = OrderSJF
		if p.Selection == SelectionLan2023 {
			p.Order = OrderFIFO
		}
	}
	// bf: backfilling (SelectionBackfill). The first job that does not
	// fit now gets a reservation (res) instead of stopping the
	// selection; the jobs behind it start when they fit now and do not
	// delay it.
	bf := p.Selection == SelectionBackfill
	now := c.st.Now
	var res *reserve
	var head *candidate
	headIdx := -1
	// Selection order: model.Order over the candidates.
	ow := &model.Window{Jobs: make([]model.Job, len(c.cands))}
	for i, cand := range c.cands {
		ow.Jobs[i] = model.Job{ID: cand.job.ID, Nodes: len(cand.units), NWP: cand.nwp}
	}
	order := model.Order(ow)
	if p.Order == OrderSJF {
		// Shortest requested walltime first; model.Order among equals.
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(c.cands[a].walltime, c.cands[b].walltime) })
	}

	fit := newFitState(c, false)
	idleLeft := 0
	for _, v := range c.vnodes {
		if v.idle {
			idleLeft++
		}
	}
	var whole []*candidate
	wholeNeed, multi := 0, 0
	var partial []*Start
	var cpCands []*candidate
	// reserved is, for each cp candidate, where the first fit held room
	// for it in selection order, or why it could not.
	type reservation struct {
		chunks []VChunk
		why    string
	}
	reserved := map[*candidate]reservation{}
	// claims are what the starts selected so far hold, for a reservation.
	claims := func() []claim {
		var out []claim
		for _, w := range whole {
			out = append(out, claim{job: w.job.ID, anon: len(w.units), end: now + w.walltime})
		}
		for _, s := range partial {
			out = append(out, claim{job: s.Job, nodes: s.Nodes(), end: now + c.wallOf(s.Job)})
		}
		for _, cand := range cpCands {
			if r := reserved[cand]; r.why == "" && len(r.chunks) > 0 {
				out = append(out, claim{job: cand.job.ID, nodes: chunkVnodes(r.chunks), end: now + cand.walltime})
			}
		}
		return out
	}
	// holdFor makes cand, the first job that does not fit now, the
	// reserved job; its reason (when it is deferred here) is at
	// p.Deferred[idx].
	holdFor := func(cand *candidate, reason string, idx int) {
		sd, waited := slowdownSoFar(cand, now), time.Duration(max(now-cand.submit, 0))*time.Second
		if sd < opt.ReserveAfter && (opt.StarveAfter <= 0 || waited < opt.StarveAfter) {
			if idx >= 0 {
				var from []string
				if !math.IsInf(opt.ReserveAfter, 1) {
					from = append(from, fmt.Sprintf("at a bounded slowdown of %.2f (now %.2f)", opt.ReserveAfter, sd))
				}
				if opt.StarveAfter > 0 {
					from = append(from, fmt.Sprintf("after a wait of %v (now %v)", opt.StarveAfter, waited))
				}
				p.Deferred[idx].Reason += "; no reservation yet (reservations " + strings.Join(from, " or ") + "): jobs behind it start when they fit"
			}
			return
		}
		res, head, headIdx, p.headReason = c.newReserve(cand, claims()), cand, idx, reason
		p.Reservation = &res.doc
		if idx >= 0 {
			p.Deferred[idx].Reason = reason + "; " + res.when(now)
		}
	}
	// firstFit places cand by the first fit on what the whole-node jobs
	// leave; a job that does not fit is deferred and stops the selection:
	// it returns the reason for the jobs behind it ("" when cand fits).
	firstFit := func(cand *candidate, why string) string {
		if res != nil && !res.endsBy(now, cand.walltime) {
			p.Deferred = append(p.Deferred, Reason{cand.job.ID, fmt.Sprintf("would end after the reservation of job %s at %s (a partial-node job backfills only when its walltime ends by then)", res.doc.Job, stamp(res.shadow))})
			return ""
		}
		chunks, usedIdle, reason := fit.place(cand, idleLeft-wholeNeed)
		if reason != "" {
			p.Deferred = append(p.Deferred, Reason{cand.job.ID, reason})
			if bf {
				if res == nil {
					holdFor(cand, reason, len(p.Deferred)-1)
				}
				return ""
			}
			return fmt.Sprintf("queued behind job %s, which does not fit (selection stops at the first job that does not fit)", cand.job.ID)
		}
		idleLeft -= usedIdle
		partial = append(partial, &Start{Job: cand.job.ID, Queue: cand.job.Queue, Path: PathPartial,
			Placement: "first-fit", Why: why, Chunks: chunks, Cost: -1})
		return ""
	}
	// stopped defers every job behind; stoppedNonCP the whole-node and
	// first-fit jobs behind a cp job that does not fit now.
	stopped, stoppedNonCP := "", ""
	// The selection (and the first fits in it) may take a quarter of the
	// time left for the solves; the jobs it has not reached by then wait
	// for the next cycle, in order. The first selectFloor jobs are always
	// considered, so that a cycle whose reading took its time (a loaded
	// machine) still starts the head of the queue.
	selEnd := time.Now().Add(time.Until(opt.deadline) / 4)
	for k, i := range order {
		cand := c.cands[i]
		if stopped == "" && k >= selectFloor && time.Now().After(selEnd) {
			stopped = "the cycle's time limit came before this job's turn in the selection (the next cycle takes it up)"
			p.Notes = append(p.Notes, "the selection stopped at the cycle's time limit; the jobs it did not reach wait for the next cycle")
		}
		if stopped != "" {
			p.Deferred = append(p.Deferred, Reason{cand.job.ID, stopped})
			continue
		}
		if why := c.neverFits(cand); why != "" {
			p.Deferred = append(p.Deferred, Reason{cand.job.ID, "can never run on optsched's vnodes: " + why})
			continue
		}
		n := len(cand.units)
		if cand.whole && stoppedNonCP != "" {
			p.Deferred = append(p.Deferred, Reason{cand.job.ID, stoppedNonCP})
			continue
		}
		if cand.whole {
			if n >= 2 && opt.MaxJobs > 0 && multi == opt.MaxJobs {
				p.Deferred = append(p.Deferred, Reason{cand.job.ID, fmt.Sprintf("the window already holds the maximum of %d multi-node jobs (--max-jobs)", opt.MaxJobs)})
				stopped = fmt.Sprintf("queued behind job %s (selection stops at the first job that does not start)", cand.job.ID)
				continue
			}
			if wholeNeed+n > idleLeft {
				reason := fmt.Sprintf("needs %s, %s left after higher-priority jobs", plural(n, "whole vnode"), plural(idleLeft-wholeNeed, "idle vnode"))
				p.Deferred = append(p.Deferred, Reason{cand.job.ID, reason})
				switch {
				case !bf:
					stopped = fmt.Sprintf("queued behind job %s, which does not fit (selection stops at the first job that does not fit)", cand.job.ID)
				case res == nil:
					holdFor(cand, reason, len(p.Deferred)-1)
				default:
					p.Deferred[len(p.Deferred)-1].Reason += fmt.Sprintf(" (job %s, the first that does not fit, holds the reservation)", res.doc.Job)
				}
				continue
			}
			if res != nil {
				if why := res.admitWhole(now, n, cand.walltime); why != "" {
					p.Deferred = append(p.Deferred, Reason{cand.job.ID, why})
					continue
				}
			}
			wholeNeed += n
			if n >= 2 {
				multi++
			}
			whole = append(whole, cand)
			continue
		}
		ffWhy := cand.path
		if opt.Partial == PartialCP {
			why := c.cpEligible(cand)
			if why == "" && res != nil && !res.endsBy(now, cand.walltime) {
				p.Deferred = append(p.Deferred, Reason{cand.job.ID, fmt.Sprintf("would end after the reservation of job %s at %s (a partial-node job backfills only when its walltime ends by then)", res.doc.Job, stamp(res.shadow))})
				continue
			}
			if why == "" {
				// Scheduled by the cp schedule below. In selection order
				// it holds, by the first fit, what it needs now, so that
				// lower-priority jobs cannot take it; when it does not fit
				// now, the whole-node and first-fit jobs behind it wait
				// (as behind any job that does not fit), while the cp
				// jobs behind it go on to the cp schedule, which plans
				// its start and theirs.
				cpCands = append(cpCands, cand)
				r := reservation{why: stoppedNonCP}
				if r.why == "" {
					var usedIdle int
					r.chunks, usedIdle, r.why = fit.place(cand, idleLeft-wholeNeed)
					switch {
					case r.why == "":
						idleLeft -= usedIdle
					case bf:
						// The cp schedule plans its start; the jobs
						// behind it hold its reservation.
						if res == nil {
							holdFor(cand, r.why, -1)
						}
					default:
						stoppedNonCP = fmt.Sprintf("queued behind job %s, which does not fit now (selection stops at the first job that does not fit)", cand.job.ID)
					}
				}
				reserved[cand] = r
				continue
			}
			ffWhy += "; first fit, since the cp scheduler cannot take it: " + why
		}
		if stoppedNonCP != "" {
			p.Deferred = append(p.Deferred, Reason{cand.job.ID, stoppedNonCP})
			continue
		}
		stopped = firstFit(cand, ffWhy)
	}

	// The whole-node window.
	p.Solve = SolveDoc{Status: "none", Solver: "none"}
	var wholeStarts []*Start
	if len(whole) > 0 {
		w := &model.Window{Time: c.st.Now, Topology: c.topo, Cost: model.DefaultCostModel, Running: c.running}
		if opt.Cost != "" {
			k, err := model.ParseCostKind(opt.Cost)
			if err != nil {
				return nil, fmt.Errorf("cost model: %w", err)
			}
			w.Cost.Kind = k
		}
		for _, v := range c.vnodes {
			if fit.idleNow(v) {
				w.Idle = append(w.Idle, v.id)
			}
		}
		slices.Sort(w.Idle)
		for _, cand := range whole {
			w.Jobs = append(w.Jobs, model.Job{ID: cand.job.ID, Nodes: len(cand.units), Walltime: cand.walltime,
				Submit: cand.submit, Queue: cand.job.Queue, NWP: cand.nwp, Select: cand.job.Select, Comm: true, Pattern: model.PatternRD})
		}
		res, err := solveWithFallback(ctx, w, opt, p)
		if err != nil {
			return nil, err
		}
		heuristics.BestFitMulti(w, res.Allocations)
		heuristics.BestFitSingles(w, res.Allocations)
		p.Window = w
		p.Allocs = res.Allocations
		for _, d := range res.Deferred {
			p.Deferred = append(p.Deferred, Reason{w.Jobs[d.Job].ID, d.Reason})
		}
		for _, a := range res.Allocations {
			cand := whole[a.Job]
			st := &Start{Job: cand.job.ID, Queue: cand.job.Queue, Path: PathWhole, Placement: res.Solver,
				Why: cand.path, Cost: w.Cost.Cost(w.Topology, a.Nodes)}
			for u, id := range a.Nodes {
				st.Chunks = append(st.Chunks, VChunk{Vnode: w.Topology.Name(id), Amounts: cand.units[u].written, Labels: cand.units[u].wlabels})
			}
			wholeStarts = append(wholeStarts, st)
		}
	}
	if len(cpCands) > 0 {
		// Held from the cp schedule: the whole-node starts' vnodes and
		// what first-fit jobs hold exclusively (a vnode, or every vnode
		// of a host).
		// The whole-node starts' vnodes are held until their walltime
		// ends (the cp schedule may plan a job there after it).
		held := map[string]bool{}
		wholeUntil := map[string]int64{}
		for _, st := range wholeStarts {
			for _, v := range st.Nodes() {
				wholeUntil[v] = now + c.wallOf(st.Job)
			}
		}
		for v := range fit.taken {
			held[v.n.Name] = true
		}
		starts, deferred, why, ok := schedulePartialCP(ctx, c, cpCands, held, wholeUntil, partial, opt, p)
		if ok {
			partial = append(partial, starts...)
			p.Deferred = append(p.Deferred, deferred...)
		} else {
			// Every cp scheduler failed: the jobs start where the first
			// fit held room for them in selection order (the whole-node
			// window took none of it); the others wait with the first
			// fit's reason.
			p.Notes = append(p.Notes, "partial-node schedulers failed ("+why+"); the first fit placed those jobs")
			if p.CP != nil {
				p.CP.Fallback = why + "; the first fit placed the jobs"
			}
			for _, cand := range cpCands {
				r := reserved[cand]
				if r.why != "" {
					p.Deferred = append(p.Deferred, Reason{cand.job.ID, r.why})
					continue
				}
				partial = append(partial, &Start{Job: cand.job.ID, Queue: cand.job.Queue, Path: PathPartial,
					Placement: "first-fit", Why: cand.path, Chunks: r.chunks, Cost: -1})
			}
		}
	}
	// Starts in selection order.
	rank := map[string]int{}
	for r, i := range order {
		rank[c.cands[i].job.ID] = r
	}
	p.Starts = slices.Concat(wholeStarts, partial)
	c.enforceReservation(p, rank, head, headIdx)
	slices.SortStableFunc(p.Starts, func(a, b *Start) int { return rank[a.Job] - rank[b.Job] })
	slices.SortStableFunc(p.Deferred, func(a, b Reason) int { return rank[a.Job] - rank[b.Job] })
	return p, nil
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
func solveWithFallback(ctx context.Context, w *model.Window, opt Options, p *Plan) (*solver.WindowResult, error) {
	p.Solve.Jobs = len(w.Jobs)
	var failures []error
	try := func(s solver.Solver) *solver.WindowResult {
		res, err := solver.SolveWindow(ctx, w, s, solver.Options{TimeLimit: opt.left(opt.TimeLimit)})
		switch {
		case err != nil:
			failures = append(failures, fmt.Errorf("%s: %w", s.Name(), err))
			return nil
		case res.Status == solver.Unknown || res.Status == solver.Infeasible:
			failures = append(failures, fmt.Errorf("%s: %s, no allocation", s.Name(), res.Status))
			return nil
		}
		return res
	}
	var res *solver.WindowResult
	if s, err := opt.NewSolver(); err != nil {
		return nil, err
	} else {
		res = try(s)
	}
	for _, fb := range opt.Fallbacks {
		if res != nil {
			break
		}
		if res = try(fb); res != nil {
			p.Solve.Fallback = fmt.Sprintf("%v; the %s heuristic placed the whole-node jobs", errors.Join(failures...), fb.Name())
			p.Notes = append(p.Notes, "window solver failed, fallback used: "+p.Solve.Fallback)
		}
	}
	if res == nil {
		return nil, fmt.Errorf("whole-node window: every solver failed: %w", errors.Join(failures...))
	}
	d := output.Answer(w, res)
	p.Solve.Status, p.Solve.Solver = d.Status, d.Solver
	p.Solve.Objective, p.Solve.Bound, p.Solve.Gap, p.Solve.ElapsedMS = d.Objective, d.Bound, d.Gap, d.ElapsedMS
	return res, nil
}

// DefaultFallbacks are the heuristics a cycle falls back to: Slurm's
// topology-aware best fit, then Lan et al.'s Seq.
func DefaultFallbacks() []solver.Solver {
	return []solver.Solver{heuristics.Slurm{}, heuristics.Seq{}}
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
