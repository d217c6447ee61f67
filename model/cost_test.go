package model

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func paperTopology(t testing.TB) *Topology {
	t.Helper()
	topo, err := NewLayout(25, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func span(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestCostGolden pins the lan-code values of the published code of [Lan23]
// on the 25×4×10 layout (values given in the foundation issue).
func TestCostGolden(t *testing.T) {
	topo := paperTopology(t)
	cases := []struct {
		nodes []int
		want  int64
	}{
		{[]int{0, 1}, 500},
		{[]int{0, 10}, 1500},
		{[]int{0, 40}, 2500},
		{span(0, 9), 4500},
		{[]int{8, 9, 10}, 2333},
		{span(0, 19), 19500},
		{span(30, 49), 29500},
		{span(0, 39), 49500},
		{span(38, 42), 6800},
		{[]int{7}, 1},
	}
	for _, c := range cases {
		if got := DefaultCostModel.Cost(topo, c.nodes); got != c.want {
			t.Errorf("lan-code cost of %v = %d, want %d", c.nodes, got, c.want)
		}
	}
}

// TestCostPaperVariant checks lan-paper on hand-computed values: 2/4/6 hops
// per ordered pair times c, divided by n.
func TestCostPaperVariant(t *testing.T) {
	topo := paperTopology(t)
	m := CostModel{Kind: CostLanPaper, HopCost: 1000}
	cases := []struct {
		nodes []int
		want  int64
	}{
		{[]int{0, 1}, 2 * 2 * 1000 / 2},               // one pair, 2 hops, both orders
		{[]int{0, 10}, 2 * 4 * 1000 / 2},              // same pod
		{[]int{0, 40}, 2 * 6 * 1000 / 2},              // across pods
		{[]int{8, 9, 10}, 2 * (2 + 4 + 4) * 1000 / 3}, // 6666
		{[]int{5}, 1},
	}
	for _, c := range cases {
		if got := m.Cost(topo, c.nodes); got != c.want {
			t.Errorf("lan-paper cost of %v = %d, want %d", c.nodes, got, c.want)
		}
	}
}

// TestCostMatchesPairwise compares the O(n·height) counting with the
// all-pairs definition on random node sets of several topologies, including
// an unbalanced forest where trees meet only at the virtual top.
func TestCostMatchesPairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ft, err := NewFatTree(8, 0)
	if err != nil {
		t.Fatal(err)
	}
	forest, err := BuildTopology([]SwitchSpec{
		{Name: "a", Nodes: []string{"a0", "a1", "a2"}},
		{Name: "b", Nodes: []string{"b0", "b1"}},
		{Name: "c", Nodes: []string{"c0", "c1", "c2", "c3"}},
		{Name: "top1", Switches: []string{"a"}},
		{Name: "top2", Switches: []string{"top1", "b"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, topo := range []*Topology{paperTopology(t), ft, forest} {
		for _, m := range []CostModel{DefaultCostModel, {Kind: CostLanPaper, HopCost: 7}} {
			for range 300 {
				n := 1 + rng.IntN(min(topo.NumNodes(), 45))
				nodes := rng.Perm(topo.NumNodes())[:n]
				if got, want := m.Cost(topo, nodes), m.PairwiseCost(topo, nodes); got != want {
					t.Fatalf("%v cost of %v = %d, pairwise %d", m.Kind, nodes, got, want)
				}
			}
		}
	}
}

// TestCostRunsAsPairwise: Cost counts the nodes of each run on one leaf
// switch at once; on node sets made of such runs (sorted subsets, whole
// and partial leaves, in leaf order and shuffled by run), of every size
// up to the whole cluster, it answers the all-pairs definition, call after
// call on the topology's shared counter (both of its ways back to empty).
func TestCostRunsAsPairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	layout, err := NewLayout(6, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := NewFatTree(8, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, topo := range []*Topology{paperTopology(t), layout, ft} {
		for _, m := range []CostModel{DefaultCostModel, {Kind: CostLanPaper, HopCost: 7}} {
			for i := range 400 {
				n := topo.NumNodes()
				var nodes []int
				switch i % 3 {
				case 0: // a sorted random subset
					for id := range n {
						if rng.IntN(4) > 0 && len(nodes) < 60+rng.IntN(n) {
							nodes = append(nodes, id)
						}
					}
				case 1: // runs of consecutive ids, in random order
					for id := 0; id < n; {
						r := 1 + rng.IntN(12)
						if rng.IntN(2) == 0 {
							for k := id; k < min(n, id+r); k++ {
								nodes = append(nodes, k)
							}
						}
						id += r
					}
					runs := [][]int{}
					for len(nodes) > 0 {
						r := min(len(nodes), 1+rng.IntN(7))
						runs = append(runs, nodes[:r])
						nodes = nodes[r:]
					}
					rng.Shuffle(len(runs), func(a, b int) { runs[a], runs[b] = runs[b], runs[a] })
					for _, r := range runs {
						nodes = append(nodes, r...)
					}
				default: // a small sorted subset (removed node by node)
					nodes = rng.Perm(n)[:1+rng.IntN(min(n, 30))]
					slices.Sort(nodes)
				}
				if got, want := m.Cost(topo, nodes), m.PairwiseCost(topo, nodes); got != want {
					t.Fatalf("%v cost of %d nodes %v = %d, pairwise %d", m.Kind, len(nodes), nodes, got, want)
				}
			}
		}
	}
}

// TestHopCounterRemove checks that removing nodes undoes adding them, the
// property sliding-window pricing relies on.
func TestHopCounterRemove(t *testing.T) {
	topo := paperTopology(t)
	rng := rand.New(rand.NewPCG(3, 4))
	h := NewHopCounter(topo)
	in := map[int]bool{}
	for range 2000 {
		id := rng.IntN(topo.NumNodes())
		if in[id] {
			h.Remove(id)
			delete(in, id)
		} else {
			h.Add(id)
			in[id] = true
		}
		var set []int
		for k := range in {
			set = append(set, k)
		}
		ref := NewHopCounter(topo)
		for _, k := range set {
			ref.Add(k)
		}
		if h.Hops() != ref.Hops() || h.Len() != ref.Len() {
			t.Fatalf("after updates: hops %d len %d, fresh %d %d", h.Hops(), h.Len(), ref.Hops(), ref.Len())
		}
	}
}

func BenchmarkCost(b *testing.B) {
	topo := paperTopology(b)
	nodes := span(100, 139)
	b.Run("counting", func(b *testing.B) {
		for b.Loop() {
			DefaultCostModel.Cost(topo, nodes)
		}
	})
	b.Run("pairwise", func(b *testing.B) {
		for b.Loop() {
			DefaultCostModel.PairwiseCost(topo, nodes)
		}
	})
}

// TestHopCounterMove holds Move(out, in) to Remove(out) then Add(in), on
// every counter of the switches, on a tree of uneven depth (Slurm
// topology) and on a layout, moving to nodes of the same leaf, pod and
// elsewhere, and to the node moved out.
func TestHopCounterMove(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	uneven, err := BuildTopology([]SwitchSpec{
		{Name: "s0", Nodes: []string{"a0", "a1", "a2"}},
		{Name: "s1", Nodes: []string{"b0", "b1"}},
		{Name: "s2", Switches: []string{"s0", "s1"}},
		{Name: "s3", Nodes: []string{"c0", "c1", "c2", "c3"}},
		{Name: "top", Switches: []string{"s2", "s3"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, topo := range []*Topology{paperTopology(t), uneven} {
		n := topo.NumNodes()
		h, ref := NewHopCounter(topo), NewHopCounter(topo)
		in := rng.Perm(n)[:n/2]
		for _, k := range in {
			h.Add(k)
			ref.Add(k)
		}
		moves := 0
		for range 3000 {
			i := rng.IntN(len(in))
			out := in[i]
			next := out
			if rng.IntN(8) > 0 {
				next = rng.IntN(n)
				if slices.Contains(in, next) {
					continue
				}
			}
			h.Move(out, next)
			ref.Remove(out)
			ref.Add(next)
			in[i] = next
			moves++
			if h.Hops() != ref.Hops() || h.Len() != ref.Len() || h.sumDepth != ref.sumDepth || !slices.Equal(h.cnt, ref.cnt) {
				t.Fatalf("after %d moves: hops %d len %d, by Remove and Add %d %d", moves, h.Hops(), h.Len(), ref.Hops(), ref.Len())
			}
		}
		if moves < 1000 {
			t.Fatalf("%d moves", moves)
		}
	}
}

// TestSlideAsMove holds HopCounter.Slide to Move step by step: the hops of
// every block and the counter left at the end (every switch count), on
// 3,000 random sequences — sorted subsets of idle nodes and shuffled ones,
// sizes from 1 to all of q, slid in chunks from random starts — over the
// paper's layout, a tree of uneven depth, random layouts and a forest.
func TestSlideAsMove(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 4))
	topos := counterTopologies(t, rng)
	for c := range 3000 {
		topo := topos[c%len(topos)]
		n := topo.NumNodes()
		q, r, from, h, ref := slideCase(rng, topo, c%5 == 0)
		nq := len(q)
		out := make([]int64, nq)
		for from < nq {
			to := min(nq, from+1+rng.IntN(nq))
			h.Slide(q, r, from, to, out)
			for k := from; k < to; k++ {
				if out[k-from] != ref.Hops() {
					t.Fatalf("case %d (n=%d |q|=%d r=%d): block %d: slid hops %d, by Move %d", c, n, nq, r, k, out[k-from], ref.Hops())
				}
				ref.Move(q[k], q[(k+r)%nq])
			}
			if h.Hops() != ref.Hops() || h.Len() != ref.Len() || h.sumDepth != ref.sumDepth || h.pairs != ref.pairs || !slices.Equal(h.cnt, ref.cnt) {
				t.Fatalf("case %d (n=%d |q|=%d r=%d): counter after sliding to %d differs from Move's", c, n, nq, r, to)
			}
			from = to
		}
	}
}

// TestAddNodesAsAdd holds HopCounter.AddNodes to Add of each node, on every
// counter of the switches, starting from an empty counter or one holding
// other nodes: sorted subsets of the nodes (runs on one leaf), shuffled
// ones and single nodes, over the paper's layout, a tree of uneven depth
// and random layouts.
func TestAddNodesAsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 5))
	topos := counterTopologies(t, rng)
	for c := range 3000 {
		topo := topos[c%len(topos)]
		n := topo.NumNodes()
		perm := rng.Perm(n)
		k := rng.IntN(n + 1)
		before, nodes := perm[:rng.IntN(n-k+1)], perm[n-k:]
		nodes = slices.Clone(nodes)
		if c%3 > 0 {
			slices.Sort(nodes)
		}
		h, ref := NewHopCounter(topo), NewHopCounter(topo)
		for _, id := range before {
			h.Add(id)
			ref.Add(id)
		}
		h.AddNodes(nodes)
		for _, id := range nodes {
			ref.Add(id)
		}
		if h.Hops() != ref.Hops() || h.Len() != ref.Len() || h.sumDepth != ref.sumDepth || h.pairs != ref.pairs || !slices.Equal(h.cnt, ref.cnt) {
			t.Fatalf("case %d (%d nodes, %d before): AddNodes(%v) differs from Add of each", c, n, len(before), nodes)
		}
	}
}

// counterTopologies are the layouts the hop counter's tests run on: the
// paper's, a tree of uneven depth beside a lone leaf (a forest), and six
// random layouts drawn from rng.
func counterTopologies(t *testing.T, rng *rand.Rand) []*Topology {
	t.Helper()
	uneven, err := BuildTopology([]SwitchSpec{
		{Name: "s0", Nodes: []string{"a0", "a1", "a2"}},
		{Name: "s1", Nodes: []string{"b0", "b1"}},
		{Name: "s2", Switches: []string{"s0", "s1"}},
		{Name: "s3", Nodes: []string{"c0", "c1", "c2", "c3"}},
		{Name: "top", Switches: []string{"s2", "s3"}},
		{Name: "lone", Nodes: []string{"d0", "d1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	topos := []*Topology{paperTopology(t), uneven}
	for range 6 {
		l, err := NewLayout(1+rng.IntN(4), 1+rng.IntN(4), 1+rng.IntN(6))
		if err != nil {
			t.Fatal(err)
		}
		topos = append(topos, l)
	}
	return topos
}

// BenchmarkSlide slides blocks of a few sizes along an idle sequence of
// half the nodes of an archive-scale layout (819 pods of 4 leaves of 10
// nodes), busy in runs as jobs leave them, a slide of every position per
// operation.
func BenchmarkSlide(b *testing.B) {
	topo, err := NewLayout(819, 4, 10)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var q []int
	for id := 0; id < topo.NumNodes(); {
		run := 1 + rng.IntN(64)
		if rng.IntN(2) == 0 {
			for k := id; k < min(id+run, topo.NumNodes()); k++ {
				q = append(q, k)
			}
		}
		id += run
	}
	out := make([]int64, len(q))
	h := NewHopCounter(topo)
	for _, r := range []int{1, 8, 100, 2000} {
		b.Run(strconv.Itoa(r), func(b *testing.B) {
			for b.Loop() {
				h.Reset()
				h.AddNodes(q[:r])
				h.Slide(q, r, 0, len(q), out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(q)), "ns/pos")
		})
	}
}

// TestStretchesAsSlide holds HopCounter.Stretches to Slide on the cases of
// TestSlideAsMove's kind: the stretches cover the positions in order, each
// of at least one position; every block's hops by the stretch's formula
// are Slide's; bend is never positive; and the counter is left as Slide
// leaves it.
func TestStretchesAsSlide(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 6))
	topos := counterTopologies(t, rng)
	long := 0
	for c := range 3000 {
		q, r, from, h, ref := slideCase(rng, topos[c%len(topos)], c%5 == 0)
		nq := len(q)
		want := make([]int64, nq)
		for from < nq {
			to := min(nq, from+1+rng.IntN(nq))
			ref.Slide(q, r, from, to, want)
			next := from
			h.Stretches(q, r, from, to, func(k, l int, hops, step, bend int64) {
				if k != next || l < 1 || k+l > to {
					t.Fatalf("case %d: stretch [%d, %d) after %d, slide [%d, %d)", c, k, k+l, next, from, to)
				}
				if bend > 0 {
					t.Fatalf("case %d: stretch at %d bends up by %d", c, k, bend)
				}
				if l > 2 {
					long++
				}
				for j := range int64(l) {
					if got := hops + j*step + j*(j-1)/2*bend; got != want[k-from+int(j)] {
						t.Fatalf("case %d (|q|=%d r=%d): block %d: %d hops by the stretch, %d slid", c, nq, r, k+int(j), got, want[k-from+int(j)])
					}
				}
				next = k + l
			})
			if next != to {
				t.Fatalf("case %d: stretches end at %d, slide at %d", c, next, to)
			}
			if h.Hops() != ref.Hops() || h.Len() != ref.Len() || h.sumDepth != ref.sumDepth || h.pairs != ref.pairs || !slices.Equal(h.cnt, ref.cnt) {
				t.Fatalf("case %d: counter after the stretches to %d differs from Slide's", c, to)
			}
			from = to
		}
	}
	if long < 1000 {
		t.Errorf("only %d stretches of more than 2 positions", long)
	}
}

// TestFromHopsAll holds FromHopsAll to FromHops on seeded random hop
// counts of both kinds and many hop costs and sizes, near and far from
// multiples of n, and at the edges: 0, below the pairs, around 2⁵², the
// largest values that do not overflow, and one-node jobs.
func TestFromHopsAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 8))
	for c := range 20000 {
		m := CostModel{Kind: CostLanCode, HopCost: 1 + rng.Int64N(2000)}
		if c%2 == 0 {
			m.Kind = CostLanPaper
		}
		n := 1 + rng.IntN(40000)
		if c%3 == 0 {
			n = 1 + rng.IntN(12)
		}
		pairs := int64(n) * int64(n-1) / 2
		var hops []int64
		for range 64 {
			var h int64
			switch rng.IntN(5) {
			case 0:
				h = rng.Int64N(4*pairs + 10)
			case 1: // the dividend (hop cost 1, lan-code) next to a multiple of n
				m = CostModel{Kind: CostLanCode, HopCost: 1}
				q := (1<<52)/int64(n) - 1 - rng.Int64N(min(64, (1<<52)/int64(n)))
				if rng.IntN(2) == 0 {
					q = rng.Int64N((1 << 52) / int64(n))
				}
				h = pairs + q*int64(n) + rng.Int64N(3) - 1
			case 2: // near 2⁵²
				h = pairs + (1<<52)/m.HopCost + rng.Int64N(5) - 2
			case 3: // as large as does not overflow
				h = (1<<62)/(2*m.HopCost) - rng.Int64N(1000)
			default:
				h = rng.Int64N(1 << 50)
			}
			hops = append(hops, max(h, 0))
		}
		got := slices.Clone(hops)
		m.FromHopsAll(n, got)
		for k, h := range hops {
			if want := m.FromHops(n, h); got[k] != want {
				t.Fatalf("case %d (%v c=%d n=%d): hops %d: %d, FromHops %d", c, m.Kind, m.HopCost, n, h, got[k], want)
			}
		}
	}
}

// TestHopCounterRelease holds the counters GetHopCounter hands out to
// empty ones, after Release of counters holding random nodes, and Cost
// (which shares the pool) to PairwiseCost meanwhile.
func TestHopCounterRelease(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 9))
	topo := paperTopology(t)
	n := topo.NumNodes()
	for c := range 200 {
		h := GetHopCounter(topo)
		if h.Len() != 0 || h.Hops() != 0 || h.sumDepth != 0 || h.pairs != 0 || slices.ContainsFunc(h.cnt, func(x int32) bool { return x != 0 }) {
			t.Fatalf("case %d: GetHopCounter gave a counter holding %d nodes", c, h.Len())
		}
		h.AddNodes(rng.Perm(n)[:1+rng.IntN(n)])
		h.Release()
		nodes := rng.Perm(n)[:2+rng.IntN(30)]
		if got, want := DefaultCostModel.Cost(topo, nodes), DefaultCostModel.PairwiseCost(topo, nodes); got != want {
			t.Fatalf("case %d: Cost %d after a Release, pairwise %d", c, got, want)
		}
	}
}

// slideCase draws a case of TestSlideAsMove and TestStretchesAsSlide on
// topo: a queue of about three quarters of its nodes (shuffled when
// shuffle is set), a window of r, a start, and two counters holding the
// window from that start (h to test, ref to hold it to).
func slideCase(rng *rand.Rand, topo *Topology, shuffle bool) (q []int, r, from int, h, ref *HopCounter) {
	n := topo.NumNodes()
	for id := range n {
		if rng.IntN(4) > 0 {
			q = append(q, id)
		}
	}
	if len(q) == 0 {
		q = []int{rng.IntN(n)}
	}
	if shuffle {
		rng.Shuffle(len(q), func(i, j int) { q[i], q[j] = q[j], q[i] })
	}
	nq := len(q)
	r = 1 + rng.IntN(nq)
	h, ref = NewHopCounter(topo), NewHopCounter(topo)
	from = rng.IntN(nq + 1)
	for k := range r {
		h.Add(q[(from+k)%nq])
		ref.Add(q[(from+k)%nq])
	}
	return q, r, from, h, ref
}

// TestMinHops holds MinHops to the least hops of every node set, by brute
// force over the subsets of small topologies: never above it, equal to it
// on layouts (whose nodes 0…n−1 have exactly the bound), and no bound when
// the nodes' depths differ. MinCost is FromHops of the bound.
func TestMinHops(t *testing.T) {
	layout := func(p, l, n int) *Topology {
		topo, err := NewLayout(p, l, n)
		if err != nil {
			t.Fatal(err)
		}
		return topo
	}
	irregular, err := BuildTopology([]SwitchSpec{ // equal depths, unequal switches
		{Name: "a", Nodes: []string{"a0", "a1", "a2"}},
		{Name: "b", Nodes: []string{"b0", "b1"}},
		{Name: "c", Nodes: []string{"c0", "c1", "c2", "c3", "c4"}},
		{Name: "d", Nodes: []string{"d0"}},
		{Name: "p", Switches: []string{"a", "b", "c"}},
		{Name: "q", Switches: []string{"d"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	uneven, err := BuildTopology([]SwitchSpec{
		{Name: "s0", Nodes: []string{"a0", "a1", "a2"}},
		{Name: "s1", Nodes: []string{"b0", "b1"}},
		{Name: "s2", Switches: []string{"s0"}},
		{Name: "top", Switches: []string{"s2", "s1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := uneven.MinHops(2); ok {
		t.Errorf("a bound on a topology of uneven depths")
	}
	cases := []struct {
		topo   *Topology
		layout bool
	}{{layout(3, 2, 2), true}, {layout(2, 2, 3), true}, {layout(1, 3, 4), true}, {layout(4, 1, 3), true}, {layout(2, 4, 2), true}, {irregular, false}}
	hit := 0
	for _, c := range cases {
		topo := c.topo
		nn := topo.NumNodes()
		least := make([]int64, nn+1)
		for i := range least {
			least[i] = -1
		}
		for mask := 1; mask < 1<<nn; mask++ {
			var nodes []int
			for k := range nn {
				if mask&(1<<k) != 0 {
					nodes = append(nodes, k)
				}
			}
			var hops int64
			for i, a := range nodes {
				for _, b := range nodes[i+1:] {
					hops += int64(topo.Hops(a, b))
				}
			}
			if n := len(nodes); least[n] < 0 || hops < least[n] {
				least[n] = hops
			}
		}
		for n := 1; n <= nn; n++ {
			got, ok := topo.MinHops(n)
			if !ok {
				t.Fatalf("%d nodes of %d: no bound", n, nn)
			}
			if got > least[n] {
				t.Fatalf("%d nodes of %d: bound %d above the least hops %d", n, nn, got, least[n])
			}
			if c.layout {
				h := NewHopCounter(topo)
				h.AddNodes(span(0, n-1))
				if got != least[n] || h.Hops() != got {
					t.Fatalf("layout, %d nodes of %d: bound %d, least %d, packed %d", n, nn, got, least[n], h.Hops())
				}
			}
			if got == least[n] {
				hit++
			}
			for _, m := range []CostModel{DefaultCostModel, {Kind: CostLanPaper, HopCost: 7}} {
				if c, ok := m.MinCost(topo, n); !ok || c != m.FromHops(n, got) {
					t.Fatalf("MinCost(%d) = %d, %v", n, c, ok)
				}
			}
		}
		if _, ok := topo.MinHops(nn + 1); ok {
			t.Errorf("a bound for more nodes than there are")
		}
	}
	t.Logf("%d of the bounds equal the least hops", hit)
}
