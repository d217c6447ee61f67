package pbsched

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/model"
)

// selection is the first stage's answer, a plain value: which candidates
// go on to the placement and by which path, which wait and why, and the
// reservation the backfill selection holds.
type selection struct {
	// order is the candidates' indices in selection order; rank each
	// job's place in it.
	order []int
	rank  map[string]int
	// whole are the whole-node jobs for the window; partial the starts
	// the first fit placed; cp the jobs for the cp schedule, with room
	// the first fit held for each in selection order (or why it could
	// not).
	whole   []*candidate
	partial []*Start
	cp      []*candidate
	room    map[*candidate]room
	// deferred are the jobs that wait, with why; notes what the plan
	// notes of the selection.
	deferred []Reason
	notes    []string
	// hold is the reservation (nil: none).
	hold *hold
	// idle are the ids of the vnodes the window may use (idle, and
	// untouched by the first fit); taken the vnodes the first-fit jobs
	// hold exclusively, by name.
	idle  []int
	taken map[string]bool
}

// room is where the first fit held room for a cp job in selection order,
// or why it could not.
type room struct {
	chunks []VChunk
	why    string
}

// hold is a backfill selection's reservation: for head, the first job
// that does not fit now, whose reason (reason, before the reservation is
// described) is deferred[idx] (idx -1: the job goes to the cp schedule).
type hold struct {
	res    *reserve
	head   *candidate
	idx    int
	reason string
}

// selectionOrder is the order in which the candidates are considered:
// model.Order (more waiting periods first, then fewer units, then qstat
// order), and under OrderSJF the shortest requested walltime first,
// model.Order among equals.
func selectionOrder(c *cluster, order string) []int {
	ow := &model.Window{Jobs: make([]model.Job, len(c.cands))}
	for i, cand := range c.cands {
		ow.Jobs[i] = model.Job{ID: cand.job.ID, Nodes: len(cand.units), NWP: cand.nwp}
	}
	out := model.Order(ow)
	if order == OrderSJF {
		slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(c.cands[a].walltime, c.cands[b].walltime) })
	}
	return out
}

// selector makes a selection: the state of the walk over the candidates.
type selector struct {
	c   *cluster
	opt Options
	now int64
	// bf: backfilling (SelectionBackfill). The first job that does not
	// fit now gets a reservation instead of stopping the selection; the
	// jobs behind it start when they fit now and do not delay it.
	bf  bool
	fit *fitState
	// idleLeft counts the idle vnodes the first fit has not used;
	// wholeNeed the vnodes the whole-node jobs selected need; multi the
	// multi-node ones among them.
	idleLeft, wholeNeed, multi int
	// stopped defers every job behind; stoppedNonCP the whole-node and
	// first-fit jobs behind a cp job that does not fit now.
	stopped, stoppedNonCP string
	s                     selection
	// compactHeld are the idle vnodes of the switch a job waits for
	// (Options.CompactWait): the window does not use them.
	compactHeld map[string]bool
	// compactTaken (CompactWait.Many) are the vnodes the rule counts as
	// taken for the later jobs of the cycle: those of the switches the
	// jobs before wait for, and those a job that fits now within a
	// switch is counted on there.
	compactTaken map[string]bool
}

// selectJobs is the selection stage (see plan): it takes the candidates
// in selection order, each while it fits.
func selectJobs(c *cluster, opt Options, selectionKind, order string) selection {
	sl := &selector{c: c, opt: opt, now: c.st.Now, bf: selectionKind == SelectionBackfill, fit: newFitState(c, false)}
	sl.s = selection{order: selectionOrder(c, order), room: map[*candidate]room{}, rank: map[string]int{}}
	for r, i := range sl.s.order {
		sl.s.rank[c.cands[i].job.ID] = r
	}
	for _, v := range c.vnodes {
		if v.idle {
			sl.idleLeft++
		}
	}
	// The selection (and the first fits in it) may take a quarter of the
	// time left for the solves; the jobs it has not reached by then wait
	// for the next cycle, in order. The first selectFloor jobs are always
	// considered, so that a cycle whose reading took its time (a loaded
	// machine) still starts the head of the queue.
	selEnd := time.Now().Add(time.Until(opt.deadline) / 4)
	for k, i := range sl.s.order {
		cand := c.cands[i]
		if sl.stopped == "" && k >= selectFloor && time.Now().After(selEnd) {
			sl.stopped = "the cycle's time limit came before this job's turn in the selection (the next cycle takes it up)"
			sl.s.notes = append(sl.s.notes, "the selection stopped at the cycle's time limit; the jobs it did not reach wait for the next cycle")
		}
		sl.consider(cand)
	}
	for _, v := range c.vnodes {
		if sl.fit.idleNow(v) && !sl.compactHeld[v.n.Name] {
			sl.s.idle = append(sl.s.idle, v.id)
		}
	}
	slices.Sort(sl.s.idle)
	sl.s.taken = map[string]bool{}
	for v := range sl.fit.taken {
		sl.s.taken[v.n.Name] = true
	}
	return sl.s
}

// defer_ defers a job with a reason.
func (sl *selector) defer_(cand *candidate, why string) {
	sl.s.deferred = append(sl.s.deferred, Reason{cand.job.ID, why})
}

// consider takes one candidate in its turn.
func (sl *selector) consider(cand *candidate) {
	if sl.stopped != "" {
		sl.defer_(cand, sl.stopped)
		return
	}
	if why := sl.c.neverFits(cand); why != "" {
		sl.defer_(cand, "can never run on optsched's vnodes: "+why)
		return
	}
	if cand.whole {
		if sl.stoppedNonCP != "" {
			sl.defer_(cand, sl.stoppedNonCP)
			return
		}
		sl.selectWhole(cand)
		return
	}
	ffWhy := cand.path
	if sl.opt.Partial == PartialCP {
		why := sl.c.cpEligible(cand)
		if why == "" && sl.s.hold != nil && sl.s.hold.res.within == nil && !sl.s.hold.res.endsBy(sl.now, cand.walltime) {
			sl.defer_(cand, sl.afterReservation())
			return
		}
		if why == "" {
			sl.selectCP(cand)
			return
		}
		ffWhy += "; first fit, since the cp scheduler cannot take it: " + why
	}
	if sl.stoppedNonCP != "" {
		sl.defer_(cand, sl.stoppedNonCP)
		return
	}
	sl.stopped = sl.firstFit(cand, ffWhy)
}

// afterReservation is why a partial-node job that would end after the
// reservation waits.
func (sl *selector) afterReservation() string {
	r := sl.s.hold.res
	return fmt.Sprintf("would end after the reservation of job %s at %s (a partial-node job backfills only when its walltime ends by then)", r.doc.Job, stamp(r.shadow))
}

// behind is why the jobs behind one that does not fit wait (lan2023).
func behind(cand *candidate, now string) string {
	return fmt.Sprintf("queued behind job %s, which does not fit%s (selection stops at the first job that does not fit)", cand.job.ID, now)
}

// selectWhole takes a whole-node job for the window when its vnodes are
// left, counting those of the whole-node jobs before it.
func (sl *selector) selectWhole(cand *candidate) {
	n := len(cand.units)
	if n >= 2 && sl.opt.MaxJobs > 0 && sl.multi == sl.opt.MaxJobs {
		sl.defer_(cand, fmt.Sprintf("the window already holds the maximum of %d multi-node jobs (--max-jobs)", sl.opt.MaxJobs))
		sl.stopped = fmt.Sprintf("queued behind job %s (selection stops at the first job that does not start)", cand.job.ID)
		return
	}
	if sl.wholeNeed+n > sl.idleLeft {
		reason := fmt.Sprintf("needs %s, %s left after higher-priority jobs", plural(n, "whole vnode"), plural(sl.idleLeft-sl.wholeNeed, "idle vnode"))
		sl.defer_(cand, reason)
		switch {
		case !sl.bf:
			sl.stopped = behind(cand, "")
		case sl.s.hold == nil:
			sl.holdFor(cand, reason, len(sl.s.deferred)-1)
		default:
			sl.s.deferred[len(sl.s.deferred)-1].Reason += fmt.Sprintf(" (job %s, the first that does not fit, holds the reservation)", sl.s.hold.res.doc.Job)
		}
		return
	}
	if sl.bf && (sl.s.hold == nil || sl.opt.CompactWait.Many) && n >= 2 && sl.opt.CompactWait.On() && sl.holdForSwitch(cand) {
		return
	}
	if sl.s.hold != nil {
		if why := sl.s.hold.res.admitWhole(sl.now, n, cand.walltime); why != "" {
			sl.defer_(cand, why)
			return
		}
	}
	sl.wholeNeed += n
	if n >= 2 {
		sl.multi++
	}
	sl.s.whole = append(sl.s.whole, cand)
}

// selectCP takes a job for the cp schedule. In selection order it holds,
// by the first fit, what it needs now, so that lower-priority jobs cannot
// take it; when it does not fit now, the whole-node and first-fit jobs
// behind it wait (as behind any job that does not fit), while the cp jobs
// behind it go on to the cp schedule, which plans its start and theirs.
func (sl *selector) selectCP(cand *candidate) {
	sl.s.cp = append(sl.s.cp, cand)
	r := room{why: sl.stoppedNonCP}
	if r.why == "" {
		var usedIdle int
		r.chunks, usedIdle, r.why = sl.fit.place(cand, sl.idleLeft-sl.wholeNeed)
		switch {
		case r.why == "":
			sl.idleLeft -= usedIdle
		case sl.bf:
			// The cp schedule plans its start; the jobs behind it hold
			// its reservation.
			if sl.s.hold == nil {
				sl.holdFor(cand, r.why, -1)
			}
		default:
			sl.stoppedNonCP = behind(cand, " now")
		}
	}
	sl.s.room[cand] = r
}

// firstFit places cand by the first fit on what the whole-node jobs
// leave; a job that does not fit is deferred and stops the selection: it
// returns the reason for the jobs behind it ("" when cand fits).
func (sl *selector) firstFit(cand *candidate, why string) string {
	if h := sl.s.hold; h != nil && h.res.within == nil && !h.res.endsBy(sl.now, cand.walltime) {
		sl.defer_(cand, sl.afterReservation())
		return ""
	}
	chunks, usedIdle, reason := sl.fit.place(cand, sl.idleLeft-sl.wholeNeed)
	if reason != "" {
		sl.defer_(cand, reason)
		if sl.bf {
			if sl.s.hold == nil {
				sl.holdFor(cand, reason, len(sl.s.deferred)-1)
			}
			return ""
		}
		return behind(cand, "")
	}
	sl.idleLeft -= usedIdle
	sl.s.partial = append(sl.s.partial, &Start{Job: cand.job.ID, Queue: cand.job.Queue, Path: PathPartial,
		Placement: "first-fit", Why: why, Chunks: chunks, Cost: -1})
	return ""
}

// claims are what the starts selected so far hold, for a reservation.
func (sl *selector) claims() []claim {
	var out []claim
	for _, w := range sl.s.whole {
		out = append(out, claim{job: w.job.ID, anon: len(w.units), end: sl.now + w.walltime})
	}
	for _, s := range sl.s.partial {
		out = append(out, claim{job: s.Job, nodes: s.Nodes(), end: sl.now + sl.c.wallOf(s.Job)})
	}
	for _, cand := range sl.s.cp {
		if r := sl.s.room[cand]; r.why == "" && len(r.chunks) > 0 {
			out = append(out, claim{job: cand.job.ID, nodes: chunkVnodes(r.chunks), end: sl.now + cand.walltime})
		}
	}
	return out
}

// holdFor makes cand, the first job that does not fit now, the reserved
// job, once its bounded slowdown or its wait has come to the options'
// thresholds; its reason (when it is deferred here) is deferred[idx].
func (sl *selector) holdFor(cand *candidate, reason string, idx int) {
	opt := sl.opt
	sd, waited := slowdownSoFar(cand, sl.now), time.Duration(max(sl.now-cand.submit, 0))*time.Second
	if sd < opt.ReserveAfter && (opt.StarveAfter <= 0 || waited < opt.StarveAfter) {
		if idx >= 0 {
			var from []string
			if !math.IsInf(opt.ReserveAfter, 1) {
				from = append(from, fmt.Sprintf("at a bounded slowdown of %.2f (now %.2f)", opt.ReserveAfter, sd))
			}
			if opt.StarveAfter > 0 {
				from = append(from, fmt.Sprintf("after a wait of %v (now %v)", opt.StarveAfter, waited))
			}
			sl.s.deferred[idx].Reason += "; no reservation yet (reservations " + strings.Join(from, " or ") + "): jobs behind it start when they fit"
		}
		return
	}
	res := sl.c.newReserve(cand, sl.claims(), "", "")
	sl.s.hold = &hold{res: res, head: cand, idx: idx, reason: reason}
	if idx >= 0 {
		sl.s.deferred[idx].Reason = reason + "; " + res.when(sl.now)
	}
}

// holdForSwitch applies the compact wait (Options.CompactWait) to
// whole-node job cand, which fits now: when it should wait for one
// switch, it is deferred with the rule's reason and holds the cycle's
// reservation on that switch's vnodes, whose idle ones the window then
// leaves alone; holdForSwitch reports whether it waits. When the cycle
// already has a reservation (CompactWait.Many), a job that is to wait
// holds the idle vnodes of its switch that no earlier waiter holds, and
// no reservation.
func (sl *selector) holdForSwitch(cand *candidate) bool {
	named := namedClaims(sl.claims())
	d, within := sl.c.compactWait(sl.opt.CompactWait, cand, sl.fit, named, sl.wholeNeed, sl.idleLeft, sl.compactTaken)
	if sl.opt.CompactWait.Many && sl.compactTaken == nil {
		sl.compactTaken = map[string]bool{}
	}
	if !d.Wait {
		if sl.opt.CompactWait.Many {
			for _, id := range d.FitNodes {
				sl.compactTaken[sl.c.topo.Name(id)] = true
			}
		}
		return false
	}
	for _, name := range within {
		if sl.compactTaken != nil {
			sl.compactTaken[name] = true
		}
	}
	sl.defer_(cand, d.Reason)
	idx := len(sl.s.deferred) - 1
	if sl.s.hold == nil {
		res := sl.c.newReserve(cand, named, sl.c.topo.Switch(d.Switch).Name, strings.Join(within, ","))
		sl.s.hold = &hold{res: res, head: cand, idx: idx, reason: d.Reason}
		sl.s.deferred[idx].Reason = d.Reason + "; " + res.when(sl.now)
	} else {
		sl.s.deferred[idx].Reason = d.Reason + fmt.Sprintf("; the idle vnodes of switch %s that no earlier job holds are held for it this cycle (--compact-wait-many; job %s holds the reservation)",
			sl.c.topo.Switch(d.Switch).Name, sl.s.hold.res.doc.Job)
	}
	if sl.compactHeld == nil {
		sl.compactHeld = map[string]bool{}
	}
	for _, name := range within {
		if v := sl.c.byName[name]; v != nil && sl.fit.idleNow(v) && !sl.compactHeld[name] {
			sl.compactHeld[name] = true
			sl.idleLeft--
		}
	}
	return true
}
