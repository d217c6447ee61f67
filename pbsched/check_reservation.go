package pbsched

import (
	"slices"
	"strings"

	"github.com/optsched/optsched/sched"
)

// ruleReservation re-derives, from the raw documents alone, that no start
// behind the plan's reserved job delays it (EASY backfilling's promise),
// and that a plan made with the lan2023 selection reserves nothing.
//
// The order is recomputed here: queued jobs by more waiting periods
// (eligible_time, else the time since etime, qtime or ctime, over the
// scope's period), then fewer select units, then qstat order. When each
// vnode will be empty is recomputed too: owned vnodes with CPUs in state
// free, job-exclusive or job-busy only; empty now, or at the latest end
// (stime + walltime, a year without one; now + 1 once past) of the
// running jobs whose exec_vnode names it or that hold its host
// exclusively, or of the starts ranked ahead of the reserved job (now +
// their walltime); a vnode with jobs or resources assigned that no
// running job names has no time, unless every job it lists is gone from
// qstat (ended: empty at now + 1). The reserved job needs max(the plan's
// count, its select units) vnodes (every vnode with a time when the plan
// reserves all); its shadow time is when that many are empty, and the
// extra vnodes are the others empty by then. Every start ranked behind it
// must end by the shadow time (now + its walltime) or take, together
// with the other such starts, no more vnodes empty by the shadow than
// the extra ones.
//
// A reservation with Within (a job waiting for one switch, the
// compact-or-wait rule) is the same on those vnodes only: the shadow
// time is when the job's vnodes of them are empty, the extra vnodes are
// the others of them, and a start behind it may use any other vnode.
//
// Which job heads the queue is the plan's word (the job it reserves
// for); this rule checks that the job waits and, by sched.CheckHold on
// the order and the empty times it recomputes, that nothing behind it
// delays it.
func ruleReservation(in *checkInput, add func(string, ...any)) {
	p := in.p
	r := p.Reservation
	if p.Selection == SelectionLan2023 {
		if r != nil {
			add("selection lan2023 reserves nothing, but the plan reserves for job %s", r.Job)
		}
		return
	}
	if r == nil {
		return
	}
	now := in.st.Now
	head := in.jobs[r.Job]
	if head == nil {
		add("reserved job %s is not in qstat", r.Job)
		return
	}
	if head.State != "Q" {
		add("reserved job %s is in state %s, not queued", r.Job, head.State)
	}
	rank := in.queueRank(p.Order == OrderSJF)
	wall := func(id string) int64 {
		if j := in.jobs[id]; j != nil && j.Walltime > 0 {
			return j.Walltime
		}
		return 365 * 24 * 3600
	}
	empty := in.emptyWhen()
	if r.Within != "" {
		// A job waiting for one switch: the reservation holds those
		// vnodes only.
		if r.AllVnodes {
			add("reservation of job %s is on switch %s and on all vnodes at once", r.Job, r.Switch)
		}
		keep := map[string]bool{}
		for _, v := range strings.Split(r.Within, ",") {
			keep[v] = true
		}
		for v := range empty {
			if !keep[v] {
				delete(empty, v)
			}
		}
	}
	h := sched.Hold{Job: r.Job, Need: max(r.Vnodes, len(in.units(head))), All: r.AllVnodes,
		Now: now, Empty: empty, Rank: rank, Wall: wall}
	for _, x := range sched.CheckHold(h, in.corePlan()) {
		if !x.Delays {
			add("reserved job %s starts in the plan", r.Job)
			continue
		}
		add("job %s starts behind reserved job %s, ends after its shadow time %s and takes %v, more than the %d extra vnodes", x.Job, r.Job, stamp(x.Shadow), x.Took, x.Extra)
	}
}

// queueRank ranks the queued jobs in the selection order of [Lan23]:
// more waiting periods first, then fewer select units, then qstat order;
// with sjf, by requested walltime (a year without one) first.
func (in *checkInput) queueRank(sjf bool) map[string]int {
	type key struct {
		id               string
		wall, nwp, units int64
		idx              int
	}
	var ks []key
	now := in.st.Now
	for i := range in.st.Jobs.Jobs {
		j := &in.st.Jobs.Jobs[i]
		if j.State != "Q" {
			continue
		}
		since := now
		for _, t := range []int64{j.ETime, j.QTime, j.CTime} {
			if t != 0 {
				since = t
				break
			}
		}
		wait := now - since
		if j.HasEligibleTime {
			wait = j.EligibleTime
		}
		var nwp int64
		if wait > 0 && in.scope.Period > 0 {
			nwp = wait / in.scope.Period
		}
		var wall int64
		if sjf {
			wall = j.Walltime
			if wall <= 0 {
				wall = 365 * 24 * 3600
			}
		}
		ks = append(ks, key{j.ID, wall, nwp, int64(len(in.units(j))), i})
	}
	slices.SortStableFunc(ks, func(a, b key) int {
		switch {
		case a.wall != b.wall:
			return int(min(max(a.wall-b.wall, -1), 1))
		case a.nwp != b.nwp:
			return int(min(max(b.nwp-a.nwp, -1), 1))
		case a.units != b.units:
			return int(min(max(a.units-b.units, -1), 1))
		}
		return a.idx - b.idx
	})
	rank := make(map[string]int, len(ks))
	for r, k := range ks {
		rank[k.id] = r
	}
	return rank
}

// emptyWhen says when each owned vnode with CPUs that can be given whole
// once its jobs end will be empty, by the running jobs' walltimes (see
// ruleReservation).
func (in *checkInput) emptyWhen() map[string]int64 {
	now := in.st.Now
	when := map[string]int64{}
	hostOf := map[string]string{}
	onHost := map[string][]string{}
	cpus := map[string]int{}
	for i := range in.st.Nodes.Nodes {
		n := &in.st.Nodes.Nodes[i]
		h := n.Text["host"]
		if h == "" {
			h = n.Name
		}
		hostOf[n.Name] = h
		onHost[h] = append(onHost[h], n.Name)
		if n.Available["ncpus"] > 0 {
			cpus[h]++
		}
		if in.scope.Owned != nil && !in.scope.Owned[n.Name] || n.Available["ncpus"] <= 0 || len(n.State) == 0 {
			continue
		}
		ok := true
		for _, s := range n.State {
			ok = ok && (s == "free" || s == "job-exclusive" || s == "job-busy")
		}
		if ok {
			when[n.Name] = now
		}
	}
	named := map[string]bool{}
	later := func(name string, t int64) {
		named[name] = true
		if w, ok := when[name]; ok {
			when[name] = max(w, t)
		}
	}
	for i := range in.st.Jobs.Jobs {
		j := &in.st.Jobs.Jobs[i]
		if len(j.ExecVnode) == 0 {
			continue
		}
		w, start := j.Walltime, j.STime
		if w == 0 {
			w = 365 * 24 * 3600
		}
		if start == 0 {
			start = now
		}
		end := max(start+w, now+1)
		for _, ch := range j.ExecVnode {
			for _, u := range ch {
				later(u.Vnode, end)
				n := in.nodes[u.Vnode]
				if n == nil || cpus[hostOf[u.Vnode]] < 2 {
					continue
				}
				excl := j.Place.Sharing == "exclhost"
				switch n.Sharing {
				case "force_exclhost":
					excl = true
				case "default_exclhost":
					excl = j.Place.Sharing != "shared"
				case "ignore_excl", "force_excl":
					excl = false
				}
				if excl {
					for _, m := range onHost[hostOf[u.Vnode]] {
						later(m, end)
					}
				}
			}
		}
	}
	for name := range when {
		n := in.nodes[name]
		busy := len(n.Jobs) > 0
		for _, v := range n.Assigned {
			busy = busy || v != 0
		}
		if !busy || named[name] {
			continue
		}
		// Every job pbsnodes lists here gone from qstat: ended, its
		// vnode being released; empty in a second.
		gone := len(n.Jobs) > 0
		for _, id := range n.Jobs {
			gone = gone && in.jobs[id] == nil
		}
		if gone {
			when[name] = now + 1
		} else {
			delete(when, name)
		}
	}
	return when
}
