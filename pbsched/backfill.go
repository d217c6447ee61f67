package pbsched

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/model/pbs"
)

// The selections of a cycle (Options.Selection).
const (
	// SelectionBackfill (the default) reserves a start for the first job
	// that does not fit now and starts later jobs that fit now when they
	// do not delay it (EASY backfilling).
	SelectionBackfill = "backfill"
	// SelectionLan2023 is the window selection of [Lan23] §III-C:
	// selection stops at the first job that does not fit now.
	SelectionLan2023 = "lan2023"
)

// The orders in which a cycle considers the queued jobs (Options.Order).
const (
	// OrderFIFO is the window selection order of [Lan23] §III-C: more
	// waiting periods first, then fewer units, then qstat order — first
	// come, first served at the waiting period's grain.
	OrderFIFO = "fifo"
	// OrderSJF (the default) takes the shortest requested walltime first
	// (a job without one counts a year), then OrderFIFO among equal
	// walltimes. It lowers the mean wait and bounded slowdown of a queue
	// at the expense of the long jobs, which a reservation (ReserveAfter,
	// StarveAfter) protects from starving. On every slice replayed on the
	// PBS test server it gave lower mean bounded slowdowns than pbs_sched,
	// where OrderFIFO lost on two of five (docs/pbs.md).
	OrderSJF = "sjf"
)

// Reservation is the start a backfilling cycle holds for the first job
// that does not fit now (EASY's shadow time).
type Reservation struct {
	// Job is the job reserved for.
	Job string `json:"job"`
	// Start is the shadow time (Unix seconds): when, by the walltimes of
	// the running jobs and of the jobs started before it this cycle,
	// Vnodes vnodes will be empty; 0 when that never happens (too many
	// vnodes down, offline or busy without an end).
	Start int64 `json:"start"`
	// Vnodes is how many vnodes are reserved: the job's chunks for a
	// whole-node job; AllVnodes for a partial-node job (every vnode that
	// will be empty, so the job fits wherever its chunks go).
	Vnodes    int  `json:"vnodes"`
	AllVnodes bool `json:"all_vnodes,omitempty"`
	// Extra counts the vnodes empty by Start beyond those reserved: a
	// later job that ends after Start may take that many.
	Extra int `json:"extra"`
	// Until names the job whose end makes the shadow time ("" when the
	// vnodes are idle now).
	Until string `json:"until,omitempty"`
	// Switch and Within, for a job waiting for one switch (the
	// compact-or-wait rule, Options.CompactWait): the switch and its
	// vnodes (comma-separated). The reservation is then on those vnodes
	// only: Start is when Vnodes of them are empty, Extra counts the
	// others of them empty by then, and vnodes outside it are not held.
	Switch string `json:"switch,omitempty"`
	Within string `json:"within,omitempty"`
}

// never stands for a time that does not come.
const never = math.MaxInt64

// claim is what a start (planned this cycle, ahead of a reservation) holds
// until end: named vnodes, and anon idle vnodes that the window solve
// chooses later (any idle vnode will do).
type claim struct {
	job   string
	nodes []string
	anon  int
	end   int64
}

// emptyAt is when a vnode will be empty, and the job whose end makes it so.
type emptyAt struct {
	t  int64
	by string
}

// emptyTimes says when each owned vnode that can be given whole once its
// jobs end will be empty: now for an idle vnode; the latest expected end
// (runningEnd: stime + walltime, after now) of the running jobs that name
// it in exec_vnode, or that hold its host exclusively; later still when a
// claim of this cycle holds it. Vnodes in any state other than free,
// job-exclusive and job-busy (down, offline, …), and vnodes with jobs or
// resources assigned that no running job accounts for, are left out:
// they have no known time; but a vnode whose every listed job is gone
// from qstat (ended, being released) is empty at now + 1.
func (c *cluster) emptyTimes(claims []claim) map[string]emptyAt {
	now := c.st.Now
	times := map[string]emptyAt{}
	for _, v := range c.vnodes {
		ok := true
		for _, s := range v.n.State {
			ok = ok && (s == "free" || s == "job-exclusive" || s == "job-busy")
		}
		if ok && len(v.n.State) > 0 {
			times[v.n.Name] = emptyAt{t: now}
		}
	}
	named := map[string]bool{}
	later := func(name string, t int64, by string) {
		if e, ok := times[name]; ok && t > e.t {
			times[name] = emptyAt{t, by}
		}
	}
	for i := range c.st.Jobs.Jobs {
		j := &c.st.Jobs.Jobs[i]
		if len(j.ExecVnode) == 0 {
			continue
		}
		end := c.runningEnd(j)
		for _, name := range pbs.Vnodes(j.ExecVnode) {
			named[name] = true
			later(name, end, j.ID)
			h := c.hostOf[name]
			if n := c.nodeNamed(name); n != nil && c.multiVnodeHost(h) && hostExclusiveOn(n, j.Place) {
				for _, m := range c.hostNodes[h] {
					named[m.Name] = true
					later(m.Name, end, j.ID)
				}
			}
		}
	}
	// A vnode busy with no running job to account for it has no known
	// time, unless every job pbsnodes still lists on it is gone from
	// qstat: those jobs have ended and their vnodes are being released
	// (qstat and pbsnodes are read a moment apart), so it is empty in a
	// second. Left out, a head job's reservation would become "never"
	// for that cycle and let any job start behind it.
	inQstat := make(map[string]bool, len(c.st.Jobs.Jobs))
	for i := range c.st.Jobs.Jobs {
		inQstat[c.st.Jobs.Jobs[i].ID] = true
	}
	for _, v := range c.vnodes {
		if named[v.n.Name] || len(v.n.Jobs) == 0 && allZero(v.n.Assigned) {
			continue
		}
		if _, ok := times[v.n.Name]; ok && len(v.n.Jobs) > 0 && !slices.ContainsFunc(v.n.Jobs, func(id string) bool { return inQstat[id] }) {
			times[v.n.Name] = emptyAt{now + 1, v.n.Jobs[0]}
			continue
		}
		delete(times, v.n.Name)
	}
	held := map[string]bool{}
	for _, cl := range claims {
		for _, name := range cl.nodes {
			held[name] = true
			later(name, cl.end, cl.job)
		}
	}
	for _, cl := range claims {
		for _, v := range c.vnodes {
			if cl.anon == 0 {
				break
			}
			if e, ok := times[v.n.Name]; ok && v.idle && !held[v.n.Name] && e.t == now {
				held[v.n.Name] = true
				later(v.n.Name, cl.end, cl.job)
				cl.anon--
			}
		}
	}
	return times
}

// shadow returns when need of the vnodes with a time will be empty (never
// when fewer have one), the job whose end makes it so, and how many more
// are empty by then (the extra vnodes).
func shadow(times map[string]emptyAt, need int) (at int64, by string, extra int) {
	ts := make([]emptyAt, 0, len(times))
	for _, e := range times {
		ts = append(ts, e)
	}
	slices.SortFunc(ts, func(a, b emptyAt) int {
		if a.t != b.t {
			return int(min(max(a.t-b.t, -1), 1))
		}
		return cmpString(a.by, b.by)
	})
	if need > len(ts) {
		return never, "", 0
	}
	if need == 0 {
		return 0, "", len(ts)
	}
	at, by = ts[need-1].t, ts[need-1].by
	for _, e := range ts {
		if e.t <= at {
			extra++
		}
	}
	return at, by, extra - need
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reserve holds a backfilling cycle's reservation while the selection
// goes on behind it.
type reserve struct {
	doc   Reservation
	times map[string]emptyAt
	// shadow is doc.Start, never when the time does not come; extra the
	// extra vnodes not yet given to a backfilled job.
	shadow int64
	extra  int
	// given are the vnodes empty by the shadow that backfilled jobs
	// ending after it hold.
	given map[string]bool
	// within, when not nil, are the only vnodes reserved (a switch the
	// job waits for); times covers only them.
	within map[string]bool
}

// newReserve reserves for cand, the first job that does not fit now,
// given what the starts before it claim; on the vnodes of doc.Within
// only, when given (switch names that switch).
func (c *cluster) newReserve(cand *candidate, claims []claim, sw, within string) *reserve {
	times := c.emptyTimes(claims)
	r := &reserve{doc: Reservation{Job: cand.job.ID, Switch: sw, Within: within}, times: times, given: map[string]bool{}, within: withinSet(within)}
	if r.within != nil {
		for name := range times {
			if !r.within[name] {
				delete(times, name)
			}
		}
	}
	need := len(cand.units)
	if !cand.whole {
		need, r.doc.AllVnodes = len(times), true
	}
	r.doc.Vnodes = need
	var by string
	r.shadow, by, r.extra = shadow(times, need)
	r.doc.Extra = r.extra
	if r.shadow != never {
		r.doc.Start, r.doc.Until = r.shadow, by
	}
	return r
}

// when describes the reservation for reasons.
func (r *reserve) when(now int64) string {
	if r.within != nil && r.shadow != never {
		return fmt.Sprintf("switch %s reserved from %s (in %s)", r.doc.Switch, stamp(r.shadow), time.Duration(max(r.shadow-now, 0))*time.Second)
	}
	if r.shadow == never {
		return "no start can be reserved (too few vnodes will ever be empty: down, offline, or busy with no known end)"
	}
	s := fmt.Sprintf("reserved to start at %s (in %s)", stamp(r.shadow), time.Duration(r.shadow-now)*time.Second)
	switch {
	case r.doc.Until != "":
		s += " when job " + r.doc.Until + " ends"
	default:
		s += ", when it fits"
	}
	return s
}

func stamp(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

// endsBy reports whether a job of walltime wall started now ends by the
// shadow time.
func (r *reserve) endsBy(now, wall int64) bool {
	return r.shadow == never || now+wall <= r.shadow
}

// admitWhole decides whether a whole-node job of n vnodes and walltime
// wall that fits now may start behind the reservation: it ends by the
// shadow time, or takes only extra vnodes (idle vnodes are all empty by
// the shadow, so the window solve may give it any: counting suffices when
// the vnodes are alike, which the whole-node path requires of the idle
// ones). It returns "" or why not.
func (r *reserve) admitWhole(now int64, n int, wall int64) string {
	if r.within != nil {
		// The window does not use the switch's vnodes.
		return ""
	}
	if r.endsBy(now, wall) {
		return ""
	}
	if n <= r.extra {
		r.extra -= n
		return ""
	}
	return fmt.Sprintf("would end after the reservation of job %s at %s and needs more than the %s", r.doc.Job, stamp(r.shadow), plural(r.extra, "extra vnode"))
}

// admitNamed decides for a start on the named vnodes, as admitWhole.
func (r *reserve) admitNamed(now int64, nodes []string, wall int64) string {
	if r.endsBy(now, wall) {
		return ""
	}
	var take []string
	for _, name := range nodes {
		if e, ok := r.times[name]; ok && e.t <= r.shadow && !r.given[name] && !slices.Contains(take, name) {
			take = append(take, name)
		}
	}
	if len(take) <= r.extra {
		r.extra -= len(take)
		for _, name := range take {
			r.given[name] = true
		}
		return ""
	}
	return fmt.Sprintf("would end after the reservation of job %s at %s and takes %s it needs then (%s extra)", r.doc.Job, stamp(r.shadow), plural(len(take), "vnode"), plural(r.extra, "extra vnode"))
}

// enforceReservation re-derives the plan's reservation from its final
// starts (the cp schedule may start its jobs on other vnodes than the
// first fit held for them) and drops every start behind the reserved job
// that would delay it, in rank order; the head's reason is rewritten with
// the final shadow time.
func (c *cluster) enforceReservation(p *Plan, rank map[string]int, h *hold) {
	if p.Reservation == nil || h == nil {
		return
	}
	for _, s := range p.Starts {
		if s.Job == p.Reservation.Job {
			// The cp schedule started the reserved job after all: no
			// job waits ahead of the backfilled ones.
			p.Reservation = nil
			return
		}
	}
	hr := rank[p.Reservation.Job]
	now := c.st.Now
	starts := slices.Clone(p.Starts)
	slices.SortStableFunc(starts, func(a, b *Start) int { return rank[a.Job] - rank[b.Job] })
	var claims []claim
	for _, s := range starts {
		if rank[s.Job] < hr {
			claims = append(claims, claim{job: s.Job, nodes: s.Nodes(), end: now + c.wallOf(s.Job)})
		}
	}
	r := c.newReserve(h.head, claims, p.Reservation.Switch, p.Reservation.Within)
	drop := map[string]string{}
	for _, s := range starts {
		if rank[s.Job] <= hr {
			continue
		}
		if why := r.admitNamed(now, s.Nodes(), c.wallOf(s.Job)); why != "" {
			drop[s.Job] = why
		}
	}
	*p.Reservation = r.doc
	if h.idx >= 0 && h.idx < len(p.Deferred) {
		p.Deferred[h.idx].Reason = h.reason + "; " + r.when(now)
	}
	if len(drop) == 0 {
		return
	}
	kept := p.Starts[:0]
	for _, s := range p.Starts {
		if why, ok := drop[s.Job]; ok {
			p.Deferred = append(p.Deferred, Reason{s.Job, why})
			continue
		}
		kept = append(kept, s)
	}
	p.Starts = kept
	if p.Window != nil {
		allocs := p.Allocs[:0]
		for _, a := range p.Allocs {
			if _, ok := drop[p.Window.Jobs[a.Job].ID]; !ok {
				allocs = append(allocs, a)
			}
		}
		p.Allocs = allocs
	}
	p.Notes = append(p.Notes, fmt.Sprintf("%s dropped: on the final placement they would delay the reservation of job %s", plural(len(drop), "backfilled start"), p.Reservation.Job))
}

// wallOf is the walltime of a candidate job (a year without one).
func (c *cluster) wallOf(id string) int64 {
	if c.walls == nil {
		c.walls = make(map[string]int64, len(c.cands))
		for _, cand := range c.cands {
			c.walls[cand.job.ID] = cand.walltime
		}
	}
	if w, ok := c.walls[id]; ok {
		return w
	}
	return defaultWalltime
}
