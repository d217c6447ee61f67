package sat

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"

	"github.com/optsched/optsched/encode/cp"
)

// sgsName names the incumbents of the serial schedule generation below.
const sgsName = "sgs"

// placed is a waiting job put on a node by serialSchedule.
type placed struct {
	start, end int
	use        []int64 // of all its units on the node
	excl       bool
}

// serialSchedule is the serial schedule generation scheme on m's model:
// it takes the jobs in order and starts each at the earliest slot, from
// its EST, at which its units fit on its nodes for its whole duration
// beside the running jobs, the reservations and the jobs placed before
// it (candidates: EST and the ends of running and placed jobs, the only
// slots where a fit can begin), filling the nodes that hold most of its
// units first. It returns nil when a job finds no slot up to horizon.
func serialSchedule(m *cp.Model, order []int, horizon int) *incumbent {
	return serialScheduleCtx(context.Background(), m, order, horizon)
}

// serialScheduleCtx is serialSchedule that returns nil when ctx ends
// (polled once per job: one schedule of a large window takes longer than
// a time limit).
func serialScheduleCtx(ctx context.Context, m *cp.Model, order []int, horizon int) *incumbent {
	onNode := make([][]placed, len(m.Nodes))
	inc := &incumbent{slots: make([]int, len(m.Jobs)), units: make([][]int, len(m.Jobs)), from: sgsName}
	free := make([]int64, len(m.Resources))
	for _, i := range order {
		if ctx.Err() != nil {
			return nil
		}
		j := &m.Jobs[i]
		cands := []int{j.EST}
		for _, o := range j.Options {
			nd := &m.Nodes[o.Node]
			for _, r := range nd.Running {
				cands = append(cands, r.EndSlot)
			}
			for _, f := range o.Forbid {
				cands = append(cands, f[1]+1)
			}
			for _, p := range onNode[o.Node] {
				cands = append(cands, p.end)
			}
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
		fit := make([]int, len(j.Options))
		done := false
		for _, s := range cands {
			if s < j.EST || s > horizon {
				continue
			}
			total, packOK := 0, -1
			for o := range j.Options {
				opt := &j.Options[o]
				k := opt.UnitsAt(s) // beside running jobs, off reservations
				nd := &m.Nodes[opt.Node]
				// Check at s and at every placed start within the job's run.
				for _, p := range onNode[opt.Node] {
					if k == 0 {
						break
					}
					if p.start < s+j.Dur && s < p.end && (p.excl || j.Excl) {
						k = 0
					}
				}
				checks := []int{s}
				for _, p := range onNode[opt.Node] {
					if p.start > s && p.start < s+j.Dur {
						checks = append(checks, p.start)
					}
				}
				for _, t := range checks {
					if k == 0 {
						break
					}
					copy(free, nd.Cap)
					for _, r := range nd.Running {
						if t < r.EndSlot {
							for l, v := range r.Use {
								free[l] -= v
							}
						}
					}
					for _, p := range onNode[opt.Node] {
						if p.start <= t && t < p.end {
							for l, v := range p.use {
								free[l] -= v
							}
						}
					}
					for l, need := range j.Req {
						if need > 0 {
							k = min(k, int(max(0, free[l]/need)))
						}
					}
				}
				fit[o] = k
				total += k
				if j.Pack && k >= j.Units && packOK < 0 {
					packOK = o
				}
			}
			if (j.Pack && packOK < 0) || (!j.Pack && total < j.Units) {
				continue
			}
			units := make([]int, len(j.Options))
			if j.Pack {
				units[packOK] = j.Units
			} else {
				idx := make([]int, len(j.Options))
				for o := range idx {
					idx[o] = o
				}
				slices.SortStableFunc(idx, func(a, b int) int { return fit[b] - fit[a] })
				left := j.Units
				for _, o := range idx {
					u := min(left, fit[o])
					units[o] = u
					left -= u
				}
			}
			for o, u := range units {
				if u == 0 {
					continue
				}
				use := make([]int64, len(j.Req))
				for l, r := range j.Req {
					use[l] = int64(u) * r
				}
				n := j.Options[o].Node
				onNode[n] = append(onNode[n], placed{start: s, end: s + j.Dur, use: use, excl: j.Excl})
			}
			inc.slots[i], inc.units[i] = s, units
			done = true
			break
		}
		if !done {
			return nil
		}
	}
	inc.w = m.Total(inc.slots, inc.units)
	return inc
}

// sgsIncumbent runs serialSchedule with priority orders until ctx ends,
// tries runs are done, the best reaches LowerBound(m) or the perturbations
// stall (no gain in max(60, 4·jobs) runs), and returns the best schedule that passes the node
// checks (nil if none): highest weight first (then earliest EST, then
// shortest), weight per slot of duration, earliest EST first, then
// random perturbations of the best order so far.
func sgsIncumbent(ctx context.Context, m *cp.Model, tries int, rng *rand.Rand) *incumbent {
	return sgsSearch(ctx, m, nil, tries, rng)
}

// sgsImprove perturbs the order of from's starts (earliest first, then
// heaviest) as sgsIncumbent does and returns a schedule better than from,
// or nil.
func sgsImprove(ctx context.Context, m *cp.Model, from *incumbent, tries int, rng *rand.Rand) *incumbent {
	order := make([]int, len(m.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if d := from.slots[a] - from.slots[b]; d != 0 {
			return d
		}
		return cmp.Compare(m.Jobs[b].Weight, m.Jobs[a].Weight) // heaviest first
	})
	if inc := sgsSearch(ctx, m, order, tries, rng); inc != nil && inc.w < from.w {
		return inc
	}
	return nil
}

// sgsSearch runs serialSchedule from the order start, or from the
// priority orders of sgsIncumbent when start is nil, and its
// perturbations.
func sgsSearch(ctx context.Context, m *cp.Model, start []int, tries int, rng *rand.Rand) *incumbent {
	n := len(m.Jobs)
	horizon := SerialHorizon(m)
	base := make([]int, n)
	for i := range base {
		base[i] = i
	}
	orderBy := func(key func(i int) float64) []int {
		o := slices.Clone(base)
		slices.SortStableFunc(o, func(a, b int) int { return cmp.Compare(key(a), key(b)) })
		return o
	}
	byWeight := orderBy(func(i int) float64 {
		j := m.Jobs[i]
		return -float64(j.Weight)*1e9 + float64(j.EST)*1e4 + float64(j.Dur)
	})
	orders := [][]int{
		byWeight,
		orderBy(func(i int) float64 { return -float64(m.Jobs[i].Weight) / float64(m.Jobs[i].Dur) }),
		orderBy(func(i int) float64 { return float64(m.Jobs[i].EST)*1e9 - float64(m.Jobs[i].Weight) }),
	}
	var best *incumbent
	var bestOrder []int
	try := func(order []int) {
		inc := serialScheduleCtx(ctx, m, order, horizon)
		if inc == nil || len(violations(m, inc.slots, inc.units)) > 0 {
			return
		}
		if best == nil || inc.w <= best.w {
			best, bestOrder = inc, slices.Clone(order) // ties: walk the plateau
		}
	}
	if start != nil {
		orders = [][]int{start}
	}
	for _, o := range orders {
		try(o)
	}
	lb := LowerBound(m)
	stall := 0
	for t := 0; t < tries && stall < max(60, 4*n) && ctx.Err() == nil && bestOrder != nil && best.w > lb && n > 1; t++ {
		stall++
		prev := best.w
		o := slices.Clone(bestOrder)
		if rng.IntN(2) == 0 {
			for range 1 + rng.IntN(3) {
				a := rng.IntN(n)
				b := max(0, min(n-1, a+rng.IntN(7)-3))
				o[a], o[b] = o[b], o[a]
			}
		} else {
			// Move one job to another place in the order.
			a, b := rng.IntN(n), rng.IntN(n)
			x := o[a]
			o = slices.Insert(slices.Delete(o, a, a+1), b, x)
		}
		try(o)
		if best.w < prev {
			stall = 0
		}
	}
	return best
}
