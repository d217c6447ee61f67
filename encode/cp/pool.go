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
	pl := newPool(m)
	res := pl.contended(keep)
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
	nd := pl.pseudoNode(res)
	p.Nodes = []Node{nd}
	for i := range m.Jobs {
		p.Jobs = append(p.Jobs, pl.job(p, &nd, res, i))
	}
	return p
}

// A pool is the state of Pool: the node sets, the jobs' per-unit uses,
// what holds each node until when, and what each node has free once its
// holds end.
type pool struct {
	m *Model
	// sets are the node sets (all nodes, then each job's distinct option
	// set), jobSets each job's; seen the keys of the sets and resources
	// kept.
	sets, jobSets [][]bool
	seen          map[string]bool
	// unitUse[i][l]: the per-unit use of job i of resource l (a job of
	// whole nodes: the least capacity among its nodes).
	unitUse [][]int64
	// holds[k]: what holds node k until a slot (running jobs, and a
	// reservation under way at the window time), sorted by end; slots:
	// 0 and every end.
	holds [][]hold
	slots []int
	// free[k][from][l]: what node k has of resource l once its holds
	// before index from have ended (an exclusive hold keeps it all).
	free [][][]int64
}

// A hold keeps a node's resources (use; all of them when excl) until the
// slot end.
type hold struct {
	end  int
	use  []int64
	excl bool
}

// A pres is a pooled resource: the threshold c on node set set, with its
// contention score.
type pres struct {
	set   int
	c     []int64
	score float64
}

func newPool(m *Model) *pool {
	pl := &pool{m: m, seen: map[string]bool{}}
	all := make([]bool, len(m.Nodes))
	for i := range all {
		all[i] = true
	}
	pl.addSet(all)
	pl.jobSets = make([][]bool, len(m.Jobs))
	for i, j := range m.Jobs {
		in := make([]bool, len(m.Nodes))
		for _, o := range j.Options {
			in[o.Node] = true
		}
		pl.jobSets[i] = in
		pl.addSet(in)
	}
	pl.unitUse = make([][]int64, len(m.Jobs))
	for i := range m.Jobs {
		j := &m.Jobs[i]
		if !j.Whole {
			pl.unitUse[i] = j.Req
			continue
		}
		pl.unitUse[i] = make([]int64, len(m.Resources))
		for l := range pl.unitUse[i] {
			least := int64(-1)
			for _, o := range j.Options {
				if c := m.Nodes[o.Node].Cap[l]; least < 0 || c < least {
					least = c
				}
			}
			pl.unitUse[i][l] = max(0, least)
		}
	}
	pl.holdsAndFree()
	return pl
}

// addSet adds a node set unless it is there.
func (pl *pool) addSet(in []bool) {
	var b strings.Builder
	for _, v := range in {
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	if k := b.String(); !pl.seen[k] {
		pl.seen[k] = true
		pl.sets = append(pl.sets, in)
	}
}

// within reports a ⊆ b.
func within(a, b []bool) bool {
	for k := range a {
		if a[k] && !b[k] {
			return false
		}
	}
	return true
}

// holdsAndFree sets holds, slots and free.
func (pl *pool) holdsAndFree() {
	m := pl.m
	t0, g := m.Window.Time, m.Grid
	pl.holds = make([][]hold, len(m.Nodes))
	pl.slots = append(pl.slots, 0)
	for k, n := range m.Nodes {
		for _, r := range n.Running {
			if r.EndSlot > 0 {
				pl.holds[k] = append(pl.holds[k], hold{r.EndSlot, r.Use, r.Excl})
			}
		}
		for _, rv := range n.Reserved {
			if rv[0] <= t0 && rv[1] > t0 {
				pl.holds[k] = append(pl.holds[k], hold{int(ceilDiv(rv[1]-t0, g)), nil, true})
			}
		}
		slices.SortFunc(pl.holds[k], func(a, b hold) int { return a.end - b.end })
		for _, h := range pl.holds[k] {
			pl.slots = append(pl.slots, h.end)
		}
	}
	slices.Sort(pl.slots)
	pl.slots = slices.Compact(pl.slots)
	pl.free = make([][][]int64, len(m.Nodes))
	for k := range m.Nodes {
		pl.free[k] = make([][]int64, len(pl.holds[k])+1)
		for from := range pl.free[k] {
			f := slices.Clone(m.Nodes[k].Cap)
			for _, h := range pl.holds[k][from:] {
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
			pl.free[k][from] = f
		}
	}
}

// minFloor(c, v): min_l ⌊v_l/c_l⌋ over the resources l with c_l > 0.
func minFloor(c, v []int64) int64 {
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

// count is the units of size c that fit on node k once its holds before
// index from have ended.
func (pl *pool) count(k int, c []int64, from int) int64 { return minFloor(c, pl.free[k][from]) }

// use is the counts a unit of job i takes.
func (pl *pool) use(i int, c []int64) int64 { return minFloor(c, pl.unitUse[i]) }

// demand is what job i takes of the counts c while it runs,
// u_i·use(i, c); an exclusive job takes its nodes whole, at least
// ⌈u_i / (most units on a node)⌉ of them, each with the count of an empty
// node (the least among its options).
func (pl *pool) demand(i int, c []int64) int64 {
	j := &pl.m.Jobs[i]
	d := int64(j.Units) * pl.use(i, c)
	if !j.Excl || j.Whole {
		return d
	}
	most, full := 1, int64(-1)
	for _, o := range j.Options {
		most = max(most, o.MaxUnits)
		if n := pl.count(o.Node, c, len(pl.holds[o.Node])); full < 0 || n < full {
			full = n
		}
	}
	return max(d, int64((j.Units+most-1)/most)*max(0, full))
}

// capAt is the pooled count of node set set at slot s.
func (pl *pool) capAt(set int, c []int64, s int) int64 {
	var sum int64
	for k := range pl.m.Nodes {
		if pl.sets[set][k] {
			from := 0
			for from < len(pl.holds[k]) && pl.holds[k][from].end <= s {
				from++
			}
			sum += pl.count(k, c, from)
		}
	}
	return sum
}

// thresholds are every per-unit requirement c of one resource l (c on l,
// 0 elsewhere), and every job's unit as a whole (all its requirements at
// once, when it has two or more).
func (pl *pool) thresholds() [][]int64 {
	m := pl.m
	var out [][]int64
	for l := range m.Resources {
		var cs []int64
		for i := range m.Jobs {
			if r := pl.unitUse[i][l]; r > 0 {
				cs = append(cs, r)
			}
		}
		slices.Sort(cs)
		for _, c := range slices.Compact(cs) {
			v := make([]int64, len(m.Resources))
			v[l] = c
			out = append(out, v)
		}
	}
	for i := range m.Jobs {
		n := 0
		for _, r := range pl.unitUse[i] {
			if r > 0 {
				n++
			}
		}
		if n >= 2 {
			out = append(out, pl.unitUse[i])
		}
	}
	return out
}

// contended returns the pooled resources of every threshold and node set,
// the keep most contended first (keep ≤ 0: all): the largest ratio of the
// demand of the jobs that can have started by a running job's end to the
// capacity then. A resource of the same counts as one kept adds nothing.
func (pl *pool) contended(keep int) []pres {
	m := pl.m
	var res []pres
	for _, c := range pl.thresholds() {
		for s := range pl.sets {
			r := pres{set: s, c: c, score: -1}
			dem := make([]int64, len(m.Jobs)) // 0 for a job not confined to the set
			for i := range m.Jobs {
				if within(pl.jobSets[i], pl.sets[s]) {
					dem[i] = pl.demand(i, c)
				}
			}
			caps := make([]int64, len(pl.slots))
			for k, at := range pl.slots {
				caps[k] = pl.capAt(s, c, at)
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
			if k := fmt.Sprint(caps, dem); !pl.seen[k] {
				pl.seen[k] = true
				res = append(res, r)
			}
		}
	}
	slices.SortStableFunc(res, func(a, b pres) int { return cmp.Compare(b.score, a.score) })
	if keep > 0 && len(res) > keep {
		res = res[:keep]
	}
	return res
}

// pseudoNode is the pool's one node: capacities Σ ⌊cap/c⌋, and the holds
// as what they keep of the counts until each end slot (the count's rise
// there).
func (pl *pool) pseudoNode(res []pres) Node {
	nd := Node{Cap: make([]int64, len(res))}
	ends := map[int][]int64{}
	for k := range pl.m.Nodes {
		for ri, r := range res {
			if !pl.sets[r.set][k] {
				continue
			}
			nd.Cap[ri] += pl.count(k, r.c, len(pl.holds[k]))
			for h := range pl.holds[k] {
				if rise := pl.count(k, r.c, h+1) - pl.count(k, r.c, h); rise > 0 {
					e := pl.holds[k][h].end
					if ends[e] == nil {
						ends[e] = make([]int64, len(res))
					}
					ends[e][ri] += rise
				}
			}
		}
	}
	for _, e := range pl.slots {
		if ends[e] != nil {
			nd.Running = append(nd.Running, Run{ID: fmt.Sprintf("held-until-%d", e), EndSlot: e, Use: ends[e]})
		}
	}
	return nd
}

// job is job i of the pool p on its pseudo-node nd: its counts of each
// pooled resource, and its one option with the releases of each unit
// count (a fit on m's nodes is a fit of the pool).
func (pl *pool) job(p *Model, nd *Node, res []pres, i int) Job {
	j := pl.m.Jobs[i]
	q := Job{Index: j.Index, ID: j.ID, Units: j.Units, Req: make([]int64, len(res)), Dur: j.Dur, Weight: j.Weight, EST: j.EST}
	excl := j.Excl && !j.Whole
	if excl {
		q.Units = 1 // its demand as one unit: it may exceed u_i per-unit uses
	}
	for ri, r := range res {
		if within(pl.jobSets[i], pl.sets[r.set]) {
			if excl {
				q.Req[ri] = pl.demand(i, r.c)
			} else {
				q.Req[ri] = pl.use(i, r.c)
			}
		}
	}
	o := Option{Node: 0, MaxUnits: q.Units}
	for k := 1; k <= q.Units; k++ {
		rel := j.EST // a fit on m's nodes is a fit of the pool
		for _, s := range pl.slots {
			if s < rel && p.fitsBesideRunning(&q, nd, k, s) {
				rel = s
				break
			}
		}
		o.Release = append(o.Release, rel)
	}
	q.Options = []Option{o}
	return q
}
