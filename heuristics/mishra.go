package heuristics

import (
	"cmp"
	"context"
	"fmt"
	"math"
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
// jobs that took each (Stats.Mishra).
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
		res.Stats.Mishra = &solver.MishraStats{GreedyPicks: picks[0], BalancedPicks: picks[1]}
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
// and for the adaptive mode which plan it took (0 greedy, 1 balanced). The
// plan is m's scratch, valid until the next plan.
func (m *mishra) plan(mode mishraMode, job *model.Job) ([]leafTake, int) {
	top := m.topSwitch(job.Nodes)
	switch mode {
	case mishraGreedy:
		m.gPlan = m.greedyPlan(m.gPlan[:0], m.ranker(top, job.Comm), job.Nodes)
		return m.gPlan, 0
	case mishraBalanced:
		m.bPlan = m.balancedPlan(m.bPlan[:0], m.ranker(top, job.Comm), job.Nodes)
		return m.bPlan, 1
	}
	m.plans(top, job)
	// The same takes cost the same: balanced, as on a tie. Otherwise
	// greedy is priced only as far as it takes to know whether it costs
	// less than balanced (a cost only grows, step by step).
	if slices.Equal(m.gPlan, m.bPlan) {
		return m.bPlan, 1
	}
	cb := m.planCost(m.bPlan, job.Comm, job.Pattern)
	cg := m.planCostBelow(m.gPlan, job.Comm, job.Pattern, cb)
	if cb <= cg {
		return m.bPlan, 1
	}
	return m.gPlan, 0
}

// plans sets gPlan and bPlan to the greedy and the balanced plan for job
// below switch top. With an index, one walk of the ranking serves both as
// long as their takes agree (the same leaves asked with the same
// remainders: the same answers), then forks.
func (m *mishra) plans(top int, job *model.Job) {
	if m.mx == nil {
		m.gPlan = m.greedyPlan(m.gPlan[:0], m.ranker(top, job.Comm), job.Nodes)
		m.bPlan = m.balancedPlan(m.bPlan[:0], m.ranker(top, job.Comm), job.Nodes)
		return
	}
	g, b := m.gPlan[:0], m.bPlan[:0]
	r := m.mx.walk(top, job.Comm, m.mx.cur)
	for rem := job.Nodes; rem > 0; {
		l := r.next(rem)
		kg := min(rem, m.cnt[l])
		kb := 1 << (bits.Len(uint(kg)) - 1)
		g, b = append(g, leafTake{l, kg}), append(b, leafTake{l, kb})
		if kg != kb {
			// greedyPlan and balancedPlan go on as from here.
			rb := r.fork(m.mx.fork)
			g = m.greedyPlan(g, r.next, rem-kg)
			b = m.balancedPlan(b, rb.next, rem-kb)
			break
		}
		rem -= kg
	}
	m.gPlan, m.bPlan = g, b
}

// planCost is cost of the nodes plan would take, on the current state:
// from the plan's leaves and counts alone when each leaf's nodes are a run
// of ids (the ranks are then the plan's takes in the leaves' id order).
func (m *mishra) planCost(plan []leafTake, comm bool, pattern string) float64 {
	return m.planCostBelow(plan, comm, pattern, math.Inf(1))
}

// planCostBelow is planCost, or, when that is bound or more, possibly a
// partial cost between bound and it (see costRuns).
func (m *mishra) planCostBelow(plan []leafTake, comm bool, pattern string, bound float64) float64 {
	if m.lowRank == nil {
		return m.costRuns(m.nodeRuns(m.planNodes(plan)), comm, pattern, bound)
	}
	return m.costRuns(m.planRuns(plan), comm, pattern, bound)
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
	// extra is scratch space for cost: the job's own nodes per leaf; runBuf
	// its runs of ranks and runC its per-run contention.
	extra  []int
	runBuf []rankRun
	runC   []runCost
	// lowRank[l], when set, is leaf l's place among the leaves in the
	// order of their node ids, every leaf's nodes being a run of ids
	// (generated layouts, fat-trees); byLow lists the leaves in that order.
	// planRuns reads a plan's ranks from it, with marks (a bitset by
	// place) and takeAt (the count by place) as scratch; at is commit's
	// scratch (by leaf, the next position of its ids in the output).
	lowRank []int
	byLow   []int
	marks   []uint64
	takeAt  []int
	at      []int
	// gPlan and bPlan are plan's scratch, deltas commit's and release's
	// (changes of leaves' free counts).
	gPlan, bPlan, deltas []leafTake
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
	m.rankLeaves()
	return m
}

// rankLeaves sets lowRank and byLow when every leaf's nodes are a run of
// ids.
func (m *mishra) rankLeaves() {
	t := m.t
	rank := make([]int, len(m.cnt))
	for s := range rank {
		rank[s] = -1
	}
	var byLow []int
	prev := -1
	for id := range t.NumNodes() {
		l := t.Node(id).Leaf
		if l == prev {
			continue
		}
		if rank[l] >= 0 {
			return // l's nodes are not one run
		}
		rank[l] = len(byLow)
		byLow = append(byLow, l)
		prev = l
	}
	m.lowRank, m.byLow = rank, byLow
	m.marks = make([]uint64, (len(byLow)+63)/64)
	m.takeAt = make([]int, len(byLow))
	m.at = make([]int, len(m.cnt))
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

// greedyPlan appends to plan whole leaves in ranking order (next:
// ranker's) for a job of n nodes (or for the n nodes a job still needs
// after the takes plan holds, which next has yielded).
func (m *mishra) greedyPlan(plan []leafTake, next func(rem int) int, n int) []leafTake {
	for rem := n; rem > 0; {
		l := next(rem)
		k := min(rem, m.cnt[l])
		plan = append(plan, leafTake{l, k})
		rem -= k
	}
	return plan
}

// balancedPlan appends to plan power-of-two shares of leaves in ranking
// order for a job of n nodes, then tops up from the visited leaves, last
// first (those plan held already among them: it may hold the first takes
// of the job, which next has yielded, and n is then what the job still
// needs).
func (m *mishra) balancedPlan(plan []leafTake, next func(rem int) int, n int) []leafTake {
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

// planRuns returns the runs of ranks of the nodes a plan would take (m's
// scratch, valid until the next call): its takes in the order of their
// leaves' ids, a leaf's takes together. It needs lowRank.
func (m *mishra) planRuns(plan []leafTake) []rankRun {
	for _, t := range plan {
		if t.k == 0 {
			continue
		}
		r := m.lowRank[t.leaf]
		m.marks[r/64] |= 1 << (r % 64)
		m.takeAt[r] += t.k
	}
	runs := m.runBuf[:0]
	for w, x := range m.marks {
		for x != 0 {
			r := w*64 + bits.TrailingZeros64(x)
			x &= x - 1
			runs = append(runs, rankRun{m.byLow[r], m.takeAt[r]})
			m.takeAt[r] = 0
		}
		m.marks[w] = 0
	}
	m.runBuf = runs
	return runs
}

// commit takes a plan's nodes from the tree and returns them in increasing
// order; a communication-intensive job's nodes count as such from now on.
func (m *mishra) commit(plan []leafTake, comm bool) []int {
	n := planSize(plan)
	if m.lowRank != nil {
		// Each take's place in the output: after the takes of the leaves
		// of lower ids, and of its own leaf earlier in the plan.
		out := make([]int, n)
		off := 0
		for _, r := range m.planRuns(plan) {
			m.at[r.leaf] = off
			off += r.n
		}
		for _, t := range plan {
			f := m.free[t.leaf]
			if t.k > 0 { // planRuns skips an empty take: its leaf has no place
				m.at[t.leaf] += copy(out[m.at[t.leaf]:], f[:t.k])
			}
			m.free[t.leaf] = f[:copy(f, f[t.k:])]
			if m.fx == nil {
				m.count(t.leaf, -t.k)
				m.committed(t, comm)
			}
		}
		if m.fx != nil {
			// The counts at once, then the leaves' classes.
			ds := m.deltas[:0]
			for _, t := range plan {
				ds = append(ds, leafTake{t.leaf, -t.k})
			}
			m.deltas = ds
			m.fx.movedBatch(ds)
			for _, t := range plan {
				m.committed(t, comm)
			}
		}
		return out
	}
	out := make([]int, 0, n)
	ends := make([]int, 0, len(plan))
	for _, t := range plan {
		out = m.takeInto(out, t.leaf, t.k)
		ends = append(ends, len(out))
		m.committed(t, comm)
	}
	return sortSegmentsBuf(out, ends, m.scratch(len(out)))
}

// committed counts take t of a job (communication-intensive when comm) as
// taken.
func (m *mishra) committed(t leafTake, comm bool) {
	if comm {
		m.commCnt[t.leaf] += t.k
	}
	if m.mx != nil {
		m.mx.update(t.leaf)
	}
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
	m.released(leaf, len(ids), comm)
}

// released counts k nodes given back to leaf (its free count already
// up to date) as no longer those of a job of intensity comm.
func (m *mishra) released(leaf, k int, comm bool) {
	if comm {
		m.commCnt[leaf] -= k
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

// A rankRun is a stretch of n consecutive ranks of a job on one leaf.
type rankRun struct{ leaf, n int }

// cost is MishraCost for nodes in increasing order, on the current state.
func (m *mishra) cost(nodes []int, comm bool, pattern string) float64 {
	return m.costRuns(m.nodeRuns(nodes), comm, pattern, math.Inf(1))
}

// nodeRuns returns the runs of ranks of nodes, in increasing order, on
// one leaf each (m's scratch, valid until the next call).
func (m *mishra) nodeRuns(nodes []int) []rankRun {
	runs := m.runBuf[:0]
	for _, id := range nodes {
		l := m.t.Node(id).Leaf
		if k := len(runs) - 1; k >= 0 && runs[k].leaf == l {
			runs[k].n++
			continue
		}
		runs = append(runs, rankRun{l, 1})
	}
	m.runBuf = runs
	return runs
}

// A runCost is what pricing a pair reads of one run of ranks: its leaf,
// the leaf's communication-intensive nodes (the job's own included) and
// size, the leaf's contention factor, and where the run ends.
type runCost struct {
	leaf, comm, size, end int
	c                     float64
}

// costRuns is cost for the nodes whose ranks lie in runs, in rank order.
//
// A pair's cost depends only on the leaves of its two ranks, so each step
// k is the costliest pair over the stretches of ranks i in which rank i
// stays in one run and rank i+k in one run: i moves from stretch to
// stretch, at most 2·len(runs) of them, each priced once if it holds an
// i of the step (rd, rhvd: bit k of i clear; binomial: i < k). The same
// pairs as pricing every (i, i+k), so the same maximum, in O(len(runs))
// a step instead of O(nodes).
//
// Once the steps priced so far add up to bound or more, it returns their
// sum: a step costs at least 0, and adding a number ≥ 0 never lowers a
// floating-point sum, so the cost is then at least that sum, at least
// bound (+Inf: the cost).
func (m *mishra) costRuns(runs []rankRun, comm bool, pattern string, bound float64) float64 {
	rc := slices.Grow(m.runC[:0], len(runs))
	n := 0
	for _, r := range runs {
		n += r.n
		if comm {
			m.extra[r.leaf] += r.n
		}
	}
	if n < 2 {
		if comm {
			for _, r := range runs {
				m.extra[r.leaf] = 0
			}
		}
		return 0
	}
	end := 0
	for _, r := range runs {
		end += r.n
		c := m.commCnt[r.leaf] + m.extra[r.leaf]
		rc = append(rc, runCost{leaf: r.leaf, comm: c, size: m.size[r.leaf], end: end, c: float64(c) / float64(m.size[r.leaf])})
	}
	m.runC = rc
	if comm {
		for _, r := range runs {
			m.extra[r.leaf] = 0
		}
	}
	pair := func(a, b *runCost) float64 {
		if a.leaf == b.leaf {
			return 2 * (1 + a.c)
		}
		c3 := float64(a.comm+b.comm) / float64(a.size+b.size)
		return float64(2*m.lcaLevel(a.leaf, b.leaf)) * (1 + a.c + b.c + c3/2)
	}
	// top bounds every pair's cost, so a step that reaches it is done:
	// with cmax the largest contention factor of the runs, c3 ≤ cmax too
	// (it is the mediant of two of them), and the lowest common switch of
	// any two runs is at most the highest of consecutive runs' (levels of
	// lowest common switches are an ultrametric on leaves). Floating-point
	// sums and products round monotonically, so the bound, computed in the
	// same order, holds for the computed costs as well.
	var cmax float64
	lmax := 0
	for j := range rc {
		cmax = max(cmax, rc[j].c)
		if j > 0 && rc[j].leaf != rc[j-1].leaf {
			lmax = max(lmax, m.lcaLevel(rc[j-1].leaf, rc[j].leaf))
		}
	}
	top := 2 * (1 + cmax)
	if lmax > 0 {
		top = max(top, float64(2*lmax)*(1+cmax+cmax+cmax/2))
	}
	binomial := pattern == model.PatternBinomial
	var total float64
	for k := 1; k < n; k <<= 1 {
		var step float64
		lim := n - k // the pairs (i, i+k) with i < lim
		if binomial {
			lim = min(k, n-k)
		}
		a, b := 0, 0 // the runs of ranks i and i+k
		for i := 0; i < lim; {
			if !binomial && i&k != 0 {
				i = (i | (k - 1)) + 1 // the next multiple of 2k
				continue
			}
			for rc[a].end <= i {
				a++
			}
			for rc[b].end <= i+k {
				b++
			}
			if step = max(step, pair(&rc[a], &rc[b])); step >= top {
				break
			}
			i = min(rc[a].end, rc[b].end-k)
		}
		if total += step; total >= bound {
			break
		}
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
