package cpbnb

import (
	"context"
	"math"
	"slices"

	"github.com/optsched/optsched/encode/cp"
)

// maxChoices bounds the unit distributions tried at one node and slot:
// beyond it the search stops unfinished.
const maxChoices = 1 << 16

// bnbItem is a running or placed job's use of a node until end.
type bnbItem struct {
	end  int
	use  []int64
	excl bool
}

// bnbChild is one branch: job j at slot s with units per option.
type bnbChild struct {
	lb    int64
	j, s  int
	units []int
}

// bnb is one search's state.
type bnb struct {
	ctx   context.Context
	m     *cp.Model
	items [][]bnbItem // per node
	base  []int       // per node: class by capacities and reservations
	same  []int       // per job: the first job with the same data
	ends  []int       // forbid ends (hi+1) of every option, sorted

	placed []bool
	slots  []int
	units  [][]int
	cost   int64

	best      int64
	bestSlots []int
	bestUnits [][]int
	improved  func(*schedule) // receives every new best (nil: none)

	// bound is the least lower bound of a subtree the search left
	// unfinished (math.MaxInt64 if none).
	bound          int64
	visited, limit int64
	stopped        bool
	free           []int64
	keyBuf         []byte   // nodeKey's scratch
	keyItems       []string // nodeKey's scratch
}

// search runs the branch and bound on m below ub (Σ ω_i s_i of the
// incumbent; math.MaxInt64 for none), until it finishes, ctx ends or it
// has visited limit nodes (0: no limit). It returns the best schedule
// found below ub (nil if none), a proven lower bound on every schedule's
// Σ ω_i s_i (the optimum when done), whether it finished, and the nodes
// it visited. improved, when not nil, receives every schedule that
// improves on the best as it is found. The CH term (κ > 0) is not
// handled: the caller refuses it.
func search(ctx context.Context, m *cp.Model, ub int64, limit int64, improved func(*schedule)) (*schedule, int64, bool, int64) {
	b := &bnb{ctx: ctx, m: m, best: ub, limit: limit, bound: math.MaxInt64, improved: improved}
	n := len(m.Jobs)
	b.items = make([][]bnbItem, len(m.Nodes))
	b.base = make([]int, len(m.Nodes))
	classes := map[string]int{}
	for k, nd := range m.Nodes {
		for _, r := range nd.Running {
			b.items[k] = append(b.items[k], bnbItem{end: r.EndSlot, use: r.Use, excl: r.Excl})
		}
		key := string(appendInts(nil, nd.Cap)) + "|" + string(appendPairs(nil, nd.Reserved))
		c, ok := classes[key]
		if !ok {
			c = len(classes)
			classes[key] = c
		}
		b.base[k] = c
	}
	b.same = make([]int, n)
	for i := range m.Jobs {
		b.same[i] = i
		for p := range i {
			if sameJob(&m.Jobs[p], &m.Jobs[i]) {
				b.same[i] = b.same[p]
				break
			}
		}
		for _, o := range m.Jobs[i].Options {
			for _, f := range o.Forbid {
				b.ends = append(b.ends, f[1]+1)
			}
		}
	}
	slices.Sort(b.ends)
	b.ends = slices.Compact(b.ends)
	b.placed = make([]bool, n)
	b.slots = make([]int, n)
	b.units = make([][]int, n)
	b.free = make([]int64, len(m.Resources))
	var lb0 int64
	for _, j := range m.Jobs {
		lb0 += j.Weight * int64(j.EST)
	}
	b.dfs(0, 0)
	if b.stopped && b.bound == math.MaxInt64 {
		b.bound = lb0 // stopped at the root
	}
	bound := min(b.best, max(lb0, b.bound))
	var out *schedule
	if b.bestSlots != nil {
		out = &schedule{slots: b.bestSlots, units: b.bestUnits, w: b.best}
	}
	return out, bound, !b.stopped, b.visited
}

// sameJob reports whether jobs a and b are exchangeable.
func sameJob(a, b *cp.Job) bool {
	if a.Units != b.Units || a.Dur != b.Dur || a.Weight != b.Weight || a.EST != b.EST || a.Excl != b.Excl ||
		a.Pack != b.Pack || a.Whole != b.Whole || !slices.Equal(a.Req, b.Req) || len(a.Options) != len(b.Options) {
		return false
	}
	for o := range a.Options {
		x, y := &a.Options[o], &b.Options[o]
		if x.Node != y.Node || x.MaxUnits != y.MaxUnits || !slices.Equal(x.Release, y.Release) || !slices.Equal(x.Forbid, y.Forbid) {
			return false
		}
	}
	return true
}

func appendInts(b []byte, v []int64) []byte {
	for _, x := range v {
		for k := range 8 {
			b = append(b, byte(x>>(8*k)))
		}
	}
	return b
}

func appendPairs(b []byte, v [][2]int64) []byte {
	for _, p := range v {
		b = appendInts(b, p[:])
	}
	return b
}

// fit returns how many units of job j fit on its option o at slot t, at
// and (t being at or after every placed start) after t.
func (b *bnb) fit(j, o, t int) int {
	job := &b.m.Jobs[j]
	opt := &job.Options[o]
	for _, f := range opt.Forbid {
		if f[0] <= t && t <= f[1] {
			return 0
		}
	}
	nd := &b.m.Nodes[opt.Node]
	copy(b.free, nd.Cap)
	for _, it := range b.items[opt.Node] {
		if it.end > t {
			if it.excl || job.Excl {
				return 0
			}
			for l, v := range it.use {
				b.free[l] -= v
			}
		}
	}
	k := opt.MaxUnits
	for l, r := range job.Req {
		if r > 0 {
			k = min(k, int(max(0, b.free[l]/r)))
		}
	}
	return k
}

// fitsAt reports whether job j fits at t beside the placed jobs.
func (b *bnb) fitsAt(j, t int) bool {
	job := &b.m.Jobs[j]
	total := 0
	for o := range job.Options {
		k := b.fit(j, o, t)
		if job.Pack && k >= job.Units {
			return true
		}
		total += k
		if !job.Pack && total >= job.Units {
			return true
		}
	}
	return false
}

// events returns the slots ≥ t at which a fit can begin: t, the ends of
// running and placed jobs and the ends of forbidden ranges.
func (b *bnb) events(t int) []int {
	ev := []int{t}
	for _, its := range b.items {
		for _, it := range its {
			if it.end > t {
				ev = append(ev, it.end)
			}
		}
	}
	for _, e := range b.ends {
		if e > t {
			ev = append(ev, e)
		}
	}
	slices.Sort(ev)
	return slices.Compact(ev)
}

func (b *bnb) dfs(t int, depth int) {
	m := b.m
	b.visited++
	if b.ctx.Err() != nil || b.limit > 0 && b.visited > b.limit {
		b.stopped = true
	}
	if b.stopped {
		return
	}
	n := len(m.Jobs)
	if depth == n {
		if b.cost < b.best {
			b.best = b.cost
			b.bestSlots = slices.Clone(b.slots)
			b.bestUnits = make([][]int, n)
			for i := range b.units {
				b.bestUnits[i] = slices.Clone(b.units[i])
			}
			if b.improved != nil {
				b.improved(&schedule{slots: b.bestSlots, units: b.bestUnits, w: b.best})
			}
		}
		return
	}
	ev := b.events(t)
	est := make([]int, n)
	lb := b.cost
	for i := range m.Jobs {
		if b.placed[i] {
			continue
		}
		if i&7 == 0 && b.ctx.Err() != nil {
			// Stopped while bounding: the node's bound is what is placed
			// plus every other job at its earliest start.
			b.stopped = true
			weak := b.cost
			for k := range m.Jobs {
				if !b.placed[k] {
					weak += m.Jobs[k].Weight * int64(m.Jobs[k].EST)
				}
			}
			b.bound = min(b.bound, weak)
			return
		}
		est[i] = -1
		for _, e := range ev {
			if e >= m.Jobs[i].EST && b.fitsAt(i, e) {
				est[i] = e
				break
			}
		}
		if est[i] < 0 {
			return // cannot happen: after the last event every job fits
		}
		lb += m.Jobs[i].Weight * int64(est[i])
	}
	if lb >= b.best {
		return
	}
	var children []bnbChild
	for j := range m.Jobs {
		if b.ctx.Err() != nil {
			// Branching on a large window takes long: stop within it.
			b.stopped = true
			break
		}
		if b.placed[j] || b.same[j] != j && !b.placed[b.prevSame(j)] {
			continue
		}
		for _, s := range ev {
			if s < est[j] {
				continue
			}
			if b.stopped || b.ctx.Err() != nil {
				b.stopped = true
				break
			}
			clb := b.cost + m.Jobs[j].Weight*int64(s)
			for i := range m.Jobs {
				if !b.placed[i] && i != j {
					clb += m.Jobs[i].Weight * int64(max(s, est[i]))
				}
			}
			if clb >= b.best {
				break
			}
			for _, u := range b.choices(j, s, t, ev) {
				children = append(children, bnbChild{lb: clb, j: j, s: s, units: u})
			}
		}
	}
	if b.stopped {
		b.bound = min(b.bound, lb) // stopped while branching: no sort
		return
	}
	slices.SortStableFunc(children, func(x, y bnbChild) int {
		if x.lb != y.lb {
			if x.lb < y.lb {
				return -1
			}
			return 1
		}
		return int(m.Jobs[y.j].Weight - m.Jobs[x.j].Weight)
	})
	if b.stopped {
		b.bound = min(b.bound, lb) // stopped while branching
		return
	}
	for _, c := range children {
		if c.lb >= b.best {
			continue
		}
		b.place(c)
		b.dfs(c.s, depth+1)
		b.unplace(c)
		if b.stopped {
			// This child's subtree is unfinished; the later children
			// have larger bounds.
			b.bound = min(b.bound, c.lb)
			return
		}
	}
}

// prevSame returns the job before j (in window order) with j's data.
func (b *bnb) prevSame(j int) int {
	for p := j - 1; p >= 0; p-- {
		if b.same[p] == b.same[j] {
			return p
		}
	}
	return j
}

func (b *bnb) place(c bnbChild) {
	job := &b.m.Jobs[c.j]
	b.placed[c.j], b.slots[c.j], b.units[c.j] = true, c.s, c.units
	b.cost += job.Weight * int64(c.s)
	for o, u := range c.units {
		if u == 0 {
			continue
		}
		use := make([]int64, len(job.Req))
		for l, r := range job.Req {
			use[l] = int64(u) * r
		}
		k := job.Options[o].Node
		b.items[k] = append(b.items[k], bnbItem{end: c.s + job.Dur, use: use, excl: job.Excl})
	}
}

func (b *bnb) unplace(c bnbChild) {
	job := &b.m.Jobs[c.j]
	b.placed[c.j] = false
	b.cost -= job.Weight * int64(c.s)
	for o, u := range c.units {
		if u > 0 {
			k := job.Options[o].Node
			b.items[k] = b.items[k][:len(b.items[k])-1]
		}
	}
}

// nodeKey returns node k's state from slot s on, exactly (a hash could
// merge two nodes that differ): its capacity class and the uses still
// running after s, sorted. The buffers are reused across calls.
func (b *bnb) nodeKey(k, s int) string {
	b.keyItems = b.keyItems[:0]
	for _, it := range b.items[k] {
		if it.end > s {
			x := appendInts(b.keyBuf[:0], []int64{int64(it.end)})
			x = appendInts(x, it.use)
			if it.excl {
				x = append(x, 1)
			}
			b.keyItems = append(b.keyItems, string(x))
			b.keyBuf = x
		}
	}
	slices.Sort(b.keyItems)
	buf := appendInts(b.keyBuf[:0], []int64{int64(b.base[k])})
	for _, x := range b.keyItems {
		buf = append(buf, x...)
		buf = append(buf, 0xff)
	}
	b.keyBuf = buf
	return string(buf)
}

// choices returns job j's units per option at slot s: one per class
// distribution that fits at s and at no event in [t, s).
func (b *bnb) choices(j, s, t int, ev []int) [][]int {
	job := &b.m.Jobs[j]
	type class struct {
		opts []int // options, all with the same fit at s
		fit  int
	}
	var cls []class
	byKey := map[string]int{}
	for o := range job.Options {
		k := b.fit(j, o, s)
		if k == 0 {
			continue
		}
		key := b.nodeKey(job.Options[o].Node, s)
		c, ok := byKey[key]
		if !ok {
			c = len(cls)
			byKey[key] = c
			cls = append(cls, class{fit: k})
		}
		cls[c].opts = append(cls[c].opts, o)
	}
	var earlier []int
	for _, e := range ev {
		if e >= t && e < s && e >= job.EST {
			earlier = append(earlier, e)
		}
	}
	// fitsEarlier: some realization of counts (per class, non-increasing)
	// fits at an earlier event: match the largest counts to the nodes
	// with most room.
	fitsEarlier := func(counts [][]int) bool {
		for _, e := range earlier {
			ok := true
			for c := range cls {
				if len(counts[c]) == 0 {
					continue
				}
				room := make([]int, len(cls[c].opts))
				for x, o := range cls[c].opts {
					room[x] = b.fit(j, o, e)
				}
				slices.Sort(room)
				slices.Reverse(room)
				for r, u := range counts[c] {
					if room[r] < u {
						ok = false
						break
					}
				}
				if !ok {
					break
				}
			}
			if ok {
				return true
			}
		}
		return false
	}
	var out [][]int
	counts := make([][]int, len(cls))
	steps := 0
	emit := func() {
		steps++
		// Every 64 choices: each one is checked against the earlier
		// events, and on a 120-job window 1,024 of them took 30 ms.
		if steps&63 == 0 && (b.ctx.Err() != nil || steps > maxChoices) {
			b.stopped = true
		}
		if b.stopped || fitsEarlier(counts) {
			return
		}
		u := make([]int, len(job.Options))
		for c := range cls {
			for r, k := range counts[c] {
				u[cls[c].opts[r]] = k
			}
		}
		out = append(out, u)
	}
	if job.Pack {
		for c := range cls {
			if cls[c].fit >= job.Units {
				counts[c] = []int{job.Units}
				emit()
				counts[c] = nil
			}
		}
		return out
	}
	// rec distributes left units over classes c.. as non-increasing
	// per-node counts, each at most cap.
	var rec func(c, left int)
	var inClass func(c, left, cap int)
	calls := 0
	rec = func(c, left int) {
		// The distributions explored without a choice kept can be many
		// (units over many classes): poll the deadline here too.
		if calls++; calls&255 == 0 && b.ctx.Err() != nil {
			b.stopped = true
		}
		if b.stopped {
			return
		}
		if left == 0 {
			emit()
			return
		}
		if c == len(cls) {
			return
		}
		rec(c+1, left) // nothing in class c
		inClass(c, left, cls[c].fit)
	}
	inClass = func(c, left, cap int) {
		// Append one more node of class c with k units, k ≤ cap.
		if len(counts[c]) == len(cls[c].opts) {
			return
		}
		for k := min(cap, left); k >= 1; k-- {
			counts[c] = append(counts[c], k)
			rec(c+1, left-k)
			inClass(c, left-k, k)
			counts[c] = counts[c][:len(counts[c])-1]
		}
	}
	rec(0, job.Units)
	return out
}
