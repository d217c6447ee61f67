package sim

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Select is the policy of a learned job selector (Config.Selector): at
// every arrival and end, while the selector names a waiting job that fits
// in the idle nodes, that job starts now, placed by the allocation
// strategy the selector names for it. Nothing is reserved: there is no
// backfilling rule, the selector decides the order.
const Select = "select"

// A Strategy is how a selected job's nodes are chosen among the idle ones
// on the simulator's switch tree.
type Strategy int

const (
	// DepthFirst fills the fewest switches: the leaf switch with the
	// fewest idle nodes that holds the whole job (best fit); else the pod
	// (the leaves' parent) with the fewest idle nodes that holds it, its
	// leaves fullest-idle first; else the pods with the most idle nodes
	// first, each pod's leaves fullest-idle first. Lowest node ids first
	// within a leaf; ties go to the lower switch.
	DepthFirst Strategy = iota
	// BreadthFirst spreads the job across switches: one idle node from
	// each leaf switch with idle nodes in turn (leaf order), round after
	// round, until the job has its nodes.
	BreadthFirst
	// FirstFitStrategy takes the lowest idle node ids (the per-job
	// policies' default allocator).
	FirstFitStrategy
)

// String names the strategy.
func (st Strategy) String() string {
	switch st {
	case DepthFirst:
		return "depth-first"
	case BreadthFirst:
		return "breadth-first"
	case FirstFitStrategy:
		return FirstFit
	}
	return fmt.Sprintf("strategy(%d)", int(st))
}

// A RunningView is a running job as a Selector sees it: its nodes, its
// start and its requested walltime (the run time where the log has
// none), not its true end.
type RunningView struct {
	Nodes          int
	Start, Request int64
}

// A View is the cluster's state a Selector decides on. Its slices are
// reused by the next decision.
type View struct {
	Now int64
	// Idle and Nodes are the idle and total nodes.
	Idle, Nodes int
	// Queue is the waiting jobs in arrival order.
	Queue   []QueuedJob
	Running []RunningView
	// LeafIdle is the idle nodes of each leaf switch (in the order of
	// their first node), LeafSize the most nodes a leaf has and PodIdle
	// the idle nodes under each leaf's parent switch.
	LeafIdle []int
	LeafSize int
	PodIdle  []int
	// Preview returns, without taking them, the nodes strategy would
	// give a job of n nodes now (at most Idle); for training, e.g. to
	// price a placement against first-fit's.
	Preview func(n int, st Strategy) []int
}

// A Selector is a learned job selector with an allocation strategy: it
// returns the index into v.Queue of a job that fits in v.Idle, to start
// now, and how to place it; or −1 to start none until the next event.
type Selector interface {
	Select(v *View) (job int, st Strategy)
}

// leaves is the simulator's switch tree as the strategies see it.
type leaves struct {
	of    []int   // node → leaf index (dense, by first node)
	nodes [][]int // leaf → its nodes, ascending
	pod   []int   // leaf → pod index (dense)
	npods int
	// podLeaves are each pod's leaves, ascending.
	podLeaves [][]int
	// ranges: every leaf's nodes are consecutive ids (a layout's), so
	// its idle nodes are counted a word of the idle bitset at a time.
	ranges bool
	// leafIdle and podIdle are the idle nodes of each leaf and pod,
	// kept up to date by the cluster's starts and ends once track has
	// run; pods and order are pick's scratch.
	leafIdle, podIdle []int
	pods, order       []int
}

// track counts c's idle nodes per leaf and pod and has c keep the counts
// as its nodes are taken and freed (Cluster.occupy and free).
func (l *leaves) track(c *Cluster) {
	l.leafIdle, l.podIdle = l.counts(c, nil, nil)
	c.tree = l
}

// add adds d to the idle counts of nodes' leaves and pods.
func (l *leaves) add(nodes []int, d int) {
	for _, k := range nodes {
		i := l.of[k]
		l.leafIdle[i] += d
		l.podIdle[l.pod[i]] += d
	}
}

func newLeaves(c *Cluster) *leaves {
	l := &leaves{of: make([]int, c.size)}
	leafIdx, podIdx := map[int]int{}, map[int]int{}
	for k := range c.size {
		sw := c.Topology.Group(k, 0)
		i, ok := leafIdx[sw]
		if !ok {
			i = len(l.nodes)
			leafIdx[sw] = i
			l.nodes = append(l.nodes, nil)
			p := c.Topology.Group(k, 1)
			pi, ok := podIdx[p]
			if !ok {
				pi = len(podIdx)
				podIdx[p] = pi
			}
			l.pod = append(l.pod, pi)
		}
		l.of[k] = i
		l.nodes[i] = append(l.nodes[i], k)
	}
	l.npods = len(podIdx)
	l.podLeaves = make([][]int, l.npods)
	l.ranges = true
	for i, ns := range l.nodes {
		l.podLeaves[l.pod[i]] = append(l.podLeaves[l.pod[i]], i)
		l.ranges = l.ranges && ns[len(ns)-1]-ns[0] == len(ns)-1
	}
	return l
}

// counts fills the idle nodes per leaf and per pod.
func (l *leaves) counts(c *Cluster, leafIdle, podIdle []int) ([]int, []int) {
	leafIdle = append(leafIdle[:0], make([]int, len(l.nodes))...)
	podIdle = append(podIdle[:0], make([]int, l.npods)...)
	for i, ns := range l.nodes {
		if l.ranges {
			leafIdle[i] = c.countIdle(ns[0], ns[len(ns)-1]+1)
		} else {
			for _, k := range ns {
				if c.isIdle(k) {
					leafIdle[i]++
				}
			}
		}
		podIdle[l.pod[i]] += leafIdle[i]
	}
	return leafIdle, podIdle
}

// pick returns the n idle nodes strategy st chooses (all the idle nodes
// if n exceeds them).
func (l *leaves) pick(c *Cluster, n int, st Strategy) []int {
	n = min(n, c.nIdle)
	out := make([]int, 0, n)
	if st == FirstFitStrategy {
		return c.appendLowestIdle(out, n)
	}
	leafIdle, podIdle := l.leafIdle, l.podIdle
	if c.tree != l {
		leafIdle, podIdle = l.counts(c, nil, nil)
	}
	take := func(leaf int) {
		for _, k := range l.nodes[leaf] {
			if len(out) == n {
				return
			}
			if c.isIdle(k) {
				out = append(out, k)
			}
		}
	}
	if st == BreadthFirst {
		next := make([]int, len(l.nodes)) // position in each leaf's list
		for len(out) < n {
			for i, ns := range l.nodes {
				for ; next[i] < len(ns) && len(out) < n; next[i]++ {
					if k := ns[next[i]]; c.isIdle(k) {
						out = append(out, k)
						next[i]++
						break
					}
				}
			}
		}
		return out
	}
	// Depth-first: the tightest single leaf, else the tightest pod, else
	// the pods with the most idle nodes.
	best := -1
	for i, f := range leafIdle {
		if f >= n && (best < 0 || f < leafIdle[best]) {
			best = i
		}
	}
	if best >= 0 {
		take(best)
		return out
	}
	byIdle := func(idle []int) func(a, b int) int {
		return func(a, b int) int {
			if c := cmp.Compare(idle[b], idle[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		}
	}
	// Pods without idle nodes come last in byIdle's order and give
	// nothing: only the others are sorted.
	pods := l.pods[:0]
	bestPod := -1
	for p, f := range podIdle {
		if f >= n && (bestPod < 0 || f < podIdle[bestPod]) {
			bestPod = p
		}
		if f > 0 {
			pods = append(pods, p)
		}
	}
	if bestPod >= 0 {
		pods = append(pods[:0], bestPod)
	} else {
		slices.SortFunc(pods, byIdle(podIdle))
	}
	l.pods = pods
	order := l.order[:0]
	defer func() { l.order = order }()
	for _, p := range pods {
		order = order[:0]
		for _, i := range l.podLeaves[p] {
			if leafIdle[i] > 0 {
				order = append(order, i)
			}
		}
		slices.SortFunc(order, byIdle(leafIdle))
		for _, i := range order {
			take(i)
			if len(out) == n {
				return out
			}
		}
	}
	return out
}

// runSelect runs Config.Selector event by event (see Select).
func (s *state) runSelect(ctx context.Context) error {
	tree := newLeaves(s.Cluster)
	tree.track(s.Cluster)
	v := &View{Nodes: s.cfg.Nodes}
	v.Preview = func(n int, st Strategy) []int { return tree.pick(s.Cluster, n, st) }
	for i := range tree.nodes {
		v.LeafSize = max(v.LeafSize, len(tree.nodes[i]))
	}
	return s.eachEvent(ctx, func(t int64) error {
		for len(s.queue) > 0 && s.nIdle > 0 {
			fits := false
			for _, q := range s.queue {
				if s.jobs[q.job].Nodes <= s.nIdle {
					fits = true
					break
				}
			}
			if !fits {
				return nil
			}
			v.Now, v.Idle = t, s.nIdle
			v.Queue = v.Queue[:0]
			for _, q := range s.queue {
				j := &s.jobs[q.job]
				v.Queue = append(v.Queue, QueuedJob{Submit: j.Submit, Request: requestOf(j.Walltime, j.Runtime), Nodes: j.Nodes})
			}
			v.Running = v.Running[:0]
			for _, r := range s.running {
				j := &s.jobs[r.job]
				v.Running = append(v.Running, RunningView{Nodes: len(r.nodes), Start: r.end - j.Runtime, Request: requestOf(j.Walltime, j.Runtime)})
			}
			v.LeafIdle = append(v.LeafIdle[:0], tree.leafIdle...)
			v.PodIdle = append(v.PodIdle[:0], tree.podIdle...)
			k, st := s.cfg.Selector.Select(v)
			if k < 0 {
				return nil
			}
			if k >= len(s.queue) {
				return fmt.Errorf("sim: the selector picked %d of %d waiting jobs", k, len(s.queue))
			}
			job := s.queue[k].job
			if s.jobs[job].Nodes > s.nIdle {
				return fmt.Errorf("sim: t=%d: the selector picked job %s of %d nodes with %d idle", t, s.jobs[job].ID, s.jobs[job].Nodes, s.nIdle)
			}
			if st < DepthFirst || st > FirstFitStrategy {
				return fmt.Errorf("sim: the selector named no strategy (%d)", int(st))
			}
			if err := s.startOn(job, tree.pick(s.Cluster, s.jobs[job].Nodes, st), t); err != nil {
				return err
			}
			s.queue = slices.Delete(s.queue, k, k+1)
		}
		return nil
	})
}

// startOn starts job on nodes at t, checked with model.Check when
// Config.Check is set (as startJob).
func (s *state) startOn(job int, nodes []int, t int64) error {
	if s.cfg.Check {
		if s.checkFailed() {
			return errCheckFailed
		}
		s.check(job, nodes, t)
	}
	s.start(job, nodes, t)
	return nil
}
