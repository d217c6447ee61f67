package cpolicy

import (
	"math"

	"github.com/optsched/optsched/encode/cp"
)

// A plan is the part of a decision's model its seeds need (package doc,
// steps 3–4), read straight from the decision's arguments: the grid, the
// capacity left by the running jobs at each slot, and per window job its
// earliest start, duration and weight, as encode/cp's Build reads them
// from the decision's window (TestPlanAsModel holds the two equal). It
// spares a decision that does not search the window's maps and strings;
// the window is built only to check the seed's schedule (newDecision).
type plan struct {
	now int64
	g   int64
	// capacity is the usable nodes; ends[r] and uses[r] are running job
	// r's end slot and nodes.
	capacity   int
	ends, uses []int
	jobs       []planJob
	// scale is Σ's scale (encode/cp's Model.Scale; 0 when the weights
	// are rounded).
	scale int64
}

// A planJob is a window job in a plan.
type planJob struct {
	index  int   // in the window (sel)
	nodes  int   // n_i
	req    int64 // requested seconds, at least 1 (the window's Walltime)
	submit int64 // at most now
	ewt    int64 // its queue's expected wait
	est    int   // earliest start slot beside the running jobs
	dur    int   // ⌈req / g⌉
	weight int64 // ω_i
}

// newPlan reads the decision of the jobs sel (indices into waiting) on a
// cluster of capacity usable nodes as its model would (see newDecision,
// which builds that model's window).
func newPlan(now int64, capacity int, running []Running, waiting []Job, sel []int, obj string, slots int) *plan {
	pl := &plan{now: now, capacity: capacity, g: grid(now, capacity, running, waiting, sel, slots)}
	pl.ends, pl.uses = make([]int, len(running)), make([]int, len(running))
	for r, x := range running {
		pl.ends[r] = int(ceilDiv(max(x.End, now+1)-now, pl.g))
		pl.uses[r] = x.Nodes
	}
	base := pl.base(0)
	pl.jobs = make([]planJob, len(sel))
	ewts := make([]int64, len(sel))
	for i, wi := range sel {
		j := &waiting[wi]
		req := max(j.Request, 1)
		e := int64(1)
		if obj == BSLD {
			e = roundEWT(max(req, 10))
		}
		ewts[i] = e
		pj := planJob{index: i, nodes: j.Nodes, req: req, submit: min(j.Submit, now), ewt: e, dur: int(ceilDiv(req, pl.g))}
		// The capacity left only grows (running jobs end): the first
		// slot with room for the job has room from then on.
		for pj.est < len(base) && base[pj.est] < j.Nodes {
			pj.est++
		}
		pl.jobs[i] = pj
	}
	var w []int64
	w, pl.scale, _ = cp.Weights(ewts)
	for i := range pl.jobs {
		pl.jobs[i].weight = w[i]
	}
	return pl
}

// base returns the capacity the running jobs leave at each slot from 0
// to their last end, and extra slots more (all free then).
func (pl *plan) base(extra int) []int {
	last := 0
	for _, e := range pl.ends {
		last = max(last, e)
	}
	base := make([]int, last+extra+1)
	for s := range base {
		base[s] = pl.capacity
	}
	for r, e := range pl.ends {
		for s := 0; s < e; s++ {
			base[s] -= pl.uses[r]
		}
	}
	return base
}

// grid returns a decision's granularity g: the planning horizon (the
// running jobs' last end, the window's area over the capacity and its
// longest request) cut into about slots slots.
func grid(now int64, capacity int, running []Running, waiting []Job, sel []int, slots int) int64 {
	if slots <= 0 {
		slots = DefaultSlots
	}
	var last int64
	for _, r := range running {
		last = max(last, max(r.End, now+1)-now)
	}
	var area float64
	var longest int64
	for _, wi := range sel {
		j := &waiting[wi]
		req := max(j.Request, 1)
		area += float64(req) * float64(j.Nodes)
		longest = max(longest, req)
	}
	horizon := last + int64(math.Ceil(area/float64(capacity))) + longest
	return max(1, (horizon+int64(slots)-1)/int64(slots))
}

// weighted returns Σ ω_i s_i of the start slots s.
func (pl *plan) weighted(s []int) int64 {
	var w int64
	for i, j := range pl.jobs {
		w += j.weight * int64(s[i])
	}
	return w
}

// objective returns the model's Eq. (2) value of the start slots s:
// Σ (now + s_i·g − submit_i)/ewt_i (encode/cp's Model.Objective).
func (pl *plan) objective(s []int) float64 {
	var sum float64
	for i, j := range pl.jobs {
		sum += float64(pl.now+int64(s[i])*pl.g-j.submit) / float64(j.ewt)
	}
	return sum
}

// lowerBound returns Σ ω_i EST_i, the least Σ ω_i s_i of any schedule
// (solver/sat's LowerBound of the model).
func (pl *plan) lowerBound() int64 {
	var lb int64
	for _, j := range pl.jobs {
		lb += j.weight * int64(j.est)
	}
	return lb
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
