package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// The two paths a job can take to a start.
const (
	pathWhole   = "whole-node"
	pathPartial = "partial-node"
)

// pbsStart is one job that starts this cycle.
type pbsStart struct {
	Job   string
	Queue string
	// Path is pathWhole or pathPartial; Placement names what placed it
	// (the window solver, or "first-fit"); Why says why the job took
	// this path.
	Path, Placement, Why string
	Chunks               []pbsVChunk
	// Cost is the CH cost of a whole-node job's vnode set; -1 for a
	// partial-node job.
	Cost int64
	// Result of running qrun, when applied.
	Applied  bool
	ExitCode int
	Error    string
}

// ExecVnode returns the start's qrun -H vnode specification.
func (s *pbsStart) ExecVnode() string { return execVnode(s.Chunks) }

// Nodes returns the distinct vnodes of the start, in order.
func (s *pbsStart) Nodes() []string {
	var out []string
	for _, c := range s.Chunks {
		if !slices.Contains(out, c.Vnode) {
			out = append(out, c.Vnode)
		}
	}
	return out
}

// pbsPlan is a cycle's decision.
type pbsPlan struct {
	c        *cluster
	Starts   []*pbsStart
	Deferred []pbsReason
	// Window is the whole-node jobs' window (nil when there were none),
	// Allocs their allocations as the solver gave them, checked by
	// model.Check.
	Window *model.Window
	Allocs []model.Allocation
	// Solve summarises the window solve.
	Solve pbsSolveDoc
	// CP summarises the partial-node cp schedule (nil when there was
	// none); CPWindow and CPAllocs are its window and checked schedule.
	CP       *cpDoc
	CPWindow *model.Window
	CPAllocs []model.Allocation
	Notes    []string
	Digest   string
}

// pbsSolveDoc reports the whole-node window solve.
type pbsSolveDoc struct {
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

// planOptions are the decision settings of a cycle.
type planOptions struct {
	timeLimit time.Duration
	maxJobs   int
	cost      string
	// newSolver makes the window solver (the exact solver in the
	// time-limited portfolio with its fallback).
	newSolver func() (solver.Solver, error)
	// fallbacks are tried in order when the solver fails or finds
	// nothing.
	fallbacks []solver.Solver
	// partial is partialCP or partialFirstFit ("" is first fit).
	partial string
	// deadline ends the cycle's solves, so that the CP/SAT schedule (at
	// most half of the time limit) and the whole-node window share one
	// time limit: the cycle sets it (cycleDeadline), else plan sets it
	// to timeLimit from its start.
	deadline time.Time
	// newSchedulers, when set, replaces defaultCPSchedulers (tests).
	newSchedulers func() []solver.Scheduler
}

// plan decides one cycle: which candidates start and where.
//
// Candidates are taken in the order of the window selection of [Lan23]
// §III-C (model.Order: more waiting periods first, then fewer units, then
// qstat order), each while it fits: a whole-node job needs as many idle
// vnodes as it has units, counting those held by the whole-node jobs
// before it; a partial-node job is placed at once by the first fit
// (fitState), using idle vnodes only as far as the earlier whole-node
// jobs leave them. Selection stops at the first job that does not fit now
// (so that small jobs do not starve a large one); a job that could not
// run on the owned vnodes even if they were all free is deferred without
// stopping it. The whole-node jobs then go through the usual window solve
// on the idle vnodes the partial-node jobs left (solver.SolveWindow: the
// exact solver within the time limit, its fallback, model.Check), and a
// solver error or an empty answer falls back to the heuristics.
//
// With opt.partial == partialCP the partial-node jobs the time-and-resource
// model can express (cpEligible) do not take the first fit and do not stop
// the selection: they go through the cp schedule of pbscp.go on every free
// vnode, before the whole-node window. Its starts of now are kept when
// they leave the selected whole-node jobs enough idle vnodes; otherwise
// the whole-node window goes first and the cp schedule is redone on the
// vnodes it leaves. When every cp scheduler fails, the first fit places
// those jobs as without --partial cp.
func plan(ctx context.Context, c *cluster, opt planOptions) (*pbsPlan, error) {
	if opt.deadline.IsZero() {
		opt.deadline = time.Now().Add(opt.timeLimit)
	}
	p := &pbsPlan{c: c, Notes: slices.Clone(c.notes), Digest: c.st.digest}
	// Selection order: model.Order over the candidates.
	ow := &model.Window{Jobs: make([]model.Job, len(c.cands))}
	for i, cand := range c.cands {
		ow.Jobs[i] = model.Job{ID: cand.job.ID, Nodes: len(cand.units), NWP: cand.nwp}
	}
	order := model.Order(ow)

	fit := newFitState(c, false)
	idleLeft := 0
	for _, v := range c.vnodes {
		if v.idle {
			idleLeft++
		}
	}
	var whole []*candidate
	wholeNeed, multi := 0, 0
	var partial []*pbsStart
	var cpCands []*candidate
	// firstFit places cand by the first fit on what the whole-node jobs
	// leave; a job that does not fit is deferred and stops the selection:
	// it returns the reason for the jobs behind it ("" when cand fits).
	firstFit := func(cand *candidate, why string) string {
		chunks, usedIdle, reason := fit.place(cand, idleLeft-wholeNeed)
		if reason != "" {
			p.Deferred = append(p.Deferred, pbsReason{cand.job.ID, reason})
			return fmt.Sprintf("queued behind job %s, which does not fit (selection stops at the first job that does not fit)", cand.job.ID)
		}
		idleLeft -= usedIdle
		partial = append(partial, &pbsStart{Job: cand.job.ID, Queue: cand.job.Queue, Path: pathPartial,
			Placement: "first-fit", Why: why, Chunks: chunks, Cost: -1})
		return ""
	}
	stopped := ""
	for _, i := range order {
		cand := c.cands[i]
		if stopped != "" {
			p.Deferred = append(p.Deferred, pbsReason{cand.job.ID, stopped})
			continue
		}
		if why := c.neverFits(cand); why != "" {
			p.Deferred = append(p.Deferred, pbsReason{cand.job.ID, "can never run on optsched's vnodes: " + why})
			continue
		}
		n := len(cand.units)
		if cand.whole {
			if n >= 2 && opt.maxJobs > 0 && multi == opt.maxJobs {
				p.Deferred = append(p.Deferred, pbsReason{cand.job.ID, fmt.Sprintf("the window already holds the maximum of %d multi-node jobs (--max-jobs)", opt.maxJobs)})
				stopped = fmt.Sprintf("queued behind job %s (selection stops at the first job that does not start)", cand.job.ID)
				continue
			}
			if wholeNeed+n > idleLeft {
				p.Deferred = append(p.Deferred, pbsReason{cand.job.ID,
					fmt.Sprintf("needs %s, %s left after higher-priority jobs", plural(n, "whole vnode"), plural(idleLeft-wholeNeed, "idle vnode"))})
				stopped = fmt.Sprintf("queued behind job %s, which does not fit (selection stops at the first job that does not fit)", cand.job.ID)
				continue
			}
			wholeNeed += n
			if n >= 2 {
				multi++
			}
			whole = append(whole, cand)
			continue
		}
		ffWhy := cand.path
		if opt.partial == partialCP {
			why := c.cpEligible(cand)
			if why == "" {
				// Scheduled by the cp schedule below.
				cpCands = append(cpCands, cand)
				continue
			}
			ffWhy += "; first fit, since the cp scheduler cannot take it: " + why
		}
		stopped = firstFit(cand, ffWhy)
	}

	// The partial-node cp schedule, first on every free vnode; kept when
	// its starts leave the whole-node jobs enough idle vnodes, else redone
	// after the whole-node window on the vnodes that leaves.
	cpDone := false
	if len(cpCands) > 0 {
		starts, deferred, why, ok := schedulePartialCP(ctx, c, cpCands, nil, partial, opt, p)
		if !ok {
			// Every scheduler failed: the first fit, before the
			// whole-node window as with --partial first-fit.
			cpDone = true
			p.Notes = append(p.Notes, "partial-node schedulers failed ("+why+"); the first fit placed those jobs")
			p.CP.Fallback = why + "; the first fit placed the jobs"
			stopped := ""
			for _, cand := range cpCands {
				if stopped != "" {
					p.Deferred = append(p.Deferred, pbsReason{cand.job.ID, stopped})
					continue
				}
				stopped = firstFit(cand, cand.path)
			}
		} else {
			used := map[*vnode]bool{}
			for _, st := range starts {
				for _, n := range st.Nodes() {
					used[c.byName[n]] = true
				}
			}
			free := 0
			for _, v := range c.vnodes {
				if fit.idleNow(v) && !used[v] {
					free++
				}
			}
			if free >= wholeNeed {
				cpDone = true
				for v := range used {
					fit.touched[v] = true
				}
				partial = append(partial, starts...)
				p.Deferred = append(p.Deferred, deferred...)
			} else {
				p.Notes = append(p.Notes, fmt.Sprintf("the partial-node schedule on every free vnode left %s for %s of whole-node jobs; rescheduled after the whole-node window",
					plural(free, "idle vnode"), plural(wholeNeed, "vnode")))
			}
		}
	}
	// The whole-node window.
	p.Solve = pbsSolveDoc{Status: "none", Solver: "none"}
	var wholeStarts []*pbsStart
	if len(whole) > 0 {
		w := &model.Window{Time: c.st.now, Topology: c.topo, Cost: model.DefaultCostModel, Running: c.running}
		if opt.cost != "" {
			k, err := model.ParseCostKind(opt.cost)
			if err != nil {
				return nil, usageError{fmt.Errorf("--cost: %w", err)}
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
		p.Window = w
		p.Allocs = res.Allocations
		for _, d := range res.Deferred {
			p.Deferred = append(p.Deferred, pbsReason{w.Jobs[d.Job].ID, d.Reason})
		}
		for _, a := range res.Allocations {
			cand := whole[a.Job]
			st := &pbsStart{Job: cand.job.ID, Queue: cand.job.Queue, Path: pathWhole, Placement: res.Solver,
				Why: cand.path, Cost: w.Cost.Cost(w.Topology, a.Nodes)}
			for u, id := range a.Nodes {
				st.Chunks = append(st.Chunks, pbsVChunk{Vnode: w.Topology.Name(id), Amounts: cand.units[u].written, Labels: cand.units[u].wlabels})
			}
			wholeStarts = append(wholeStarts, st)
		}
	}
	if len(cpCands) > 0 && !cpDone {
		held := map[string]bool{}
		for _, st := range wholeStarts {
			for _, v := range st.Nodes() {
				held[v] = true
			}
		}
		starts, deferred, why, ok := schedulePartialCP(ctx, c, cpCands, held, partial, opt, p)
		if ok {
			partial = append(partial, starts...)
			p.Deferred = append(p.Deferred, deferred...)
		} else {
			p.Notes = append(p.Notes, "partial-node schedulers failed ("+why+"); the first fit placed those jobs")
			if p.CP != nil {
				p.CP.Fallback = why + "; the first fit placed the jobs"
			}
			for v := range held {
				fit.take(c.byName[v])
			}
			stopped := ""
			for _, cand := range cpCands {
				if stopped != "" {
					p.Deferred = append(p.Deferred, pbsReason{cand.job.ID, stopped})
					continue
				}
				chunks, _, why := fit.place(cand, math.MaxInt)
				if why != "" {
					p.Deferred = append(p.Deferred, pbsReason{cand.job.ID, why})
					stopped = fmt.Sprintf("queued behind job %s, which does not fit (selection stops at the first job that does not fit)", cand.job.ID)
					continue
				}
				partial = append(partial, &pbsStart{Job: cand.job.ID, Queue: cand.job.Queue, Path: pathPartial,
					Placement: "first-fit", Why: cand.path, Chunks: chunks, Cost: -1})
			}
		}
	}
	// Starts in selection order.
	rank := map[string]int{}
	for r, i := range order {
		rank[c.cands[i].job.ID] = r
	}
	p.Starts = slices.Concat(wholeStarts, partial)
	slices.SortStableFunc(p.Starts, func(a, b *pbsStart) int { return rank[a.Job] - rank[b.Job] })
	slices.SortStableFunc(p.Deferred, func(a, b pbsReason) int { return rank[a.Job] - rank[b.Job] })
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
	if len(cand.chunks) != 1 {
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
func solveWithFallback(ctx context.Context, w *model.Window, opt planOptions, p *pbsPlan) (*solver.WindowResult, error) {
	p.Solve.Jobs = len(w.Jobs)
	var failures []error
	try := func(s solver.Solver) *solver.WindowResult {
		res, err := solver.SolveWindow(ctx, w, s, solver.Options{TimeLimit: opt.left(opt.timeLimit)})
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
	if s, err := opt.newSolver(); err != nil {
		return nil, err
	} else {
		res = try(s)
	}
	for _, fb := range opt.fallbacks {
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
	d := res.Doc(w)
	p.Solve.Status, p.Solve.Solver = d.Status, d.Solver
	p.Solve.Objective, p.Solve.Bound, p.Solve.Gap, p.Solve.ElapsedMS = d.Objective, d.Bound, d.Gap, d.ElapsedMS
	return res, nil
}

// defaultFallbacks are the heuristics a cycle falls back to: Slurm's
// topology-aware best fit, then Lan et al.'s Seq.
func defaultFallbacks() []solver.Solver {
	return []solver.Solver{heuristics.Slurm{}, heuristics.Seq{}}
}

// left returns the time limit of one solve of the cycle: at most want,
// and no more than what is left before the cycle's deadline (1 ms at
// least, so that a late solve still answers with its heuristic).
func (o planOptions) left(want time.Duration) time.Duration {
	if o.deadline.IsZero() {
		return want
	}
	return max(time.Millisecond, min(want, time.Until(o.deadline)))
}
