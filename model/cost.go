package model

import (
	"fmt"
	"strings"
)

// CostKind selects one of the documented variants of the communication-hop
// (CH) cost of [Lan23] Eq. (1).
type CostKind int

const (
	// CostLanCode is the cost as the published code of [Lan23] computes
	// it, which reproduces the paper's numbers: every unordered pair of the
	// job's nodes adds (hops − 1)·c, that is 1·c under one leaf switch, 3·c
	// under one pod and 5·c across pods; the sum is integer-divided by the
	// node count.
	CostLanCode CostKind = iota
	// CostLanPaper is the cost as the paper's text states Eq. (1): every
	// ordered pair adds hops·c (2, 4 or 6 hops); the sum is integer-divided
	// by the node count.
	CostLanPaper
)

// DefaultHopCost is c, the cost of one hop, in the published code of [Lan23].
const DefaultHopCost = 1000

// String returns the name used in window files and on the command line.
func (k CostKind) String() string {
	switch k {
	case CostLanCode:
		return "lan-code"
	case CostLanPaper:
		return "lan-paper"
	}
	return fmt.Sprintf("CostKind(%d)", int(k))
}

// ParseCostKind parses "lan-code" or "lan-paper".
func ParseCostKind(s string) (CostKind, error) {
	switch strings.TrimSpace(s) {
	case "lan-code":
		return CostLanCode, nil
	case "lan-paper":
		return CostLanPaper, nil
	}
	return 0, fmt.Errorf("unknown cost model %q (want lan-code or lan-paper)", s)
}

// A CostModel prices the node set of one job.
type CostModel struct {
	Kind CostKind
	// HopCost is c, the cost of one hop; DefaultHopCost in [Lan23].
	HopCost int64
}

// DefaultCostModel is lan-code with c = 1000.
var DefaultCostModel = CostModel{Kind: CostLanCode, HopCost: DefaultHopCost}

// FromHops returns the CH cost of a job of n nodes whose unordered node
// pairs are hops links apart in total. Every job costs at least 1, so a
// one-node job costs 1:
//
//	lan-code:  max(1, (hops − n(n−1)/2)·c / n)
//	lan-paper: max(1, 2·hops·c / n)
func (m CostModel) FromHops(n int, hops int64) int64 {
	if n <= 1 {
		return 1
	}
	var v int64
	switch m.Kind {
	case CostLanPaper:
		v = 2 * hops * m.HopCost / int64(n)
	default:
		pairs := int64(n) * int64(n-1) / 2
		v = (hops - pairs) * m.HopCost / int64(n)
	}
	return max(v, 1)
}

// FromHopsAll sets hops[k] to FromHops(n, hops[k]) for every k: the
// same prices, the division by n done (below 2⁵², where a float64 holds
// the dividend exactly) by a multiplication by 1/n and an exact integer
// correction, which is several times cheaper than an int64 division on a
// table of tens of thousands of blocks.
func (m CostModel) FromHopsAll(n int, hops []int64) {
	if n <= 1 {
		for k := range hops {
			hops[k] = 1
		}
		return
	}
	n64 := int64(n)
	inv := 1 / float64(n)
	// The dividend is h·mul + add, which is FromHops's to the bit (int64
	// arithmetic wraps alike both ways).
	mul, add := m.HopCost, -(n64*(n64-1)/2)*m.HopCost
	if m.Kind == CostLanPaper {
		mul, add = 2*m.HopCost, 0
	}
	for k, h := range hops {
		a := h*mul + add
		switch {
		case a < n64:
			hops[k] = 1 // a quotient of at most 0 (Go's division truncates), raised to 1
		case a < 1<<52:
			q := int64(float64(a) * inv)
			r := a - q*n64
			for r < 0 {
				q--
				r += n64
			}
			for r >= n64 {
				q++
				r -= n64
			}
			hops[k] = max(q, 1)
		default:
			hops[k] = max(a/n64, 1)
		}
	}
}

// Cost returns the CH cost of the node set nodes on t ([Lan23] Eq. 1). It
// counts nodes per switch instead of visiting all pairs: O(len(nodes) ×
// height), with a counter the topology keeps between calls (it is safe
// for concurrent use); consecutive nodes of nodes on one leaf switch are
// counted together, so sorted ids on a layout cost O(leaves × height).
// nodes must be distinct valid ids.
func (m CostModel) Cost(t *Topology, nodes []int) int64 {
	if len(nodes) <= 1 {
		return 1
	}
	h, _ := t.counters.Get().(*HopCounter)
	if h == nil {
		h = NewHopCounter(t)
	}
	eachRun(t, nodes, h.addRun)
	c := m.FromHops(h.Len(), h.Hops())
	if len(nodes) >= len(h.cnt)/4 {
		h.Reset() // back to empty, for the next call: cheaper than removing each node
	} else {
		eachRun(t, nodes, h.removeRun) // back to empty, for the next call
	}
	t.counters.Put(h)
	return c
}

// eachRun calls f(id, r) for runs of r consecutive nodes of nodes on one
// leaf switch, id the run's first node: a run goes on while the ids stay
// from id up to the end of the stretch of ids on id's leaf (t.runEnd).
func eachRun(t *Topology, nodes []int, f func(id, r int)) {
	for i := 0; i < len(nodes); {
		id := nodes[i]
		span := uint(t.runEnd[id]) - uint(id)
		j := i + 1
		for j < len(nodes) && uint(nodes[j])-uint(id) < span {
			j++
		}
		f(id, j-i)
		i = j
	}
}

// TotalCost returns the summed CH cost of allocs' node sets on t
// (Σ_j Eq. 1).
func (m CostModel) TotalCost(t *Topology, allocs []Allocation) int64 {
	var sum int64
	for _, a := range allocs {
		sum += m.Cost(t, a.Nodes)
	}
	return sum
}

// A HopCounter keeps the total hop distance over all unordered pairs of a
// changing set of nodes, updated in O(height) per added or removed node. It
// is the incremental pricing that sliding SCAS blocks and local search need.
//
// With d(a) the links from node a to the (virtual) top of the tree and
// cnt(s) the set's nodes below switch s,
//
//	Σ_{pairs a<b} hops(a,b) = (n−1)·Σ_a d(a) − 2·Σ_s cnt(s)(cnt(s)−1)/2
//
// because the path between a and b climbs to their lowest common switch and
// each common ancestor switch removes two links from d(a)+d(b).
type HopCounter struct {
	t        *Topology
	cnt      []int32
	n        int
	sumDepth int64
	pairs    int64 // Σ_s C(cnt(s), 2)
}

// NewHopCounter returns an empty counter over t.
func NewHopCounter(t *Topology) *HopCounter {
	return &HopCounter{t: t, cnt: make([]int32, len(t.switches))}
}

// GetHopCounter returns an empty counter over t, reused from those given
// back by Release when one is free (a counter over a large topology is a
// table of every switch, which a solver pricing every window would
// otherwise allocate each time).
func GetHopCounter(t *Topology) *HopCounter {
	if h, _ := t.counters.Get().(*HopCounter); h != nil {
		return h
	}
	return NewHopCounter(t)
}

// Release empties h and gives it back for reuse by GetHopCounter (and
// Cost); h must not be used afterwards.
func (h *HopCounter) Release() {
	h.Reset()
	h.t.counters.Put(h)
}

// Add adds node id to the set. Adding a node twice is a programmer error
// that the counter does not detect.
func (h *HopCounter) Add(id int) {
	anc := h.t.anc[id]
	for _, s := range anc {
		h.pairs += int64(h.cnt[s])
		h.cnt[s]++
	}
	h.sumDepth += int64(len(anc) + 1)
	h.n++
}

// AddNodes adds every node of nodes: Add of each, with the same counts,
// but consecutive nodes of nodes on one leaf switch are added together, so
// sorted ids on a layout cost O(leaves × height), not O(len(nodes) ×
// height). nodes must be distinct valid ids not in the set.
func (h *HopCounter) AddNodes(nodes []int) {
	eachRun(h.t, nodes, h.addRun)
}

// Remove removes node id, which must be in the set.
func (h *HopCounter) Remove(id int) {
	anc := h.t.anc[id]
	for _, s := range anc {
		h.cnt[s]--
		h.pairs -= int64(h.cnt[s])
	}
	h.sumDepth -= int64(len(anc) + 1)
	h.n--
}

// Move removes node out, which must be in the set, and adds node in, which
// must not be (or be out): Remove(out) then Add(in), without touching the
// switches above both, whose counts and pairs do not change. It is the
// step of a block sliding along a sequence of nodes.
func (h *HopCounter) Move(out, in int) {
	ao, ai := h.t.anc[out], h.t.anc[in]
	// The common switches are a common suffix of both lists (leaf first).
	no, ni := len(ao), len(ai)
	for no > 0 && ni > 0 && ao[no-1] == ai[ni-1] {
		no--
		ni--
	}
	for _, s := range ao[:no] {
		h.cnt[s]--
		h.pairs -= int64(h.cnt[s])
	}
	for _, s := range ai[:ni] {
		h.pairs += int64(h.cnt[s])
		h.cnt[s]++
	}
	h.sumDepth += int64(len(ai) - len(ao))
}

// Slide walks a block of r positions along the sequence q (circularly:
// position k's block is q[k], …, q[(k+r−1) mod len(q)]) from start from to
// start to: h must hold exactly the block at from, it sets out[k−from] to
// the hops of the block at k for every k in [from, to), and it leaves h
// holding the block at to. It is Move(q[k], q[(k+r) mod len(q)]) for each
// k, and gives the same hops, in O(1) a step plus O(height) a stretch:
// while the nodes moved out stay in the ids of one leaf switch from the
// first of them on (Topology.runEnd) and the nodes moved in likewise, the
// switches above the one only lose a node a step and those above the
// other only gain one, so the pairs change by an amount that grows by the
// number of those switches each step, and the switch counts are updated
// once at the end of the stretch. A stretch's length is found by scanning
// the ids at both ends against their leaf's id range, and its hops are
// then written by that recurrence alone. On a layout of leaves of l nodes
// the stretches are about 2|q|/l. q must hold distinct valid ids,
// 1 ≤ r ≤ len(q), 0 ≤ from ≤ to ≤ len(q), len(out) ≥ to−from.
func (h *HopCounter) Slide(q []int, r, from, to int, out []int64) {
	h.walk(q, r, from, to, func(k, l int, hops, step, bend int64) {
		o := out[k-from : k-from+l]
		for j := range o {
			o[j] = hops
			hops += step
			step += bend
		}
	})
}

// Stretches is Slide without a table: it walks the block from from to to
// as Slide does (h must hold the block at from and is left holding the
// block at to) and calls f once a stretch, in order, with the stretch's
// first position k, its length l ≥ 1 and the hops of its blocks: the block
// at k+j (0 ≤ j < l) has hops + j·step + j(j−1)/2·bend hops, the
// stretches cover [from, to) and each hop count is the one Slide writes.
// bend is never positive, so the hops along a stretch are concave and
// the fewest are at one of its ends: a search for the cheapest block
// need look at 2 positions a stretch, not l.
func (h *HopCounter) Stretches(q []int, r, from, to int, f func(k, l int, hops, step, bend int64)) {
	h.walk(q, r, from, to, f)
}

// walk is Slide and Stretches: it finds each stretch and its hops, calls
// f, and updates the counts at the stretch's end.
func (h *HopCounter) walk(q []int, r, from, to int, f func(k, l int, hops, step, bend int64)) {
	nq := len(q)
	t := h.t
	pairs, sumDepth, n1 := h.pairs, h.sumDepth, int64(h.n-1)
	in := from + r
	if in >= nq {
		in -= nq
	}
	for k := from; k < to; {
		x, y := q[k], q[in]
		// The stretch: positions k.. while the node out stays in x's
		// leaf range, and in.. (not past the end of q) while the node
		// in stays in y's.
		n := to - k
		spanX := uint(t.runEnd[x]) - uint(x)
		l := 1
		for l < n && uint(q[k+l])-uint(x) < spanX {
			l++
		}
		n = min(l, nq-in)
		spanY := uint(t.runEnd[y]) - uint(y)
		l = 1
		for l < n && uint(q[in+l])-uint(y) < spanY {
			l++
		}
		// The switches above x only (ao) and above y only (ai): the
		// common ones are a common suffix of both lists.
		ao, ai := t.leafAnc[t.leaf[x]], t.leafAnc[t.leaf[y]]
		depth := int64(len(ai) - len(ao))
		no, ni := len(ao), len(ai)
		for no > 0 && ni > 0 && ao[no-1] == ai[ni-1] {
			no--
			ni--
		}
		ao, ai = ao[:no], ai[:ni]
		// A step changes the pairs by delta, which grows by grow a
		// step, and sumDepth by depth.
		var delta int64
		for _, s := range ai {
			delta += int64(h.cnt[s])
		}
		for _, s := range ao {
			delta -= int64(h.cnt[s]) - 1
		}
		grow := int64(no + ni)
		f(k, l, n1*sumDepth-2*pairs, n1*depth-2*delta, -2*grow)
		l64 := int64(l)
		pairs += l64*delta + grow*l64*(l64-1)/2
		sumDepth += l64 * depth
		h.shift(ao, ai, l64)
		k += l
		if in += l; in == nq {
			in = 0
		}
	}
	h.pairs, h.sumDepth = pairs, sumDepth
}

// shift moves steps nodes from below the switches ao to below the
// switches ai in the counts (not the pairs): the end of a stretch of
// Slide.
func (h *HopCounter) shift(ao, ai []int32, steps int64) {
	if steps == 0 {
		return
	}
	for _, s := range ao {
		h.cnt[s] -= int32(steps)
	}
	for _, s := range ai {
		h.cnt[s] += int32(steps)
	}
}

// addRun adds r nodes that share node id's leaf switch (id among them):
// Add of each, at once.
func (h *HopCounter) addRun(id, r int) {
	anc := h.t.anc[id]
	r64 := int64(r)
	for _, s := range anc {
		h.pairs += r64*int64(h.cnt[s]) + r64*(r64-1)/2
		h.cnt[s] += int32(r)
	}
	h.sumDepth += r64 * int64(len(anc)+1)
	h.n += r
}

// removeRun undoes addRun(id, r).
func (h *HopCounter) removeRun(id, r int) {
	anc := h.t.anc[id]
	r64 := int64(r)
	for _, s := range anc {
		h.cnt[s] -= int32(r)
		h.pairs -= r64*int64(h.cnt[s]) + r64*(r64-1)/2
	}
	h.sumDepth -= r64 * int64(len(anc)+1)
	h.n -= r
}

// Reset empties the set.
func (h *HopCounter) Reset() {
	clear(h.cnt)
	h.n, h.sumDepth, h.pairs = 0, 0, 0
}

// Len returns the number of nodes in the set.
func (h *HopCounter) Len() int { return h.n }

// Hops returns the total hop distance over all unordered pairs of the set.
func (h *HopCounter) Hops() int64 {
	return int64(h.n-1)*h.sumDepth - 2*h.pairs
}

// MinHops returns a lower bound on the hops (HopCounter.Hops) of any n
// distinct nodes of t, and false when it has none to give (the nodes do
// not all sit at the same depth, or n is out of [1, NumNodes]). With every
// node d links below the top, the hops are (n−1)·n·d − 2·Σ_s C(cnt(s), 2)
// (HopCounter). The switches k levels above the leaves split the n nodes
// (each node has one such ancestor), at most cap_k each, the most under
// any of them; C(x, 2) is convex, so Σ_s C(cnt(s), 2) over them is at most
// that of ⌊n/cap_k⌋ full switches and one with the rest. On a layout
// (NewLayout) that is a packed block: nodes 0…n−1 have exactly these
// hops, so the bound is the least hops of any n nodes.
func (t *Topology) MinHops(n int) (int64, bool) {
	t.packOnce.Do(t.computePackCaps)
	if t.packCaps == nil || n < 1 || n > len(t.nodes) {
		return 0, false
	}
	n64 := int64(n)
	d := int64(len(t.anc[0]) + 1)
	pairs := int64(0)
	for _, c := range t.packCaps {
		full, rest := n64/c, n64%c
		pairs += full*c*(c-1)/2 + rest*(rest-1)/2
	}
	return (n64-1)*n64*d - 2*pairs, true
}

// computePackCaps sets t.packCaps (MinHops).
func (t *Topology) computePackCaps() {
	if len(t.nodes) == 0 {
		return
	}
	h := len(t.anc[0])
	below := make([]int64, len(t.switches))
	for i := range t.nodes {
		if len(t.anc[i]) != h {
			return
		}
		for _, s := range t.anc[i] {
			below[s]++
		}
	}
	caps := make([]int64, h)
	for i := range t.nodes {
		for k, s := range t.anc[i] {
			caps[k] = max(caps[k], below[s])
		}
	}
	t.packCaps = caps
}

// MinCost returns a lower bound on the CH cost of any n distinct nodes of
// t (FromHops of t.MinHops: the price does not fall as the hops grow), and
// false when t has none (MinHops) or the hop cost is negative.
func (m CostModel) MinCost(t *Topology, n int) (int64, bool) {
	hops, ok := t.MinHops(n)
	if !ok || m.HopCost < 0 {
		return 0, false
	}
	return m.FromHops(n, hops), true
}

// PairwiseCost returns the CH cost of nodes by visiting every pair with
// Topology.Hops: the definition of [Lan23] Eq. (1) itself, in O(n² ×
// height). It is the reference that Cost and every incremental pricing are
// tested against; solvers should use Cost or a HopCounter.
func (m CostModel) PairwiseCost(t *Topology, nodes []int) int64 {
	if len(nodes) <= 1 {
		return 1
	}
	var sum int64
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			h := int64(t.Hops(nodes[i], nodes[j]))
			if m.Kind == CostLanPaper {
				sum += 2 * h * m.HopCost
			} else {
				sum += (h - 1) * m.HopCost
			}
		}
	}
	return max(sum/int64(len(nodes)), 1)
}
