package heuristics

import (
	"cmp"
	"math/bits"
	"slices"
)

// A mishraIndex ranks the leaves of an indexed tree for Mishra's
// allocators without comparing every candidate: a leaf's communication
// ratio depends only on its class (node count, free nodes, communication-
// intensive busy nodes), so the leaves are kept in bitsets by class and the
// classes in groups of equal ratio, in ratio order. Within a class the
// leaves rank by index; within a group, mishra.before decides.
type mishraIndex struct {
	m *mishra
	x *treeIndex
	// off[size] is the first class of leaves of that size (-1: none);
	// class off[size] + (free-1)·(size+1) + comm.
	off     map[int]int
	base    []int // by leaf switch: off[its size]
	classOf []int // by leaf switch; -1: no free node
	bits    [][]uint64
	// groups lists the classes by ratio, lowest first, equal ratios
	// together; cls describes each class.
	groups [][]int
	cls    []mishraClass
	// cur and fork are the rankers' scratch: per class, the next
	// position to look at (fork: of a walk forked from the first, see
	// mishra.plans).
	cur, fork []int
}

type mishraClass struct{ size, free, comm int }

// maxMishraClasses bounds the classes of a mishraIndex (leaves of up to
// about 60 nodes).
const maxMishraClasses = 1 << 12

// newMishraIndex indexes m (its tree indexed by fx), or returns nil when
// the leaves are too large for classes.
func newMishraIndex(m *mishra) *mishraIndex {
	x := m.fx
	leaves := x.lvl[1]
	mx := &mishraIndex{m: m, x: x, off: map[int]int{}, classOf: make([]int, len(m.cnt))}
	n := 0
	for _, l := range leaves {
		s := m.size[l]
		if _, ok := mx.off[s]; ok {
			continue
		}
		mx.off[s] = n
		for f := 1; f <= s; f++ {
			for c := 0; c <= s; c++ {
				mx.cls = append(mx.cls, mishraClass{s, f, c})
			}
		}
		n += s * (s + 1)
		if n > maxMishraClasses {
			return nil
		}
	}
	words := (len(leaves) + 63) / 64
	mx.bits = make([][]uint64, n)
	for c := range mx.bits {
		mx.bits[c] = make([]uint64, words)
	}
	mx.cur, mx.fork = make([]int, n), make([]int, n)
	order := make([]int, n)
	for c := range order {
		order[c] = c
	}
	ratio := func(c int) (uint64, uint64) {
		k := mx.cls[c]
		size, busy := uint64(k.size), uint64(k.size-k.free)
		if busy == 0 {
			return 0, 1
		}
		return uint64(k.comm)*size + busy*busy, busy * size
	}
	cmpR := func(a, b int) int {
		an, ad := ratio(a)
		bn, bd := ratio(b)
		h1, l1 := bits.Mul64(an, bd)
		h2, l2 := bits.Mul64(bn, ad)
		if h1 != h2 {
			return cmp.Compare(h1, h2)
		}
		return cmp.Compare(l1, l2)
	}
	slices.SortStableFunc(order, cmpR)
	for i, c := range order {
		if i > 0 && cmpR(order[i-1], c) == 0 {
			mx.groups[len(mx.groups)-1] = append(mx.groups[len(mx.groups)-1], c)
			continue
		}
		mx.groups = append(mx.groups, []int{c})
	}
	for s := range mx.classOf {
		mx.classOf[s] = -1
	}
	mx.base = make([]int, len(m.cnt))
	for _, l := range leaves {
		mx.base[l] = mx.off[m.size[l]]
	}
	for _, l := range leaves {
		mx.update(l)
	}
	return mx
}

// update files leaf l under its current class.
func (mx *mishraIndex) update(l int) {
	p := mx.x.pos[l]
	if c := mx.classOf[l]; c >= 0 {
		mx.bits[c][p/64] &^= 1 << (p % 64)
	}
	c := -1
	if f := mx.m.cnt[l]; f > 0 {
		s := mx.m.size[l]
		c = mx.base[l] + (f-1)*(s+1) + mx.m.commCnt[l]
		mx.bits[c][p/64] |= 1 << (p % 64)
	}
	mx.classOf[l] = c
}

// ranker is mishra.ranker on the index: the leaves below top (-1: all)
// in ranking order, each once.
func (mx *mishraIndex) ranker(top int, comm bool) func(rem int) int {
	r := mx.walk(top, comm, mx.cur)
	return r.next
}

// A mishraWalk is a ranking of the leaves below a switch in progress:
// the group of classes it is at and, per class, the next position to
// look at (cur).
type mishraWalk struct {
	mx          *mishraIndex
	hi, g, step int
	comm        bool
	cur         []int
}

// walk starts the ranking of the leaves below top (-1: all) for a job
// (communication-intensive when comm), with cur (one entry per class) as
// its state.
func (mx *mishraIndex) walk(top int, comm bool, cur []int) *mishraWalk {
	x := mx.x
	if top < 0 {
		top = x.v
	}
	lo, hi := x.pos[top], x.pos[top]+1
	if x.levelOf(top) > 1 {
		lo, hi = x.rng[top][1][0], x.rng[top][1][1]
	}
	for c := range cur {
		cur[c] = lo
	}
	r := &mishraWalk{mx: mx, hi: hi, step: 1, comm: comm, cur: cur}
	if !comm {
		r.g, r.step = len(mx.groups)-1, -1 // the highest ratio first
	}
	return r
}

// fork returns a copy of r with cur as its state: both go on from where r
// is, independently.
func (r *mishraWalk) fork(cur []int) *mishraWalk {
	f := *r
	f.cur = cur[:copy(cur, r.cur)]
	return &f
}

// next returns the best-ranked leaf not yet yielded for a job that still
// needs rem nodes, or -1.
func (r *mishraWalk) next(rem int) int {
	mx, hi := r.mx, r.hi
	for ; r.g >= 0 && r.g < len(mx.groups); r.g += r.step {
		best, bc := -1, -1
		for _, c := range mx.groups[r.g] {
			if r.cur[c] >= hi {
				continue
			}
			p := anyIn(mx.bits[c], r.cur[c], hi)
			if p < 0 {
				r.cur[c] = hi
				continue
			}
			r.cur[c] = p
			if l := mx.x.lvl[1][p]; best < 0 || mx.m.before(l, best, rem, r.comm) {
				best, bc = l, c
			}
		}
		if best >= 0 {
			r.cur[bc]++
			return best
		}
	}
	return -1
}
