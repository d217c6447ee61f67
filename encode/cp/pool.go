package cp

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Pool returns a counting relaxation of m with one pseudo-node and no
// placement: for every threshold c — a vector of per-unit requirements:
// each requirement of one resource some job's unit has (that resource
// alone), and each job's unit as a whole (all its resources at once) —
// and every set N of nodes (all usable nodes, and each job's set of
// option nodes), a cumulative resource "c on N" whose capacity at a time
// is Σ_{n∈N} min_{l: c_l>0} ⌊free_{n,l}/c_l⌋ (free: what the running
// jobs leave of n's capacity then; the units of size c that fit on n),
// and which a job confined to N uses with u_i·min_{l: c_l>0}
// ⌊r_{i,l}/c_l⌋ while it runs (one of several with the same counts). Of
// these it keeps the keep most contended (keep ≤ 0: all): the largest
// ratio of the demand of the jobs that can have started by a running
// job's end to the capacity then.
//
// It is a relaxation: the units on a node n use Σ_u r_{u,l} ≤ free_{n,l},
// so for every l, Σ_u min_k ⌊r_{u,k}/c_k⌋ ≤ Σ_u ⌊r_{u,l}/c_l⌋ ≤
// ⌊free_{n,l}/c_l⌋, hence Σ_u min_k ⌊r_{u,k}/c_k⌋ ≤ min_l
// ⌊free_{n,l}/c_l⌋; summing over N's nodes every schedule of m is a
// schedule of the pool with the same starts (all units on the
// pseudo-node); leaving resources out relaxes it further. The floors keep
// what a plain sum of capacities loses — that a unit needs its c on one
// node (fragmentation) — and the whole-unit thresholds that it needs all
// of c on the same node (GPUs free on one node, cores on another, fit
// no unit of both), without the per-node placement whose
// pigeonhole-like UNSAT proofs are hard for a SAT solver.
// Pack, scatter and future reservations are dropped; a running exclusive
// job and a reservation under way at the window time hold their nodes
// whole; a job of whole nodes counts the least capacity among its nodes
// per unit; a waiting exclusive job (place=excl) takes at least
// ⌈u_i / (most units on one node)⌉ empty nodes, each with the least count
// of an empty node among its options, when that is more than its units'
// counts (one pool unit then carries the whole demand). Jobs keep their indices,
// weights, durations and EST (m's, not the pool's), so the pool's least
// Σ ω_i s_i is a lower bound on m's.
func (m *Model) Pool(keep int) *Model {
	// Node sets: all nodes, then each job's option set.
	var sets [][]bool
	seen := map[string]bool{}
	addSet := func(in []bool) {
		var b strings.Builder
		for _, v := range in {
			if v {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		if k := b.String(); !seen[k] {
			seen[k] = true
			sets = append(sets, in)
		}
	}
	all := make([]bool, len(m.Nodes))
	for i := range all {
		all[i] = true
	}
	addSet(all)
	jobSets := make([][]bool, len(m.Jobs))
	for i, j := range m.Jobs {
		in := make([]bool, len(m.Nodes))
		for _, o := range j.Options {
			in[o.Node] = true
		}
		jobSets[i] = in
		addSet(in)
	}
	within := func(a, b []bool) bool { // a ⊆ b
		for k := range a {
			if a[k] && !b[k] {
				return false
			}
		}
		return true
	}
	// unitUse[i][l]: the per-unit use of job i of resource l (a job of
	// whole nodes: the least capacity among its nodes).
	unitUse := make([][]int64, len(m.Jobs))
	for i := range m.Jobs {
		j := &m.Jobs[i]
		if !j.Whole {
			unitUse[i] = j.Req
			continue
		}
		unitUse[i] = make([]int64, len(m.Resources))
		for l := range unitUse[i] {
			least := int64(-1)
			for _, o := range j.Options {
				if c := m.Nodes[o.Node].Cap[l]; least < 0 || c < least {
					least = c
				}
			}
			unitUse[i][l] = max(0, least)
		}
	}

	// What holds each node until a slot: running jobs, and a reservation
	// under way at the window time; sorted by end.
	type hold struct {
		end  int
		use  []int64
		excl bool
	}
	t0, g := m.Window.Time, m.Grid
	holds := make([][]hold, len(m.Nodes))
	var slots []int // 0 and every end
	slots = append(slots, 0)
	for k, n := range m.Nodes {
		for _, r := range n.Running {
			if r.EndSlot > 0 {
				holds[k] = append(holds[k], hold{r.EndSlot, r.Use, r.Excl})
			}
		}
		for _, rv := range n.Reserved {
			if rv[0] <= t0 && rv[1] > t0 {
				holds[k] = append(holds[k], hold{int(ceilDiv(rv[1]-t0, g)), nil, true})
			}
		}
		slices.SortFunc(holds[k], func(a, b hold) int { return a.end - b.end })
		for _, h := range holds[k] {
			slots = append(slots, h.end)
		}
	}
	slices.Sort(slots)
	slots = slices.Compact(slots)
	// free[k][from][l]: what node k has of resource l once its holds
	// before index from have ended (an exclusive hold keeps it all).
	free := make([][][]int64, len(m.Nodes))
	for k := range m.Nodes {
		free[k] = make([][]int64, len(holds[k])+1)
		for from := range free[k] {
			f := slices.Clone(m.Nodes[k].Cap)
			for _, h := range holds[k][from:] {
				for l := range f {
					if h.excl {
						f[l] = 0
					} else {
						f[l] -= h.use[l]
					}
				}
			}
			for l := range f {
				f[l] = max(0, f[l])
			}
			free[k][from] = f
		}
	}
	// minFloor(c, v): min_l ⌊v_l/c_l⌋ over the resources l with c_l > 0.
	minFloor := func(c, v []int64) int64 {
		out := int64(-1)
		for l, cl := range c {
			if cl <= 0 {
				continue
			}
			if n := v[l] / cl; out < 0 || n < out {
				out = n
			}
		}
		return max(0, out)
	}
	// count(k, c, from): the units of size c that fit on node k once its
	// holds before index from have ended.
	count := func(k int, c []int64, from int) int64 { return minFloor(c, free[k][from]) }
	// use(i, c): the counts a unit of job i takes.
	use := func(i int, c []int64) int64 { return minFloor(c, unitUse[i]) }
	// demand(i, c): what job i takes of the counts c while it runs,
	// u_i·use(i, c); an exclusive job takes its nodes whole, at least
	// ⌈u_i / (most units on a node)⌉ of them, each with the count of an
	// empty node (the least among its options).
	demand := func(i int, c []int64) int64 {
		j := &m.Jobs[i]
		d := int64(j.Units) * use(i, c)
		if !j.Excl || j.Whole {
			return d
		}
		most, full := 1, int64(-1)
		for _, o := range j.Options {
			most = max(most, o.MaxUnits)
			if n := count(o.Node, c, len(holds[o.Node])); full < 0 || n < full {
				full = n
			}
		}
		return max(d, int64((j.Units+most-1)/most)*max(0, full))
	}
	capAt := func(set int, c []int64, s int) int64 { // pooled count at slot s
		var sum int64
		for k := range m.Nodes {
			if sets[set][k] {
				from := 0
				for from < len(holds[k]) && holds[k][from].end <= s {
					from++
				}
				sum += count(k, c, from)
			}
		}
		return sum
	}

	// The thresholds: every per-unit requirement c of one resource l
	// (c on l, 0 elsewhere), and every job's unit as a whole (all its
	// requirements at once, when it has two or more).
	var thresholds [][]int64
	for l := range m.Resources {
		var cs []int64
		for i := range m.Jobs {
			if r := unitUse[i][l]; r > 0 {
				cs = append(cs, r)
			}
		}
		slices.Sort(cs)
		for _, c := range slices.Compact(cs) {
			v := make([]int64, len(m.Resources))
			v[l] = c
			thresholds = append(thresholds, v)
		}
	}
	for i := range m.Jobs {
		n := 0
		for _, r := range unitUse[i] {
			if r > 0 {
				n++
			}
		}
		if n >= 2 {
			thresholds = append(thresholds, unitUse[i])
		}
	}
	type pres struct {
		set   int
		c     []int64
		score float64
	}
	var res []pres
	for _, c := range thresholds {
		for s := range sets {
			r := pres{set: s, c: c, score: -1}
			dem := make([]int64, len(m.Jobs)) // 0 for a job not confined to the set
			for i := range m.Jobs {
				if within(jobSets[i], sets[s]) {
					dem[i] = demand(i, c)
				}
			}
			caps := make([]int64, len(slots))
			for k, at := range slots {
				caps[k] = capAt(s, c, at)
				var d int64
				for i, j := range m.Jobs {
					if j.EST <= at {
						d += dem[i]
					}
				}
				if d > 0 {
					r.score = max(r.score, float64(d)/float64(max(1, caps[k])))
				}
			}
			if r.score < 0 {
				continue
			}
			// The same counts as a resource already kept (memory in
			// proportion to cores, say) add nothing.
			if k := fmt.Sprint(caps, dem); !seen[k] {
				seen[k] = true
				res = append(res, r)
			}
		}
	}
	slices.SortStableFunc(res, func(a, b pres) int { return cmp.Compare(b.score, a.score) })
	if keep > 0 && len(res) > keep {
		res = res[:keep]
	}
	p := &Model{Window: m.Window, Grid: m.Grid, Scale: m.Scale, ExactWeights: m.ExactWeights, GridExact: m.GridExact}
	for _, r := range res {
		var name []string
		for l, c := range r.c {
			if c > 0 {
				name = append(name, fmt.Sprintf("%s>=%d", m.Resources[l], c))
			}
		}
		p.Resources = append(p.Resources, fmt.Sprintf("%s@%d", strings.Join(name, "&"), r.set))
	}

	// The pseudo-node: capacities Σ ⌊cap/c⌋, and the holds as what they
	// keep of the counts until each end slot (the count's rise there).
	nd := Node{Cap: make([]int64, len(res))}
	ends := map[int][]int64{}
	for k := range m.Nodes {
		for ri, r := range res {
			if !sets[r.set][k] {
				continue
			}
			nd.Cap[ri] += count(k, r.c, len(holds[k]))
			for h := range holds[k] {
				if rise := count(k, r.c, h+1) - count(k, r.c, h); rise > 0 {
					e := holds[k][h].end
					if ends[e] == nil {
						ends[e] = make([]int64, len(res))
					}
					ends[e][ri] += rise
				}
			}
		}
	}
	for _, e := range slots {
		if ends[e] != nil {
			nd.Running = append(nd.Running, Run{ID: fmt.Sprintf("held-until-%d", e), EndSlot: e, Use: ends[e]})
		}
	}
	p.Nodes = []Node{nd}

	for i, j := range m.Jobs {
		q := Job{Index: j.Index, ID: j.ID, Units: j.Units, Req: make([]int64, len(res)), Dur: j.Dur, Weight: j.Weight, EST: j.EST}
		excl := j.Excl && !j.Whole
		if excl {
			q.Units = 1 // its demand as one unit: it may exceed u_i per-unit uses
		}
		for ri, r := range res {
			if within(jobSets[i], sets[r.set]) {
				if excl {
					q.Req[ri] = demand(i, r.c)
				} else {
					q.Req[ri] = use(i, r.c)
				}
			}
		}
		o := Option{Node: 0, MaxUnits: q.Units}
		for k := 1; k <= q.Units; k++ {
			rel := j.EST // a fit on m's nodes is a fit of the pool
			for _, s := range slots {
				if s < rel && p.fitsBesideRunning(&q, &nd, k, s) {
					rel = s
					break
				}
			}
			o.Release = append(o.Release, rel)
		}
		q.Options = []Option{o}
		p.Jobs = append(p.Jobs, q)
	}
	return p
}
