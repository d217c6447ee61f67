package heuristics

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"slices"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// MishraGreedy, MishraBalanced and MishraAdaptive are the allocators of P.
// Mishra et al. (P. Malakar's group, IIT Kanpur),
// "Communication-aware Job Scheduling using SLURM", ICPP Workshops 2020,
// as the group's published SLURM 19.05 patch implements them
// (github.com/gaganmangat/slurm_changes: select/linear _job_test_topo
// under the JOBAWARE switches, and slurmctld/calc_hops.c); the paper text
// itself was not available here, only its abstract. They read each job's
// Comm (communication-intensive or not) and Pattern, and the Comm of the
// running jobs.
//
// All three place the problem's jobs in order, each on the idle nodes the
// jobs before it left, and all three first restrict a job to the leaves
// below one switch, as the patch inherits from Slurm: the lowest-level
// switch holding the job, with the fewest idle nodes among several (see
// Slurm, rule 1). They then rank those leaves, again before every pick:
//
//   - the communication ratio of a leaf, comm/busy + busy/size, where size
//     is its node count, busy its nodes that are not idle (running, down,
//     or taken by an earlier job of this window) and comm the busy nodes of
//     communication-intensive jobs (0 when busy is 0). A communication-
//     intensive job takes the lowest ratio first (it spreads contention);
//     ties go to a leaf whose idle nodes hold the rest of the job, then to
//     fewer comm nodes. Any other job takes the highest ratio first (it
//     packs onto contended leaves). Then the lowest leaf index.
//
// Ratios are compared exactly, as fractions. Within a leaf the lowest idle
// node ids go first. The three differ in how many nodes a leaf gives:
//
//   - MishraGreedy: all its idle nodes, or the rest of the job;
//   - MishraBalanced: the largest power of two at most its idle count and
//     the rest of the job, each leaf once in ranking order; when every leaf
//     has been visited and nodes are still missing, the visited leaves give
//     more idle nodes, the last visited first (the patch's backtracking);
//   - MishraAdaptive: the cheaper of the greedy and the balanced allocation
//     under MishraCost (balanced on a tie), job by job.
//
// Where this departs from the patch: its balanced allocation halves the
// request until it fits (6 nodes on leaves of 4 become 3+3) and visits the
// leaves by idle count; here shares are powers of two, as the paper's
// abstract states (4+2), over the greedy ranking. Its adaptive allocation
// keeps the costlier allocation for compute-intensive jobs; here every job
// keeps the cheaper. Its distance is 2 within a leaf and 2·(levels+1)
// between any two leaves; here 2 × the level of the lowest common switch.
// Its rhvd cost weights the steps by message size and its rd pairs only
// ranks i and i+2^k with i a multiple of 2^(k+1); here rd and rhvd both
// cost the full recursive-doubling pair set, unweighted (see MishraCost).
//
// MishraGreedy is the greedy one: the job takes whole leaves in
// communication-ratio order.
type MishraGreedy struct{}

// MishraBalanced is the balanced allocator of Mishra et al.: power-of-two
// shares of the job over leaves in communication-ratio order (see
// MishraGreedy for the rules the three share).
type MishraBalanced struct{}

// MishraAdaptive is the adaptive allocator of Mishra et al.: per job, the
// cheaper of the greedy and the balanced allocation under MishraCost (see
// MishraGreedy for the rules the three share). Its Result.Stats count the
// jobs that took each: "greedy_picks" and "balanced_picks".
type MishraAdaptive struct{}

var (
	_ solver.Solver = MishraGreedy{}
	_ solver.Solver = MishraBalanced{}
	_ solver.Solver = MishraAdaptive{}
)

// Name returns "mishra-greedy".
func (MishraGreedy) Name() string { return "mishra-greedy" }

// Name returns "mishra-balanced".
func (MishraBalanced) Name() string { return "mishra-balanced" }

// Name returns "mishra-adaptive".
func (MishraAdaptive) Name() string { return "mishra-adaptive" }

// Solve places the problem's jobs one after another, each on whole leaves
// in communication-ratio order. It ignores ctx.
func (MishraGreedy) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	return solveMishra(p, "mishra-greedy", mishraGreedy)
}

// Solve places the problem's jobs one after another, each in power-of-two
// shares over leaves in communication-ratio order. It ignores ctx.
func (MishraBalanced) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	return solveMishra(p, "mishra-balanced", mishraBalanced)
}

// Solve places the problem's jobs one after another, each by the cheaper of
// the greedy and the balanced allocation. It ignores ctx.
func (MishraAdaptive) Solve(_ context.Context, p *solver.Problem) (*solver.Result, error) {
	return solveMishra(p, "mishra-adaptive", mishraAdaptive)
}

type mishraMode int

const (
	mishraGreedy mishraMode = iota
	mishraBalanced
	mishraAdaptive
)

func solveMishra(p *solver.Problem, name string, mode mishraMode) (*solver.Result, error) {
	if err := checkFits(name, p); err != nil {
		return nil, err
	}
	w := p.Window
	if mode == mishraAdaptive {
		for _, j := range p.Jobs {
			if !validPattern(w.Jobs[j].Pattern) {
				return nil, fmt.Errorf("%s: job %s: unknown communication pattern %q", name, w.Jobs[j].ID, w.Jobs[j].Pattern)
			}
		}
	}
	m := newMishra(w)
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "tree", Solver: name}
	var picks [2]int // adaptive: greedy, balanced
	for _, j := range p.Jobs {
		job := &w.Jobs[j]
		plan, pick := m.plan(mode, job)
		if mode == mishraAdaptive {
			picks[pick]++
		}
		res.Allocations = append(res.Allocations, model.Allocation{Job: j, Nodes: m.commit(plan, job.Comm), Start: w.Time})
	}
	if mode == mishraAdaptive {
		res.Stats = map[string]float64{"greedy_picks": float64(picks[0]), "balanced_picks": float64(picks[1])}
	}
	res.Objective = solver.Objective(w, res.Allocations)
	return res, nil
}

func validPattern(p string) bool {
	switch p {
	case "", model.PatternRD, model.PatternRHVD, model.PatternBinomial:
		return true
	}
	return false
}

// plan returns the leaves and counts mode gives job on the current state,
// and for the adaptive mode which plan it took (0 greedy, 1 balanced).
func (m *mishra) plan(mode mishraMode, job *model.Job) ([]leafTake, int) {
	top := m.topSwitch(job.Nodes)
	switch mode {
	case mishraGreedy:
		return m.greedyPlan(m.ranker(top, job.Comm), job.Nodes, job.Comm), 0
	case mishraBalanced:
		return m.balancedPlan(m.ranker(top, job.Comm), job.Nodes, job.Comm), 1
	}
	g := m.greedyPlan(m.ranker(top, job.Comm), job.Nodes, job.Comm)
	b := m.balancedPlan(m.ranker(top, job.Comm), job.Nodes, job.Comm)
	cg := m.cost(m.planNodes(g), job.Comm, job.Pattern)
	cb := m.cost(m.planNodes(b), job.Comm, job.Pattern)
	if cb <= cg {
		return b, 1
	}
	return g, 0
}

// ranker returns the function that yields, for a job that still needs rem
// nodes, the best-ranked leaf below top with free nodes not yet yielded,
// or -1.
func (m *mishra) ranker(top int, comm bool) func(rem int) int {
	if m.mx != nil {
		return m.mx.ranker(top, comm)
	}
	cands := m.leavesUnder(top)
	done := make([]bool, len(cands))
	return func(rem int) int {
		i := m.next(cands, done, rem, comm)
		if i < 0 {
			return -1
		}
		done[i] = true
		return cands[i]
	}
}

// mishra is the tree of idle nodes with, per leaf switch, its node count
// and its communication-intensive busy nodes.
type mishra struct {
	*tree
	size    []int
	commCnt []int
	// extra is scratch space for cost: the job's own nodes per leaf; and
	// leafBuf and runBuf its per-rank lists.
	extra           []int
	leafBuf, runBuf []int
	// mx, when set, ranks the leaves by index (an Incremental allocator
	// on an ordered topology).
	mx *mishraIndex
}

func newMishra(w *model.Window) *mishra {
	tr := newTree(w)
	m := &mishra{tree: tr, size: make([]int, len(tr.cnt)), commCnt: make([]int, len(tr.cnt)), extra: make([]int, len(tr.cnt))}
	for s := range m.size {
		m.size[s] = len(w.Topology.Switch(s).Nodes)
	}
	comm := make([]bool, w.Topology.NumNodes())
	for _, r := range w.Running {
		if r.Comm {
			for _, id := range r.Nodes {
				comm[id] = true
			}
		}
	}
	for id, c := range comm {
		if c && !w.IsIdle(id) {
			m.commCnt[w.Topology.Node(id).Leaf]++
		}
	}
	return m
}

// A leafTake gives k of a leaf's idle nodes (the lowest ids) to a job.
type leafTake struct{ leaf, k int }

// ratio returns the communication ratio comm/busy + busy/size of leaf l as
// the fraction num/den.
func (m *mishra) ratio(l int) (num, den uint64) {
	size := uint64(m.size[l])
	busy := size - uint64(m.cnt[l])
	if busy == 0 {
		return 0, 1
	}
	return uint64(m.commCnt[l])*size + busy*busy, busy * size
}

// cmpRatio compares the communication ratios of leaves a and b exactly.
func (m *mishra) cmpRatio(a, b int) int {
	an, ad := m.ratio(a)
	bn, bd := m.ratio(b)
	h1, l1 := bits.Mul64(an, bd)
	h2, l2 := bits.Mul64(bn, ad)
	switch {
	case h1 != h2:
		return cmp.Compare(h1, h2)
	default:
		return cmp.Compare(l1, l2)
	}
}

// before reports whether leaf a ranks before leaf b for a job (comm says
// whether it is communication-intensive) that still needs rem nodes.
func (m *mishra) before(a, b, rem int, comm bool) bool {
	c := m.cmpRatio(a, b)
	if !comm {
		if c != 0 {
			return c > 0
		}
		return a < b
	}
	if c != 0 {
		return c < 0
	}
	if sa, sb := m.cnt[a] >= rem, m.cnt[b] >= rem; sa != sb {
		return sa
	}
	if m.commCnt[a] != m.commCnt[b] {
		return m.commCnt[a] < m.commCnt[b]
	}
	return a < b
}

// next returns the index in cands of the best-ranked leaf not yet done.
func (m *mishra) next(cands []int, done []bool, rem int, comm bool) int {
	best := -1
	for i, l := range cands {
		if done[i] {
			continue
		}
		if best < 0 || m.before(l, cands[best], rem, comm) {
			best = i
		}
	}
	return best
}

// greedyPlan gives a job of n nodes whole leaves in ranking order (next:
// ranker's).
func (m *mishra) greedyPlan(next func(rem int) int, n int, comm bool) []leafTake {
	var plan []leafTake
	for rem := n; rem > 0; {
		l := next(rem)
		k := min(rem, m.cnt[l])
		plan = append(plan, leafTake{l, k})
		rem -= k
	}
	return plan
}

// balancedPlan gives a job of n nodes power-of-two shares of leaves in
// ranking order, then tops up from the visited leaves, last first.
func (m *mishra) balancedPlan(next func(rem int) int, n int, comm bool) []leafTake {
	var plan []leafTake
	rem := n
	for rem > 0 {
		l := next(rem)
		if l < 0 {
			break
		}
		k := 1 << (bits.Len(uint(min(rem, m.cnt[l]))) - 1)
		plan = append(plan, leafTake{l, k})
		rem -= k
	}
	for i := len(plan) - 1; i >= 0 && rem > 0; i-- {
		more := min(rem, m.cnt[plan[i].leaf]-plan[i].k)
		plan[i].k += more
		rem -= more
	}
	return plan
}

// planNodes returns the node ids a plan would take, in increasing order.
func (m *mishra) planNodes(plan []leafTake) []int {
	out := make([]int, 0, planSize(plan))
	ends := make([]int, 0, len(plan))
	for _, t := range plan {
		out = append(out, m.free[t.leaf][:t.k]...)
		ends = append(ends, len(out))
	}
	return sortSegmentsBuf(out, ends, m.scratch(len(out)))
}

// commit takes a plan's nodes from the tree and returns them in increasing
// order; a communication-intensive job's nodes count as such from now on.
func (m *mishra) commit(plan []leafTake, comm bool) []int {
	out := make([]int, 0, planSize(plan))
	ends := make([]int, 0, len(plan))
	for _, t := range plan {
		out = m.takeInto(out, t.leaf, t.k)
		ends = append(ends, len(out))
		if comm {
			m.commCnt[t.leaf] += t.k
		}
		if m.mx != nil {
			m.mx.update(t.leaf)
		}
	}
	return sortSegmentsBuf(out, ends, m.scratch(len(out)))
}

// planSize returns the number of nodes a plan takes.
func planSize(plan []leafTake) int {
	n := 0
	for _, t := range plan {
		n += t.k
	}
	return n
}

// release gives ids, all on leaf, back to the free nodes: their job
// (communication-intensive when comm) ended.
func (m *mishra) release(leaf int, ids []int, comm bool) {
	m.give(leaf, ids)
	if comm {
		m.commCnt[leaf] -= len(ids)
	}
	if m.mx != nil {
		m.mx.update(leaf)
	}
}

// MishraCost returns the communication cost that Mishra et al.'s model
// gives job on nodes in window w as it stands (the Comm of w's running
// jobs): the sum, over the steps of the job's Pattern, of the costliest
// pair communicating in that step. Ranks are the nodes in increasing id
// order. With d = 2 × the level of the lowest switch above both nodes (2
// within a leaf, 4 within a pod, 6 across pods in [Lan23]'s layout; the
// virtual switch above the roots of a forest is one level above the
// tallest tree), the cost of a pair on leaves a and b is
//
//	same leaf:  d·(1 + c(a))
//	otherwise:  d·(1 + c(a) + c(b) + (comm(a) + comm(b)) / (2·(size(a) + size(b))))
//
// with size(l) the node count of leaf l, comm(l) its busy nodes of
// communication-intensive running jobs plus, when job.Comm, the job's own
// nodes on l, and the contention factor c(l) = comm(l)/size(l). The
// patterns: rd, step k = 0, 1, …: rank i with rank i XOR 2^k; rhvd: the
// same pairs in the reverse order (its message sizes are not modelled, so
// it costs what rd costs); binomial, step k: ranks i < 2^k with i + 2^k.
// Pairs with a rank beyond the job are skipped. A job of one node costs 0.
func MishraCost(w *model.Window, job model.Job, nodes []int) (float64, error) {
	if !validPattern(job.Pattern) {
		return 0, fmt.Errorf("job %s: unknown communication pattern %q", job.ID, job.Pattern)
	}
	n := w.Topology.NumNodes()
	for _, id := range nodes {
		if id < 0 || id >= n {
			return 0, fmt.Errorf("job %s: node id %d is not in the topology", job.ID, id)
		}
	}
	return newMishra(w).cost(slices.Sorted(slices.Values(nodes)), job.Comm, job.Pattern), nil
}

// cost is MishraCost for nodes in increasing order, on the current state.
func (m *mishra) cost(nodes []int, comm bool, pattern string) float64 {
	if len(nodes) < 2 {
		return 0
	}
	leaf := slices.Grow(m.leafBuf[:0], len(nodes))[:len(nodes)]
	m.leafBuf = leaf
	for i, id := range nodes {
		leaf[i] = m.t.Node(id).Leaf
		if comm {
			m.extra[leaf[i]]++
		}
	}
	defer func() {
		for _, l := range leaf {
			m.extra[l] = 0
		}
	}()
	pair := func(i, j int) float64 {
		a, b := leaf[i], leaf[j]
		ca := float64(m.commCnt[a]+m.extra[a]) / float64(m.size[a])
		if a == b {
			return 2 * (1 + ca)
		}
		cb := float64(m.commCnt[b]+m.extra[b]) / float64(m.size[b])
		c3 := float64(m.commCnt[a]+m.extra[a]+m.commCnt[b]+m.extra[b]) / float64(m.size[a]+m.size[b])
		return float64(2*m.lcaLevel(a, b)) * (1 + ca + cb + c3/2)
	}
	n := len(nodes)
	// runEnd[i] is the end of the run of equal leaves holding rank i: a
	// pair's cost depends on its two leaves only, so each stretch of pairs
	// (i, i+k) whose two ends stay on the same two leaves is priced once.
	runEnd := slices.Grow(m.runBuf[:0], n)[:n]
	m.runBuf = runEnd
	for i := n - 1; i >= 0; i-- {
		if i+1 < n && leaf[i+1] == leaf[i] {
			runEnd[i] = runEnd[i+1]
		} else {
			runEnd[i] = i + 1
		}
	}
	// stretch returns the cost of the costliest pair (i, i+k), lo ≤ i < hi.
	stretch := func(lo, hi, k int) float64 {
		var c float64
		for i := lo; i < hi; {
			c = max(c, pair(i, i+k))
			i = min(hi, runEnd[i], runEnd[i+k]-k)
		}
		return c
	}
	var total float64
	for k := 1; k < n; k <<= 1 {
		var step float64
		if pattern == model.PatternBinomial {
			step = stretch(0, min(k, n-k), k)
		} else {
			// rank i pairs with i XOR k: i+k for the i whose bit k is
			// clear, in blocks of k from every multiple of 2k.
			for base := 0; base+k < n; base += 2 * k {
				step = max(step, stretch(base, min(base+k, n-k), k))
			}
		}
		total += step
	}
	return total
}

// lcaLevel returns the level of the lowest switch above both switches a and
// b, the virtual switch's when they are in different trees.
func (tr *tree) lcaLevel(a, b int) int {
	for a != b {
		if a < 0 || b < 0 {
			return tr.top
		}
		switch la, lb := tr.level[a], tr.level[b]; {
		case la < lb:
			a = tr.parent[a]
		case lb < la:
			b = tr.parent[b]
		default:
			a, b = tr.parent[a], tr.parent[b]
		}
	}
	if a < 0 {
		return tr.top
	}
	return tr.level[a]
}
