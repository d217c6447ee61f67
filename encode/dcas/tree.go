package dcas

import (
	"context"
	"fmt"

	"github.com/optsched/optsched/model"
)

// A Tree is a window's switch tree cut down to the switches with idle
// nodes under them: the vertices of the count program. Vertex 0 is the
// root; every vertex comes after its parent (pre-order), so a loop from the
// last vertex to the first visits children before parents.
type Tree struct {
	// Parent is each vertex's parent, −1 for the root.
	Parent []int
	// Children lists each vertex's children, in the topology's order.
	Children [][]int
	// Cap is the number of idle nodes under each vertex.
	Cap []int
	// Counted reports whether the vertex is a real switch, whose pairs
	// earn the −2·C(X, 2) of the hop count; false only for the virtual top
	// above several roots.
	Counted []bool
	// Depth is, for a leaf switch, d(a) of its nodes: the links from one of
	// them to the (virtual) top of the tree, len(Topology.Ancestors) + 1.
	// It is 0 for the other vertices.
	Depth []int
	// Idle lists the idle node ids under each leaf switch, increasing; nil
	// for the other vertices.
	Idle [][]int
	// Switch is the topology's switch index of each vertex, −1 for the
	// virtual top.
	Switch []int
	// Time is the window time, at which Decode's allocations start.
	Time int64
	// vertexOf maps a topology switch index to its vertex, −1 for the
	// switches without idle nodes.
	vertexOf []int
}

// NumVertices returns the number of vertices.
func (t *Tree) NumVertices() int { return len(t.Parent) }

// IsLeaf reports whether v is a leaf switch (one that owns nodes).
func (t *Tree) IsLeaf(v int) bool { return t.Idle[v] != nil }

// ctxEvery is how many vertices NewTree builds between looks at ctx.
const ctxEvery = 4096

// NewTree builds the count tree of w's idle nodes. It stops with ctx's
// error when ctx ends first.
func NewTree(ctx context.Context, w *model.Window) (*Tree, error) {
	top := w.Topology
	if top == nil {
		return nil, fmt.Errorf("dcas: window has no topology")
	}
	ns := top.NumSwitches()
	idleUnder := make([]int, ns)
	leafIdle := make(map[int][]int)
	for i, id := range w.Idle {
		if i%ctxEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if id < 0 || id >= top.NumNodes() {
			return nil, fmt.Errorf("dcas: idle node %d is not a node of the topology", id)
		}
		leaf := top.Node(id).Leaf
		leafIdle[leaf] = append(leafIdle[leaf], id)
		for _, s := range top.Ancestors(id) {
			idleUnder[s]++
		}
	}
	var roots []int
	for s := 0; s < ns; s++ {
		if idleUnder[s] > 0 && top.Switch(s).Parent < 0 {
			roots = append(roots, s)
		}
	}
	t := &Tree{Time: w.Time, vertexOf: make([]int, ns)}
	for s := range t.vertexOf {
		t.vertexOf[s] = -1
	}
	add := func(parent, sw, cap int, counted bool) int {
		v := len(t.Parent)
		if sw >= 0 {
			t.vertexOf[sw] = v
		}
		t.Parent = append(t.Parent, parent)
		t.Children = append(t.Children, nil)
		t.Cap = append(t.Cap, cap)
		t.Counted = append(t.Counted, counted)
		t.Depth = append(t.Depth, 0)
		t.Idle = append(t.Idle, nil)
		t.Switch = append(t.Switch, sw)
		if parent >= 0 {
			t.Children[parent] = append(t.Children[parent], v)
		}
		return v
	}
	var visit func(parent, sw int) error
	visit = func(parent, sw int) error {
		if len(t.Parent)%ctxEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		v := add(parent, sw, idleUnder[sw], true)
		s := top.Switch(sw)
		if len(s.Nodes) > 0 {
			t.Idle[v] = leafIdle[sw]
			t.Depth[v] = len(top.Ancestors(s.Nodes[0])) + 1
			return nil
		}
		for _, c := range s.Switches {
			if idleUnder[c] > 0 {
				if err := visit(v, c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	switch len(roots) {
	case 0:
		add(-1, -1, 0, false) // no idle node: a bare virtual top
	case 1:
		if err := visit(-1, roots[0]); err != nil {
			return nil, err
		}
	default:
		v := add(-1, -1, len(w.Idle), false)
		for _, r := range roots {
			if err := visit(v, r); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// LeafCounts are the nodes of one job per leaf vertex: Vertex[i] holds
// Count[i] of them.
type LeafCounts struct {
	Vertex []int
	Count  []int
}

// Add appends count nodes under leaf vertex v (a zero count is skipped).
func (c *LeafCounts) Add(v, count int) {
	if count > 0 {
		c.Vertex = append(c.Vertex, v)
		c.Count = append(c.Count, count)
	}
}

// Len returns the job's node count.
func (c LeafCounts) Len() int {
	n := 0
	for _, k := range c.Count {
		n += k
	}
	return n
}

// Decode turns per-job leaf counts into allocations of w's jobs (jobs[i]
// is the window index of counts[i]): each job takes the lowest idle node
// ids of each of its leaves that no earlier job took. It returns an error
// when a leaf is over its capacity or a count names a vertex that is not a
// leaf.
func (t *Tree) Decode(jobs []int, counts []LeafCounts) ([]model.Allocation, error) {
	if len(jobs) != len(counts) {
		return nil, fmt.Errorf("dcas: %d count vectors for %d jobs", len(counts), len(jobs))
	}
	used := make(map[int]int)
	allocs := make([]model.Allocation, len(jobs))
	for i, c := range counts {
		a := model.Allocation{Job: jobs[i], Nodes: make([]int, 0, c.Len()), Start: t.Time}
		for k, v := range c.Vertex {
			if v < 0 || v >= len(t.Idle) || t.Idle[v] == nil {
				return nil, fmt.Errorf("dcas: job %d: vertex %d is not a leaf switch", jobs[i], v)
			}
			from := used[v]
			to := from + c.Count[k]
			if c.Count[k] < 0 || to > len(t.Idle[v]) {
				return nil, fmt.Errorf("dcas: job %d: leaf vertex %d holds %d idle nodes, asked for %d more after %d",
					jobs[i], v, len(t.Idle[v]), c.Count[k], from)
			}
			a.Nodes = append(a.Nodes, t.Idle[v][from:to]...)
			used[v] = to
		}
		allocs[i] = a
	}
	return allocs, nil
}

// Counts returns the leaf counts of a node set (node ids of the window's
// topology): the inverse of Decode up to the choice of nodes. It returns
// an error for a node under no leaf with idle nodes, or more nodes under a
// leaf than it has idle; that the nodes are idle is model.Check's to say.
func (t *Tree) Counts(top *model.Topology, nodes []int) (LeafCounts, error) {
	per := make(map[int]int)
	var order []int
	for _, id := range nodes {
		if id < 0 || id >= top.NumNodes() {
			return LeafCounts{}, fmt.Errorf("dcas: node %d is not a node of the topology", id)
		}
		leaf := top.Node(id).Leaf
		v := -1
		if leaf >= 0 && leaf < len(t.vertexOf) {
			v = t.vertexOf[leaf]
		}
		if v < 0 || t.Idle[v] == nil {
			return LeafCounts{}, fmt.Errorf("dcas: node %d is under no leaf with idle nodes", id)
		}
		if per[v] == 0 {
			order = append(order, v)
		}
		per[v]++
	}
	var c LeafCounts
	for _, v := range order {
		if per[v] > t.Cap[v] {
			return LeafCounts{}, fmt.Errorf("dcas: %d nodes under leaf vertex %d, which has %d idle", per[v], v, t.Cap[v])
		}
		c.Add(v, per[v])
	}
	return c, nil
}

// Hops returns H = (n−1)·Σ_a d(a) − 2·Σ_v C(X_v, 2) of the job whose leaf
// counts are c (X_v its nodes under vertex v): the total hop distance over
// its node pairs, which model.CostModel.FromHops prices. buf is a scratch
// of NumVertices zeros, zeros again on return, so that pricing thousands
// of jobs on a large tree allocates nothing; nil allocates one.
func (t *Tree) Hops(c LeafCounts, buf []int) int64 {
	if buf == nil {
		buf = make([]int, t.NumVertices())
	}
	n := int64(c.Len())
	var depth, pairs int64
	for i, v := range c.Vertex {
		depth += int64(c.Count[i]) * int64(t.Depth[v])
		for u := v; u >= 0; u = t.Parent[u] {
			buf[u] += c.Count[i]
		}
	}
	for _, v := range c.Vertex {
		for u := v; u >= 0 && buf[u] > 0; u = t.Parent[u] {
			if t.Counted[u] {
				pairs += int64(buf[u]) * int64(buf[u]-1) / 2
			}
			buf[u] = 0
		}
	}
	return (n-1)*depth - 2*pairs
}
