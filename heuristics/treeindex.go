package heuristics

import (
	"math/bits"
	"slices"
)

// A treeIndex keeps, beside a tree's free counts, what lets Slurm's next
// leaf and top switch be found without ranking every leaf: per level, the
// switches of that level by free count (bitsets over their positions in
// index order), and per switch a tournament over its children that yields
// its "largest path" (the child with the most free nodes, then that
// child's largest path, and so on down to a leaf; see bestChild). The
// virtual switch above the roots is switch v = NumSwitches(), at level
// tr.top, with the roots as its children.
//
// It needs an ordered topology: below any switch, the switches of each
// level occupy consecutive positions of that level's index order, and
// the leaves of a switch's earlier-positioned descendants come first
// (generated layouts and fat-trees are so). newTreeIndex returns nil
// otherwise, or when the bitsets would be too large, and the callers
// keep the scan.
type treeIndex struct {
	tr *tree
	v  int
	// lvl[L] lists the switches of level L by index (lvl[top] = {v});
	// pos[s] is s's position in its level's list.
	lvl [][]int
	pos []int
	// rng[s][L] is the range [lo, hi) of positions at level L below s
	// (L < level of s).
	rng [][][2]int
	// maxc[L] is the largest node count of a level-L switch; byCnt[L][c]
	// marks the positions of the level-L switches with c free nodes (nil
	// for levels of fewer than 64 switches, which are scanned).
	maxc  []int
	byCnt [][][]uint64
	// kids[s] are the child switches (v: the roots) and kidAt[s] is s's
	// position among its parent's; tour[s] is the tournament over
	// kids[s]: tour[s][1] holds the best child, leaves at size/2+i.
	kids  [][]int
	kidAt []int
	tour  [][]int32
	// dirty[s] lists the children of s whose largest paths changed since
	// its tournament was last brought up to date (marked[c]: c is listed),
	// and slots is flush's scratch.
	dirty  [][]int32
	marked []bool
	slots  []int
	// noPaths leaves the tournaments alone: Mishra's allocators read no
	// largest path.
	noPaths bool
	// up[s] is the parent, v for roots, -1 for v.
	up []int
	// leafOf is the leaf of node id, for give.
	leafOf []int
	// acc, seen and touched are movedBatch's scratch: per switch the
	// change summed so far and whether it is listed in touched.
	acc     []int
	seen    []bool
	touched []int
}

// maxIndexWords bounds the bitsets of a treeIndex (64 MiB).
const maxIndexWords = 1 << 23

// newTreeIndex indexes tr (its counts as they stand), or returns nil when
// tr's topology is not ordered or too large to index.
func newTreeIndex(tr *tree) *treeIndex {
	t := tr.t
	ns := t.NumSwitches()
	v := ns
	x := &treeIndex{tr: tr, v: v, pos: make([]int, ns+1), kids: make([][]int, ns+1), kidAt: make([]int, ns+1),
		up: make([]int, ns+1), lvl: make([][]int, tr.top+1), maxc: make([]int, tr.top+1), rng: make([][][2]int, ns+1)}
	size := make([]int, ns+1)
	for s := range ns {
		sw := t.Switch(s)
		x.kids[s] = sw.Switches
		if sw.Parent < 0 {
			x.up[s] = v
			x.kidAt[s] = len(x.kids[v])
			x.kids[v] = append(x.kids[v], s)
		} else {
			x.up[s] = sw.Parent
		}
		x.lvl[sw.Level] = append(x.lvl[sw.Level], s)
	}
	x.up[v] = -1
	x.lvl[tr.top] = []int{v}
	for s := range ns {
		for i, c := range x.kids[s] {
			x.kidAt[c] = i
		}
	}
	for L, list := range x.lvl {
		for i, s := range list {
			x.pos[s] = i
		}
		_ = L
	}
	x.leafOf = make([]int, t.NumNodes())
	for id := range x.leafOf {
		x.leafOf[id] = t.Node(id).Leaf
	}
	// Sizes, ranges and the order test, bottom-up by level.
	for L := 1; L <= tr.top; L++ {
		for _, s := range x.lvl[L] {
			x.rng[s] = make([][2]int, x.levelOf(s))
			if len(x.kids[s]) == 0 {
				size[s] = len(t.Switch(s).Nodes)
			}
			for l := 1; l < x.levelOf(s); l++ {
				x.rng[s][l] = [2]int{-1, -1}
			}
			for _, c := range x.kids[s] {
				size[s] += size[c]
				lc := x.levelOf(c)
				if !x.extend(s, lc, x.pos[c], x.pos[c]+1) {
					return nil
				}
				for l := 1; l < lc; l++ {
					if r := x.rng[c][l]; r[0] >= 0 && !x.extend(s, l, r[0], r[1]) {
						return nil
					}
				}
			}
		}
	}
	// Contiguity: the ranges of a switch's children at each level must
	// follow one another without gaps, in the children's order.
	for s := 0; s <= v; s++ {
		for l := 1; l < x.levelOf(s); l++ {
			r := x.rng[s][l]
			if r[0] < 0 {
				continue
			}
			n := 0
			last := -1
			for _, c := range x.kids[s] {
				var cr [2]int
				switch lc := x.levelOf(c); {
				case lc == l:
					cr = [2]int{x.pos[c], x.pos[c] + 1}
				case lc > l:
					cr = x.rng[c][l]
				default:
					continue
				}
				if cr[0] < 0 {
					continue
				}
				if cr[0] < last {
					return nil
				}
				last = cr[1]
				n += cr[1] - cr[0]
			}
			if n != r[1]-r[0] {
				return nil
			}
		}
	}
	words := 0
	for L := 1; L <= tr.top; L++ {
		for _, s := range x.lvl[L] {
			x.maxc[L] = max(x.maxc[L], size[s])
		}
		if len(x.lvl[L]) >= 64 {
			words += (x.maxc[L] + 1) * ((len(x.lvl[L]) + 63) / 64)
		}
	}
	if words > maxIndexWords {
		return nil
	}
	x.byCnt = make([][][]uint64, tr.top+1)
	for L := 1; L <= tr.top; L++ {
		if len(x.lvl[L]) < 64 {
			continue
		}
		w := (len(x.lvl[L]) + 63) / 64
		x.byCnt[L] = make([][]uint64, x.maxc[L]+1)
		for c := range x.byCnt[L] {
			x.byCnt[L][c] = make([]uint64, w)
		}
		for i, s := range x.lvl[L] {
			c := x.cnt(s)
			x.byCnt[L][c][i/64] |= 1 << (i % 64)
		}
	}
	x.tour = make([][]int32, ns+1)
	x.dirty = make([][]int32, ns+1)
	x.marked = make([]bool, ns+1)
	for L := 2; L <= tr.top; L++ {
		for _, s := range x.lvl[L] {
			k := len(x.kids[s])
			p := 1
			for p < k {
				p <<= 1
			}
			tt := make([]int32, 2*p)
			for i := range tt {
				tt[i] = -1
			}
			for i, c := range x.kids[s] {
				tt[p+i] = int32(c)
			}
			for i := p - 1; i >= 1; i-- {
				tt[i] = x.better(tt[2*i], tt[2*i+1])
			}
			x.tour[s] = tt
		}
	}
	return x
}

// extend widens s's range at level l by [lo, hi).
func (x *treeIndex) extend(s, l, lo, hi int) bool {
	r := &x.rng[s][l]
	if r[0] < 0 {
		*r = [2]int{lo, hi}
		return true
	}
	r[0], r[1] = min(r[0], lo), max(r[1], hi)
	return true
}

func (x *treeIndex) levelOf(s int) int {
	if s == x.v {
		return x.tr.top
	}
	return x.tr.level[s]
}

func (x *treeIndex) cnt(s int) int {
	if s == x.v {
		return x.tr.total
	}
	return x.tr.cnt[s]
}

// bestChild returns the child of s on its largest path, or -1 for a leaf.
func (x *treeIndex) bestChild(s int) int {
	if x.tour[s] == nil {
		return -1
	}
	if len(x.dirty[s]) > 0 {
		x.flush(s)
	}
	return int(x.tour[s][1])
}

// flush brings s's tournament up to date: first its dirty children's,
// then the games above them, level by level, each game once. A switch
// with dirty children is always itself listed in its parent's (marked),
// so that the children that are not listed have clean subtrees and the
// games read no dirty tournament.
func (x *treeIndex) flush(s int) {
	for _, c := range x.dirty[s] {
		if len(x.dirty[c]) > 0 {
			x.flush(int(c))
		}
	}
	tt := x.tour[s]
	half := len(tt) / 2
	slots := x.slots[:0]
	for _, c := range x.dirty[s] {
		x.marked[c] = false
		slots = append(slots, half+x.kidAt[c])
	}
	x.dirty[s] = x.dirty[s][:0]
	slices.Sort(slots)
	for len(slots) > 0 && slots[0] > 1 {
		up := slots[:0]
		for _, j := range slots {
			j >>= 1
			if len(up) > 0 && up[len(up)-1] == j {
				continue
			}
			tt[j] = x.better(tt[2*j], tt[2*j+1])
			up = append(up, j)
		}
		slots = up
	}
	x.slots = slots
}

// better returns the better of two sibling switches a and b (-1: none)
// for the largest path: cmpPath.
func (x *treeIndex) better(a, b int32) int32 {
	if a < 0 {
		return b
	}
	if b < 0 {
		return a
	}
	if x.cmpPath(int(a), int(b)) <= 0 {
		return a
	}
	return b
}

// cmpPath compares the largest paths from switches a and b (free counts
// top first, larger first; then the shorter; then the lower leaf index):
// negative when a's is better. This is slurmKey's order on the sizes and
// the leaf.
func (x *treeIndex) cmpPath(a, b int) int {
	for {
		ca, cb := x.cnt(a), x.cnt(b)
		if ca != cb {
			if ca > cb {
				return -1
			}
			return 1
		}
		na, nb := x.bestChild(a), x.bestChild(b)
		switch {
		case na < 0 && nb < 0:
			return a - b
		case na < 0:
			return -1
		case nb < 0:
			return 1
		}
		a, b = na, nb
	}
}

// descend returns the leaf at the end of s's largest path.
func (x *treeIndex) descend(s int) int {
	for {
		c := x.bestChild(s)
		if c < 0 {
			return s
		}
		s = c
	}
}

// moved records that leaf's count changed by delta: it updates the count
// bitsets and marks the tournaments on the leaf's path for bestChild to
// bring up to date (the counts on the path are already the new ones).
func (x *treeIndex) moved(leaf, delta int) {
	for s := leaf; s >= 0; s = x.up[s] {
		x.move(s, delta)
	}
}

// movedBatch records that the leaves of ds changed by their k each, as
// moved of each in turn would (the same bitsets and marked tournaments
// in the end), and adds them to the tree's counts: each switch above
// them is moved once, by the sum of its leaves' changes, where moved
// moves it once per leaf.
func (x *treeIndex) movedBatch(ds []leafTake) {
	tr := x.tr
	if len(x.acc) == 0 {
		x.acc = make([]int, len(x.up))
		x.seen = make([]bool, len(x.up))
	}
	touched := x.touched[:0]
	sum := 0
	// Each leaf's change goes to its parent's sum; then each switch
	// touched passes its sum on to its parent, level by level upwards
	// (a parent's level is above its children's), so that a switch is
	// visited once whatever the number of leaves below it.
	for _, d := range ds {
		tr.cnt[d.leaf] += d.k
		sum += d.k
		x.move(d.leaf, d.k)
		if p := x.up[d.leaf]; p >= 0 {
			if !x.seen[p] {
				x.seen[p] = true
				touched = append(touched, p)
			}
			x.acc[p] += d.k
		}
	}
	for L := 2; L < tr.top; L++ {
		for i := 0; i < len(touched); i++ {
			s := touched[i]
			if x.levelOf(s) != L {
				continue
			}
			if p := x.up[s]; p >= 0 {
				if !x.seen[p] {
					x.seen[p] = true
					touched = append(touched, p)
				}
				x.acc[p] += x.acc[s]
			}
		}
	}
	tr.total += sum
	for _, s := range touched {
		if s != x.v {
			tr.cnt[s] += x.acc[s]
		}
		x.move(s, x.acc[s])
		x.acc[s], x.seen[s] = 0, false
	}
	x.touched = touched
}

// move is moved's step for switch s, whose count (already the new one)
// changed by delta.
func (x *treeIndex) move(s, delta int) {
	if bc := x.byCnt[x.levelOf(s)]; bc != nil {
		c, i := x.cnt(s), x.pos[s]
		bc[c-delta][i/64] &^= 1 << (i % 64)
		bc[c][i/64] |= 1 << (i % 64)
	}
	if p := x.up[s]; p >= 0 && !x.noPaths && !x.marked[s] {
		x.marked[s] = true
		x.dirty[p] = append(x.dirty[p], int32(s))
	}
}

// anyIn returns the first set position of bs in [lo, hi), or -1.
func anyIn(bs []uint64, lo, hi int) int {
	for i := lo; i < hi; {
		w := bs[i/64] >> (i % 64)
		if w != 0 {
			if p := i + bits.TrailingZeros64(w); p < hi {
				return p
			}
			return -1
		}
		i = (i/64 + 1) * 64
	}
	return -1
}

// fewestAtLeast returns, among the level-L switches at positions [lo, hi),
// the one with the fewest free nodes at least n, the first by position
// among equals; -1 if none holds n. It scans counts or switches,
// whichever is shorter.
func (x *treeIndex) fewestAtLeast(L, lo, hi, n int) (int, int) {
	if n > x.maxc[L] || lo >= hi {
		return -1, 0
	}
	n = max(n, 1)
	if x.byCnt[L] != nil && (x.maxc[L]-n+1)*((hi-lo)/64+2) < hi-lo {
		for c := n; c <= x.maxc[L]; c++ {
			if p := anyIn(x.byCnt[L][c], lo, hi); p >= 0 {
				return x.lvl[L][p], c
			}
		}
		return -1, 0
	}
	best, bc := -1, 0
	for _, s := range x.lvl[L][lo:hi] {
		if c := x.cnt(s); c >= n && (best < 0 || c < bc) {
			best, bc = s, c
		}
	}
	return best, bc
}

// topSwitch is tree.topSwitch: the lowest level holding n, the fewest
// free nodes, the lowest index; -1 for the virtual switch.
func (x *treeIndex) topSwitch(n int) int {
	for L := 1; L < x.tr.top; L++ {
		if s, _ := x.fewestAtLeast(L, 0, len(x.lvl[L]), n); s >= 0 {
			return s
		}
	}
	return -1
}

// slurmPick returns Slurm's next leaf among the leaves below region (the
// lowest switch, near the job's leaves, with free nodes: every leaf below
// it is equally close and closer than any other) for a job that still
// needs rem nodes.
func (x *treeIndex) slurmPick(region, rem int) int {
	if x.cnt(region) < rem {
		// Every leaf fits at the same switch above: the sizes decide.
		return x.descend(region)
	}
	for L := 1; L < x.levelOf(region); L++ {
		r := x.rng[region][L]
		if r[0] < 0 {
			continue
		}
		s, c := x.fewestAtLeast(L, r[0], r[1], rem)
		if s < 0 {
			continue
		}
		if L == 1 {
			return s
		}
		// Several switches of this level may have c free nodes: their
		// largest paths, then their leaves, decide.
		for p := x.pos[s] + 1; p < r[1]; p++ {
			if bs := x.byCnt[L]; bs != nil {
				if p = anyIn(bs[c], p, r[1]); p < 0 {
					break
				}
			}
			if o := x.lvl[L][p]; x.cnt(o) == c && x.cmpPath(o, s) < 0 {
				s = o
			}
		}
		return x.descend(s)
	}
	return x.descend(region)
}
