package sched

import (
	"reflect"
	"slices"
)

// A Kind names the rule a Violation breaks.
type Kind int

// The rules of Check, in the order they are applied to a start. The
// job rules (NoJob to JobDefect) end the start's checking; the node
// rules are applied to every node of the start.
const (
	// NoJob: the start names no job of the View.
	NoJob Kind = iota + 1
	// Twice: the job starts a second time.
	Twice
	// Blocked: the job may not start (Text says why).
	Blocked
	// ChunkCount: Got nodes for a job of Want chunks.
	ChunkCount
	// StartDefect: the start's own text is faulty (Text).
	StartDefect
	// JobDefect: the job's documents are faulty (Text).
	JobDefect
	// NoNode: Node is not in the View.
	NoNode
	// NodeTwice: Node is named twice by one start of a job whose chunks
	// do not stack.
	NodeTwice
	// Foreign: Node is not the scope's.
	Foreign
	// NotInPool: Node does not serve the job's Pool (Text).
	NotInPool
	// Excluded: the job excludes Node.
	Excluded
	// Down: Node takes no new job (Text is its state).
	Down
	// Over: Node would use Got of its Want of Resource (a resource the
	// start adds to).
	Over
	// NotWhole: Node, given whole, has something else on it.
	NotWhole
)

// A Violation is one broken rule, a value the adapter words in its
// server's terms.
type Violation struct {
	Kind Kind
	// Job is the start's job; Node the node concerned, when one is.
	Job, Node string
	// Resource, Got and Want are the amounts of Over (use and capacity)
	// and ChunkCount (nodes and chunks).
	Resource  string
	Got, Want int64
	// Text is the adapter's own words of Blocked, StartDefect,
	// JobDefect and Down, and the pool of NotInPool.
	Text string
}

// A Checker holds a View indexed once and what the starts it accepted
// use on each node: starts are checked in order, each against those
// accepted before it. It counts resources as vectors over the View's
// resource names, in name order.
type Checker struct {
	names []string
	index map[string]int
	jobs  map[string]*Job
	nodes map[string]*checkNode
	seen  map[string]bool
	memo  [4]memo
	next  int
}

// checkNode is a node with its capacity and what is in use on it as
// vectors, and the use of the accepted starts (nil until one is).
type checkNode struct {
	*Node
	capacity, inUse []int64
	used            *nodeUse
}

// nodeUse is what a node has in use plus the accepted starts on it (and,
// while a start is checked, that start): own are the start's amounts
// there, selfWhole says it takes the node whole.
type nodeUse struct {
	use       []int64
	starts    int
	whole     bool
	own       []int64
	selfWhole bool
}

// NewChecker indexes v; the allocations in flight count as starts
// already accepted.
func NewChecker(v *View) *Checker {
	c := &Checker{index: map[string]int{}, jobs: make(map[string]*Job, len(v.Jobs)),
		nodes: make(map[string]*checkNode, len(v.Nodes)), seen: map[string]bool{}}
	name := func(r Resources) {
		for k := range r {
			if _, ok := c.index[k]; !ok {
				c.index[k] = 0
				c.names = append(c.names, k)
			}
		}
	}
	for i := range v.Nodes {
		name(v.Nodes[i].Capacity)
		name(v.Nodes[i].InUse)
	}
	for i := range v.Jobs {
		for _, ch := range v.Jobs[i].Chunks {
			name(ch)
		}
	}
	for _, a := range v.InFlight {
		name(a.Amounts)
	}
	slices.Sort(c.names)
	for i, k := range c.names {
		c.index[k] = i
	}
	for i := range v.Jobs {
		c.jobs[v.Jobs[i].ID] = &v.Jobs[i]
	}
	for i := range v.Nodes {
		n := &v.Nodes[i]
		c.nodes[n.Name] = &checkNode{Node: n, capacity: c.vector(n.Capacity), inUse: c.vector(n.InUse)}
	}
	for _, a := range v.InFlight {
		n := c.nodes[a.Node]
		if n == nil {
			continue
		}
		u := c.with(n, nil, c.vector(a.Amounts), a.Whole)
		n.used = &u
	}
	return c
}

// vector is r over the Checker's resource names; the vectors of the
// last maps seen are kept (adapters share one map among nodes alike),
// and must not be changed.
func (c *Checker) vector(r Resources) []int64 {
	for _, m := range c.memo {
		if m.r != nil && sameMap(m.r, r) {
			return m.v
		}
	}
	out := make([]int64, len(c.names))
	for k, v := range r {
		out[c.index[k]] = v
	}
	c.memo[c.next] = memo{r, out}
	c.next = (c.next + 1) % len(c.memo)
	return out
}

// memo is a map and its vector.
type memo struct {
	r Resources
	v []int64
}

// sameMap reports whether a and b are the same map (not equal ones).
func sameMap(a, b Resources) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// with returns node n's use so far with one more start on it: its
// amounts, or for a start that takes the node whole its capacity (or its
// amounts, where they are more). prev, when not nil, is the use with this
// start's earlier chunks on n already (a job whose chunks stack): the
// chunk's amounts add to theirs.
func (c *Checker) with(n *checkNode, prev *nodeUse, amounts []int64, whole bool) nodeUse {
	u := nodeUse{use: make([]int64, len(c.names)), own: slices.Clone(amounts)}
	base := n.inUse
	if n.used != nil {
		u.starts, u.whole, base = n.used.starts, n.used.whole, n.used.use
	}
	if prev != nil {
		whole = whole || prev.selfWhole
		for i := range u.own {
			u.own[i] += prev.own[i]
		}
	}
	for i := range u.use {
		add := u.own[i]
		if whole {
			add = max(add, n.capacity[i])
		}
		u.use[i] = base[i] + add
	}
	u.starts++
	u.whole = u.whole || whole
	u.selfWhole = whole
	return u
}

// Add checks start s against the View and the starts accepted before it
// and returns its violations. The start is accepted (its job counted as
// started, its use on its nodes counted) when it has no violation, or
// with always when it passed the job rules: Check counts every such
// start, so that a node's excess is reported where it arises; Recheck
// accepts only the starts that hold.
func (c *Checker) Add(s Start, always bool) []Violation {
	var out []Violation
	bad := func(v Violation) {
		v.Job = s.Job
		out = append(out, v)
	}
	j := c.jobs[s.Job]
	switch {
	case j == nil:
		bad(Violation{Kind: NoJob})
	case c.seen[s.Job]:
		bad(Violation{Kind: Twice})
	case j.Blocked != "":
		bad(Violation{Kind: Blocked, Text: j.Blocked})
	case len(s.Nodes) != len(j.Chunks):
		bad(Violation{Kind: ChunkCount, Got: int64(len(s.Nodes)), Want: int64(len(j.Chunks))})
	case s.Defect != "":
		bad(Violation{Kind: StartDefect, Text: s.Defect})
	case j.Defect != "":
		bad(Violation{Kind: JobDefect, Text: j.Defect})
	}
	if len(out) > 0 {
		return out
	}
	// after is each node's use with this start on it; last the chunk
	// that names a node last (a node's use is judged once it is whole).
	after := make(map[string]nodeUse, len(s.Nodes))
	last := make(map[string]int, len(s.Nodes))
	for i, name := range s.Nodes {
		last[name] = i
	}
	for i, name := range s.Nodes {
		n := c.nodes[name]
		prev, again := after[name]
		if n == nil || (again && !j.Stack) || n.Foreign {
			switch {
			case n == nil:
				bad(Violation{Kind: NoNode, Node: name})
			case again:
				bad(Violation{Kind: NodeTwice, Node: name})
			default:
				bad(Violation{Kind: Foreign, Node: name})
			}
			continue
		}
		whole := j.Whole || j.WholeOn[name]
		if again {
			after[name] = c.with(n, &prev, c.vector(j.Chunks[i]), whole)
		} else {
			c.nodeRules(j, n, bad)
			after[name] = c.with(n, nil, c.vector(j.Chunks[i]), whole)
		}
		if last[name] != i {
			continue
		}
		u, before := after[name], n.inUse
		if n.used != nil {
			before = n.used.use
		}
		for r, k := range c.names {
			// A resource the start adds nothing to is not its excess.
			if u.use[r] > n.capacity[r] && u.use[r] > before[r] {
				bad(Violation{Kind: Over, Node: name, Resource: k, Got: u.use[r], Want: n.capacity[r]})
			}
		}
		if u.whole && (u.starts > 1 || n.Busy) {
			bad(Violation{Kind: NotWhole, Node: name})
		}
	}
	if len(out) == 0 || always {
		c.seen[s.Job] = true
		for name, u := range after {
			c.nodes[name].used = &u
		}
	}
	return out
}

// nodeRules applies the rules of a node that do not depend on its use:
// pool, exclusion, state.
func (c *Checker) nodeRules(j *Job, n *checkNode, bad func(Violation)) {
	if !n.AnyPool && !contains(n.Pools, j.Pool) {
		bad(Violation{Kind: NotInPool, Node: n.Name, Text: j.Pool})
	}
	if j.Excluded[n.Name] {
		bad(Violation{Kind: Excluded, Node: n.Name})
	}
	if n.Down != "" {
		bad(Violation{Kind: Down, Node: n.Name, Text: n.Down})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Check applies the rules to every start of p in order, each counted with
// all the starts before it that passed the job rules, and returns every
// violation (none: the plan may run).
func Check(v *View, p Plan) []Violation {
	c := NewChecker(v)
	var out []Violation
	for _, s := range p.Starts {
		out = append(out, c.Add(s, true)...)
	}
	return out
}

// A Drop is a start Recheck removed (the Index-th of the plan), with its
// violations.
type Drop struct {
	Index      int
	Start      Start
	Violations []Violation
}

// Recheck keeps, in order, the starts of p that the View read again
// (fresh) still allows together with the starts kept before them, and
// returns the kept plan and the dropped starts.
func Recheck(fresh *View, p Plan) (Plan, []Drop) {
	c := NewChecker(fresh)
	var kept Plan
	var dropped []Drop
	for i, s := range p.Starts {
		if vs := c.Add(s, false); len(vs) > 0 {
			dropped = append(dropped, Drop{i, s, vs})
			continue
		}
		kept.Starts = append(kept.Starts, s)
	}
	return kept, dropped
}
