package free

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/optsched/optsched/encode/dcas"
)

// inf marks an impossible count.
const inf = math.MaxInt64 / 4

// A shape is the state of the count tree under the current capacities:
// each vertex's canonical id (equal ids: isomorphic subtrees of idle
// capacity, so one job's best placement in them costs the same) and its
// children with idle capacity, sorted by capacity and id so that
// isomorphic siblings are adjacent.
type shape struct {
	t     *dcas.Tree
	canon []int32
	kids  [][]int
	// intern gives every distinct subtree structure its id; memo keeps
	// one job size's tables per id. Both are reset together when memo
	// hold more than maxMemoBytes.
	intern map[string]int32
	memo   map[memoKey]*tables
	key    []byte
	// gen counts the resets: ids of different generations differ.
	gen int
	// bytes estimates the memory memo and intern hold.
	bytes int
}

type memoKey struct {
	n  int32
	id int32
}

// maxMemoBytes bounds the memory of the memoised tables and the interned
// shapes: past it, update starts both afresh.
const maxMemoBytes = 256 << 20

// tables are one job size's best hop parts in one subtree structure:
// g[m] is the least H-part of m nodes of the job under the subtree's top
// vertex (its pairs' −2·C(X,2) terms below and at the vertex, and the
// (n−1)·d·X terms of its leaves), inf when m nodes do not fit; suf[i][m]
// is the least Σ g over the sorted children i, i+1, … holding m nodes.
type tables struct {
	g   []int64
	suf [][]int64
}

func newShape(t *dcas.Tree) *shape {
	nv := t.NumVertices()
	return &shape{t: t, canon: make([]int32, nv), kids: make([][]int, nv),
		intern: make(map[string]int32), memo: make(map[memoKey]*tables)}
}

// update recomputes the canonical ids and sorted children for the
// capacities cap.
func (s *shape) update(cap []int) {
	t := s.t
	if s.bytes > maxMemoBytes {
		clear(s.memo)
		clear(s.intern)
		s.gen++
		s.bytes = 0
	}
	for v := t.NumVertices() - 1; v >= 0; v-- {
		k := s.kids[v][:0]
		for _, c := range t.Children[v] {
			if cap[c] > 0 {
				k = append(k, c)
			}
		}
		// Smallest capacity first, so that ties go to the tightest fit
		// (trace and the enumeration fill the first children first);
		// isomorphic children, of equal capacity, stay adjacent.
		slices.SortFunc(k, func(a, b int) int {
			if c := cmp.Compare(cap[a], cap[b]); c != 0 {
				return c
			}
			return cmp.Compare(s.canon[a], s.canon[b])
		})
		s.kids[v] = k
		key := s.key[:0]
		if t.IsLeaf(v) {
			key = append(key, 'L')
			key = binary.AppendUvarint(key, uint64(t.Depth[v]))
		} else if t.Counted[v] {
			key = append(key, 'S')
		} else {
			key = append(key, 'T')
		}
		key = binary.AppendUvarint(key, uint64(cap[v]))
		for _, c := range k {
			key = binary.AppendUvarint(key, uint64(s.canon[c]))
		}
		s.key = key
		id, ok := s.intern[string(key)]
		if !ok {
			id = int32(len(s.intern))
			s.intern[string(key)] = id
			s.bytes += len(key) + 48
		}
		s.canon[v] = id
	}
}

// pairs is C(m, 2).
func pairs(m int) int64 { return int64(m) * int64(m-1) / 2 }

// get returns the tables of a job of n nodes at vertex v under the
// capacities of the last update.
func (s *shape) get(n int, v int, cap []int) *tables {
	key := memoKey{int32(n), s.canon[v]}
	if tb, ok := s.memo[key]; ok {
		return tb
	}
	t := s.t
	hi := min(n, cap[v])
	tb := &tables{g: make([]int64, hi+1)}
	if t.IsLeaf(v) {
		for m := 0; m <= hi; m++ {
			tb.g[m] = int64(n-1)*int64(t.Depth[v])*int64(m) - 2*pairs(m)
		}
		s.bytes += 8*(hi+1) + 64
		s.memo[key] = tb
		return tb
	}
	kids := s.kids[v]
	tb.suf = make([][]int64, len(kids)+1)
	last := make([]int64, hi+1)
	for m := 1; m <= hi; m++ {
		last[m] = inf
	}
	tb.suf[len(kids)] = last
	s.bytes += 8 * (hi + 1) * (len(kids) + 2)
	for i := len(kids) - 1; i >= 0; i-- {
		c := s.get(n, kids[i], cap)
		next := tb.suf[i+1]
		row := make([]int64, hi+1)
		for m := range row {
			best := int64(inf)
			for a := 0; a <= min(m, len(c.g)-1); a++ {
				if r := next[m-a]; r < inf && c.g[a]+r < best {
					best = c.g[a] + r
				}
			}
			row[m] = best
		}
		tb.suf[i] = row
	}
	for m := 0; m <= hi; m++ {
		tb.g[m] = tb.suf[0][m]
		if tb.g[m] < inf && t.Counted[v] {
			tb.g[m] -= 2 * pairs(m)
		}
	}
	s.memo[key] = tb
	return tb
}

// best returns the least H of a job of n nodes on the capacities of the
// last update, inf when it does not fit.
func (s *shape) best(n int, cap []int) int64 {
	if cap[0] < n {
		return inf
	}
	return s.get(n, 0, cap).g[n]
}

// trace appends to lc a placement of m nodes of a job of n under vertex v
// that attains tables g[m].
func (s *shape) trace(n, v, m int, cap []int, lc *dcas.LeafCounts) {
	if m == 0 {
		return
	}
	if s.t.IsLeaf(v) {
		lc.Add(v, m)
		return
	}
	tb := s.get(n, v, cap)
	rem := m
	for i, c := range s.kids[v] {
		cg := s.get(n, c, cap).g
		next := tb.suf[i+1]
		want := tb.suf[i][rem]
		for a := min(rem, len(cg)-1); a >= 0; a-- { // the most in the tightest child
			if r := next[rem-a]; r < inf && cg[a]+r == want {
				s.trace(n, c, a, cap, lc)
				rem -= a
				break
			}
		}
	}
}
