package model

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// A Topology is a tree (or forest) of switches over compute nodes, the
// abstraction Slurm's topology/tree plugin and [Lan23] use for fat-trees.
// Leaf switches own nodes; upper switches own switches. Nodes are numbered
// 0..NumNodes()-1 and that number is their total order: the idle sequence Q
// of a window lists idle nodes by increasing id.
//
// When the switches form several trees, the trees are taken to meet at one
// virtual switch above all roots, so every pair of nodes has a hop distance.
//
// A Topology is immutable once built and safe for concurrent use.
type Topology struct {
	nodes    []Node
	switches []Switch
	byName   map[string]int
	// anc[i] lists the switches above node i, leaf switch first.
	anc [][]int32
	// runEnd[i] is the first id after i whose node is not on i's leaf
	// switch (or NumNodes): nodes i..runEnd[i]-1 share a leaf.
	runEnd []int32
	// leaf[i] is nodes[i].Leaf, kept compact for HopCounter.Slide.
	leaf []int32
	// leafAnc[s] is anc[i] of the nodes i of leaf switch s (nil for other
	// switches): a table of the switches' size, which HopCounter.Slide
	// reads through leaf instead of anc, a table of the nodes' size that
	// does not stay in cache on a large topology.
	leafAnc [][]int32
	// height is the number of switch levels: 1 for a single leaf switch.
	height int
	// counters keeps empty HopCounters over this topology for Cost, so
	// that pricing a job does not allocate a switch table (10⁴ switches on
	// a 10⁶-node layout) each time.
	counters sync.Pool
	// packOnce computes packCaps: packCaps[k] is the most nodes below one
	// switch k levels above the leaves (k = 0 the leaf switches), nil when
	// the nodes' depths differ (MinHops).
	packOnce sync.Once
	packCaps []int64
}

// A Node is one compute node of a topology.
type Node struct {
	// Name is the node's host name ("n17", "tux3").
	Name string
	// Leaf is the index of the leaf switch the node hangs from.
	Leaf int
}

// A Switch is one switch of a topology.
type Switch struct {
	// Name is the switch's name ("leaf3", "pod1", "s0").
	Name string
	// Level is 1 for a leaf switch and one more than its highest child
	// switch otherwise.
	Level int
	// Parent is the index of the switch above, or -1 for a root.
	Parent int
	// Switches are the indices of the child switches, in declaration order.
	Switches []int
	// Nodes are the ids of the nodes of a leaf switch, in order.
	Nodes []int
}

// A SwitchSpec declares one switch for BuildTopology: either the nodes it
// owns (a leaf switch) or the switches it owns, never both.
type SwitchSpec struct {
	Name     string
	Nodes    []string
	Switches []string
}

// ErrTopology is wrapped by every error BuildTopology returns.
var ErrTopology = errors.New("model: bad topology")

// BuildTopology builds a topology from switch declarations. Nodes are
// numbered leaf switch by leaf switch, in declaration order, and within a
// leaf in the order given. It rejects empty or duplicate names, a node under
// two leaves, a switch with two parents or under itself, references to
// undeclared switches, switches with both nodes and switches, and a topology
// without nodes.
func BuildTopology(specs []SwitchSpec) (*Topology, error) {
	// Sized up front: a million-node layout otherwise spends most of its
	// time and memory growing these.
	total := 0
	for _, s := range specs {
		total += len(s.Nodes)
	}
	t := &Topology{byName: make(map[string]int, total), switches: make([]Switch, 0, len(specs)), nodes: make([]Node, 0, total)}
	swIdx := make(map[string]int, len(specs))
	for i, s := range specs {
		if s.Name == "" {
			return nil, fmt.Errorf("%w: switch %d has no name", ErrTopology, i)
		}
		if _, dup := swIdx[s.Name]; dup {
			return nil, fmt.Errorf("%w: switch %q declared twice", ErrTopology, s.Name)
		}
		if len(s.Nodes) > 0 && len(s.Switches) > 0 {
			return nil, fmt.Errorf("%w: switch %q has both nodes and switches", ErrTopology, s.Name)
		}
		if len(s.Nodes) == 0 && len(s.Switches) == 0 {
			return nil, fmt.Errorf("%w: switch %q has neither nodes nor switches", ErrTopology, s.Name)
		}
		swIdx[s.Name] = i
		t.switches = append(t.switches, Switch{Name: s.Name, Parent: -1})
	}
	for i, s := range specs {
		for _, name := range s.Nodes {
			if name == "" {
				return nil, fmt.Errorf("%w: switch %q lists an empty node name", ErrTopology, s.Name)
			}
			if prev, dup := t.byName[name]; dup {
				return nil, fmt.Errorf("%w: node %q is under both %q and %q", ErrTopology,
					name, t.switches[t.nodes[prev].Leaf].Name, s.Name)
			}
			id := len(t.nodes)
			t.byName[name] = id
			t.nodes = append(t.nodes, Node{Name: name, Leaf: i})
			t.switches[i].Nodes = append(t.switches[i].Nodes, id)
		}
		for _, child := range s.Switches {
			c, ok := swIdx[child]
			if !ok {
				return nil, fmt.Errorf("%w: switch %q lists undeclared switch %q", ErrTopology, s.Name, child)
			}
			if c == i {
				return nil, fmt.Errorf("%w: switch %q lists itself", ErrTopology, s.Name)
			}
			if p := t.switches[c].Parent; p >= 0 {
				return nil, fmt.Errorf("%w: switch %q is under both %q and %q", ErrTopology,
					child, t.switches[p].Name, s.Name)
			}
			t.switches[c].Parent = i
			t.switches[i].Switches = append(t.switches[i].Switches, c)
		}
	}
	if len(t.nodes) == 0 {
		return nil, fmt.Errorf("%w: no nodes", ErrTopology)
	}
	for name := range swIdx {
		if _, clash := t.byName[name]; clash {
			return nil, fmt.Errorf("%w: %q names both a switch and a node", ErrTopology, name)
		}
	}
	// Every switch must reach a root without revisiting itself.
	for i := range t.switches {
		steps := 0
		for p := t.switches[i].Parent; p >= 0; p = t.switches[p].Parent {
			if steps++; steps > len(t.switches) {
				return nil, fmt.Errorf("%w: switch %q is part of a cycle", ErrTopology, t.switches[i].Name)
			}
		}
	}
	// A switch above only switches must have nodes somewhere below it;
	// levels follow from the leaves upwards.
	var level func(i int) int
	level = func(i int) int {
		s := &t.switches[i]
		if s.Level > 0 {
			return s.Level
		}
		l := 1
		for _, c := range s.Switches {
			l = max(l, level(c)+1)
		}
		s.Level = l
		return l
	}
	for i := range t.switches {
		t.height = max(t.height, level(i))
	}
	// The nodes of a leaf share its list; the lists lie in one array.
	t.anc = make([][]int32, len(t.nodes))
	from := make([]int, len(t.switches)) // leaf's list at all[from-1:]; 0: none yet
	var all []int32
	for _, n := range t.nodes {
		if from[n.Leaf] == 0 {
			from[n.Leaf] = len(all) + 1
			for s := n.Leaf; s >= 0; s = t.switches[s].Parent {
				all = append(all, int32(s))
			}
		}
	}
	for id, n := range t.nodes {
		lo := from[n.Leaf] - 1
		hi := lo
		for s := n.Leaf; s >= 0; s = t.switches[s].Parent {
			hi++
		}
		t.anc[id] = all[lo:hi:hi]
	}
	t.runEnd = make([]int32, len(t.nodes))
	t.leaf = make([]int32, len(t.nodes))
	t.leafAnc = make([][]int32, len(t.switches))
	for id, n := range t.nodes {
		t.leaf[id] = int32(n.Leaf)
		t.leafAnc[n.Leaf] = t.anc[id]
	}
	for id := len(t.nodes) - 1; id >= 0; id-- {
		if id+1 < len(t.nodes) && t.nodes[id+1].Leaf == t.nodes[id].Leaf {
			t.runEnd[id] = t.runEnd[id+1]
		} else {
			t.runEnd[id] = int32(id + 1)
		}
	}
	return t, nil
}

// NumNodes returns the number of compute nodes.
func (t *Topology) NumNodes() int { return len(t.nodes) }

// NumSwitches returns the number of switches.
func (t *Topology) NumSwitches() int { return len(t.switches) }

// Height returns the number of switch levels of the tallest tree (3 for the
// paper's leaf/pod/core layout).
func (t *Topology) Height() int { return t.height }

// Node returns node id. It panics if id is out of range.
func (t *Topology) Node(id int) Node { return t.nodes[id] }

// Name returns the name of node id. It panics if id is out of range.
func (t *Topology) Name(id int) string { return t.nodes[id].Name }

// Lookup returns the id of the node called name.
func (t *Topology) Lookup(name string) (id int, ok bool) {
	id, ok = t.byName[name]
	return id, ok
}

// Switch returns switch i. It panics if i is out of range.
func (t *Topology) Switch(i int) Switch { return t.switches[i] }

// Ancestors returns the switches above node id, its leaf switch first. The
// slice is shared and must not be modified.
func (t *Topology) Ancestors(id int) []int32 { return t.anc[id] }

// Group returns the index of node id's ancestor switch at the given number
// of levels above its leaf (0: the leaf switch, 1: the leaf's parent, the
// pod in [Lan23]), or the topmost ancestor when the tree is not that tall.
func (t *Topology) Group(id, up int) int {
	a := t.anc[id]
	if up >= len(a) {
		up = len(a) - 1
	}
	return int(a[up])
}

// Hops returns the number of links on the tree path between nodes a and b:
// 0 for a == b, 2 under one leaf switch, 4 under one pod, 6 across pods in
// the paper's three-level layout. Nodes of different trees meet at the
// virtual switch above the roots.
func (t *Topology) Hops(a, b int) int {
	if a == b {
		return 0
	}
	aa, bb := t.anc[a], t.anc[b]
	// Walk both ancestor lists from the top down while they agree.
	i, j := len(aa)-1, len(bb)-1
	common := 0
	for i >= 0 && j >= 0 && aa[i] == bb[j] {
		i--
		j--
		common++
	}
	// Links from each node up to the lowest common switch (or the virtual
	// top when common == 0).
	return (len(aa) - common + 1) + (len(bb) - common + 1)
}

// NewLayout builds the cluster layout of [Lan23]'s published code: pods
// pods of leavesPerPod leaf switches of nodesPerLeaf nodes each, under one
// core switch. Node n (named "n<n>") sits under leaf n/nodesPerLeaf and pod
// n/(leavesPerPod*nodesPerLeaf); the paper's cluster is NewLayout(25, 4, 10).
func NewLayout(pods, leavesPerPod, nodesPerLeaf int) (*Topology, error) {
	if pods < 1 || leavesPerPod < 1 || nodesPerLeaf < 1 {
		return nil, fmt.Errorf("%w: layout needs at least 1 pod, leaf per pod and node per leaf", ErrTopology)
	}
	if pods*leavesPerPod*nodesPerLeaf > MaxGeneratedNodes {
		return nil, fmt.Errorf("%w: layout of %d nodes exceeds the limit of %d", ErrTopology,
			pods*leavesPerPod*nodesPerLeaf, MaxGeneratedNodes)
	}
	return BuildTopology(treeSpecs(pods, leavesPerPod, nodesPerLeaf))
}

// NewFatTree builds a k-ary fat-tree [Al-Fares08] as a switch tree: k pods,
// each of k/2 edge (leaf) switches with k/2 nodes, k³/4 nodes in all. The
// k/2 aggregation switches of a pod are folded into one pod switch and the
// (k/2)² core switches into one core, which keeps hop counts: 2 under an
// edge switch, 4 within a pod, 6 across pods. pods > 0 prunes the tree to
// its first pods pods; pods == 0 keeps all k. k must be even and ≥ 2.
func NewFatTree(k, pods int) (*Topology, error) {
	if k < 2 || k%2 != 0 {
		return nil, fmt.Errorf("%w: fat-tree k must be even and at least 2, got %d", ErrTopology, k)
	}
	if pods < 0 || pods > k {
		return nil, fmt.Errorf("%w: fat-tree pods must be between 1 and k=%d, got %d", ErrTopology, k, pods)
	}
	if pods == 0 {
		pods = k
	}
	return NewLayout(pods, k/2, k/2)
}

// MaxGeneratedNodes bounds generated topologies (a k=128 fat-tree has
// 524,288 nodes), so that a typo in a window file cannot exhaust memory.
// NewLayout and NewFatTree enforce it.
const MaxGeneratedNodes = 1 << 20

func treeSpecs(pods, leavesPerPod, nodesPerLeaf int) []SwitchSpec {
	specs := make([]SwitchSpec, 0, pods*leavesPerPod+pods+1)
	core := SwitchSpec{Name: "core"}
	n := 0
	for p := 0; p < pods; p++ {
		pod := SwitchSpec{Name: "pod" + strconv.Itoa(p)}
		for l := 0; l < leavesPerPod; l++ {
			leafID := p*leavesPerPod + l
			leaf := SwitchSpec{Name: "leaf" + strconv.Itoa(leafID)}
			for i := 0; i < nodesPerLeaf; i++ {
				leaf.Nodes = append(leaf.Nodes, "n"+strconv.Itoa(n))
				n++
			}
			specs = append(specs, leaf)
			pod.Switches = append(pod.Switches, leaf.Name)
		}
		specs = append(specs, pod)
		core.Switches = append(core.Switches, pod.Name)
	}
	return append(specs, core)
}
