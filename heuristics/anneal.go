package heuristics

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Anneal is simulated annealing on the dynamic continuity strategy (DCAS),
// Algorithm 1 of [Lan23] with the parameters of its Table I as defaults.
//
// A solution gives each job a set of nodes. Under DCAS a job placed on the
// current idle sequence — the idle nodes not held by the jobs already
// placed — takes the n_j nodes that follow its start in that sequence,
// wrapping to its head. The initial solution is Seq. A move removes a
// random number in [1, Destroy] of jobs and reinserts them one by one in
// window order, each from a start drawn uniformly among the first Q
// positions of the current idle sequence. A move that costs Δ more is
// accepted with probability exp(−Δ/T) (Metropolis), with
//
//	T(t) = Tmax · exp(−ln(Tmax/Tmin) · t / Steps),   t = 0 … Steps−1.
//
// A rejected move restores the previous solution. With PaperCompat the
// rejected neighbour is kept instead, as in the published code of [Lan23]
// (its SA is then a random walk that remembers the best solution visited);
// use it only to reproduce the paper. Only the moved jobs are re-priced.
// Anneal is deterministic for a Seed and never returns a solution worse
// than its initial one.
type Anneal struct {
	// Tmax and Tmin are the first and last temperatures (2500 and 2.5).
	Tmax, Tmin float64
	// Steps is t_max, the number of moves (500; SA-1000 uses 1000).
	Steps int
	// Destroy is n^D, the most jobs a move removes (2).
	Destroy int
	// Q is q, how many first positions of the idle sequence a reinserted
	// job may start from (100).
	Q int
	// Seed seeds the random source.
	Seed uint64
	// PaperCompat keeps rejected neighbours, as the published code does.
	PaperCompat bool
	// Initial, when set, is the starting solution instead of Seq (a warm
	// start from another solver's incumbent); it must place the problem's
	// jobs feasibly on idle nodes.
	Initial []model.Allocation
	// Repair, when set, chooses each reinserted job's start in place of
	// the uniform draw among the first Q positions (the learned repair of
	// NSA, heuristics/nsa). Everything else is unchanged.
	Repair StartChooser
	// LargestFirst reinserts the moved jobs largest first (ties in window
	// order) instead of in window order, as NSA's repair does ([Lan23]
	// §V-B).
	LargestFirst bool
}

// A RepairStep is what a StartChooser is shown when one moved job is
// reinserted: the current idle sequence and the job.
type RepairStep struct {
	// Window is the window being solved.
	Window *model.Window
	// Free lists the current idle sequence as positions into Window.Idle,
	// in order (shared; do not modify).
	Free []int
	// Size is n_j, the node count of the job being reinserted.
	Size int
	// Pending are the node counts of the moved jobs still to reinsert
	// after this one (shared; do not modify).
	Pending []int
	// Starts is how many first positions of Free the start may take:
	// min(Q, len(Free)).
	Starts int
	// Rand is the annealer's random source.
	Rand *rand.Rand
}

// A StartChooser picks the start of a reinserted job: a position in
// [0, s.Starts) of s.Free. It is called from one goroutine per Solve.
type StartChooser interface {
	ChooseStart(s *RepairStep) int
}

// DefaultAnneal returns the parameters of [Lan23] Table I.
func DefaultAnneal() Anneal {
	return Anneal{Tmax: 2500, Tmin: 2.5, Steps: 500, Destroy: 2, Q: 100, Seed: 1}
}

var _ solver.Solver = Anneal{}

// Name returns "sa".
func (Anneal) Name() string { return "sa" }

// WithInitial returns a copy of a that starts from allocs (the
// solver.WarmStarter interface).
func (a Anneal) WithInitial(allocs []model.Allocation) solver.Solver {
	a.Initial = allocs
	return a
}

var _ solver.WarmStarter = Anneal{}

// annealState is a solution: which job holds each position of Q.
type annealState struct {
	owner []int   // owner[i]: index into jobs holding position i, or -1
	nodes [][]int // nodes[k]: positions held by job k, in the order taken
	cost  []int64 // cost[k]: CH cost of job k
	total int64
}

func (s *annealState) clone() *annealState {
	c := &annealState{owner: append([]int(nil), s.owner...), cost: append([]int64(nil), s.cost...), total: s.total}
	c.nodes = make([][]int, len(s.nodes))
	for k := range s.nodes {
		c.nodes[k] = append([]int(nil), s.nodes[k]...)
	}
	return c
}

// Solve anneals from Seq (or Initial). It checks ctx between moves and
// always returns the best solution seen, with Status Feasible.
func (a Anneal) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	if a.Steps < 0 || a.Destroy < 1 || a.Q < 1 || a.Tmax <= 0 || a.Tmin <= 0 || a.Tmin > a.Tmax {
		return nil, fmt.Errorf("sa: bad parameters (need steps ≥ 0, destroy ≥ 1, q ≥ 1, 0 < tmin ≤ tmax): %+v", a)
	}
	if err := checkFits("sa", p); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// No time for a move: the initial solution, without building the
		// annealer's state (tens of milliseconds on 47,000 jobs).
		return a.initialOnly(p)
	}
	r := &annealRun{a: a, p: p, w: p.Window, q: p.Window.Idle}
	if ok, err := r.start(ctx); err != nil || !ok {
		if err != nil {
			return nil, err
		}
		return a.initialOnly(p)
	}
	n := len(p.Jobs)
	for t := 0; t < a.Steps && n > 0; t++ {
		// A move costs O(|Q|) (the repair rebuilds the idle sequence):
		// on a long sequence the deadline is looked at before every one.
		if (t&15 == 0 || len(r.q) > 4096) && ctx.Err() != nil {
			break
		}
		if err := r.move(t); err != nil {
			return nil, err
		}
	}
	return r.result(), nil
}

// annealRun is one run of Anneal.Solve: the problem, the current and best
// solutions, the random source and the buffers the moves reuse.
type annealRun struct {
	a    Anneal
	p    *solver.Problem
	w    *model.Window
	q    []int
	ids  []int
	cur  *annealState
	best *annealState
	rng  *rand.Rand
	free []int
	// need is the jobs' nodes in all: while the moved jobs from moved[mi]
	// on are out, len(q) − need + their sizes positions are free.
	need           int
	moved, pending []int
	saved          [][]int
	savedCost      []int64
	stats          solver.AnnealStats
}

// price is a job's price from its positions: model's Cost counts each run
// of nodes on one leaf switch at once (the positions a job takes are
// consecutive free ones, so its ids come in runs).
func (r *annealRun) price(positions []int) int64 {
	if len(positions) <= 1 {
		return 1
	}
	r.ids = r.ids[:0]
	for _, i := range positions {
		r.ids = append(r.ids, r.q[i])
	}
	return r.w.Cost.Cost(r.w.Topology, r.ids)
}

// start builds the initial solution (Initial, or Seq's: the jobs in
// window order along Q) and the run's state; false when the deadline
// passed meanwhile.
func (r *annealRun) start(ctx context.Context) (bool, error) {
	a, p, w, q := r.a, r.p, r.w, r.q
	n := len(p.Jobs)
	cur := &annealState{owner: make([]int, len(q)), nodes: make([][]int, n), cost: make([]int64, n)}
	for i := range cur.owner {
		cur.owner[i] = -1
	}
	if a.Initial != nil {
		// pos[id] is node id's position in Q, or -1.
		pos := make([]int32, w.Topology.NumNodes())
		for i := range pos {
			pos[i] = -1
		}
		for i, id := range q {
			pos[id] = int32(i)
		}
		if err := a.load(cur, p, pos); err != nil {
			return false, err
		}
		if ctx.Err() != nil {
			return false, nil
		}
	} else {
		at := 0
		for k, j := range p.Jobs {
			for range w.Jobs[j].Nodes {
				cur.owner[at] = k
				cur.nodes[k] = append(cur.nodes[k], at)
				at++
			}
		}
	}
	for k := range cur.nodes {
		// Setting up is O(|Q| + Σ n_j): on 47,000 jobs over 300,000
		// idle nodes, tens of milliseconds; the deadline may pass here.
		if k&1023 == 1023 && ctx.Err() != nil {
			return false, nil
		}
		cur.cost[k] = r.price(cur.nodes[k])
		cur.total += cur.cost[k]
	}
	if ctx.Err() != nil {
		return false, nil
	}
	r.cur, r.best = cur, cur.clone()
	r.rng = rand.New(rand.NewPCG(a.Seed, a.Seed^0xa0761d6478bd642f))
	r.free = make([]int, 0, len(q))
	for _, j := range p.Jobs {
		r.need += w.Jobs[j].Nodes
	}
	r.saved = make([][]int, n)
	r.savedCost = make([]int64, n)
	return true, nil
}

// move is step t of the annealing: destroy 1..Destroy random jobs,
// repair them, then keep the result by the Metropolis rule or restore the
// previous solution.
func (r *annealRun) move(t int) error {
	a, p, w, cur := r.a, r.p, r.w, r.cur
	n := len(p.Jobs)
	r.stats.Steps++
	T := a.Tmax * math.Exp(-math.Log(a.Tmax/a.Tmin)*float64(t)/float64(a.Steps))
	// Destroy: remove 1..Destroy distinct random jobs.
	m := 1 + r.rng.IntN(min(a.Destroy, n))
	r.moved = r.moved[:0]
	for _, k := range r.rng.Perm(n)[:m] {
		r.moved = append(r.moved, k)
	}
	slices.Sort(r.moved) // reinsert in window order
	if a.LargestFirst {
		slices.SortStableFunc(r.moved, func(x, y int) int {
			return w.Jobs[p.Jobs[y]].Nodes - w.Jobs[p.Jobs[x]].Nodes
		})
	}
	old := cur.total
	for _, k := range r.moved {
		r.saved[k] = append(r.saved[k][:0], cur.nodes[k]...)
		r.savedCost[k] = cur.cost[k]
		for _, i := range cur.nodes[k] {
			cur.owner[i] = -1
		}
		cur.total -= cur.cost[k]
	}
	for mi, k := range r.moved {
		if err := r.repair(mi, k); err != nil {
			return err
		}
	}
	delta := cur.total - old
	accept := delta <= 0 || r.rng.Float64() < math.Exp(-float64(delta)/T)
	if cur.total < r.best.total {
		r.best = cur.clone()
		r.stats.Improvements++
	}
	if accept || a.PaperCompat {
		r.stats.Accepted++
		return nil
	}
	// Restore the previous solution.
	for _, k := range r.moved {
		for _, i := range cur.nodes[k] {
			cur.owner[i] = -1
		}
	}
	for _, k := range r.moved {
		cur.nodes[k] = append(cur.nodes[k][:0], r.saved[k]...)
		for _, i := range r.saved[k] {
			cur.owner[i] = k
		}
		cur.cost[k] = r.savedCost[k]
	}
	cur.total = old
	return nil
}

// repair reinserts moved job k (moved[mi]): it takes n_k nodes of the
// current idle sequence from a start among its first Q positions,
// wrapping; the start is random, or the Repair policy's choice.
func (r *annealRun) repair(mi, k int) error {
	a, p, w, cur := r.a, r.p, r.w, r.cur
	nfree := len(r.q) - r.need
	for _, k2 := range r.moved[mi:] {
		nfree += w.Jobs[p.Jobs[k2]].Nodes
	}
	size := w.Jobs[p.Jobs[k]].Nodes
	var u int
	if a.Repair == nil {
		u = r.rng.IntN(min(a.Q, nfree))
		// Only the free positions up to the block's end are read, unless
		// it wraps round the end of the sequence.
		upto := nfree
		if u+size <= nfree {
			upto = u + size
		}
		r.free = appendFree(r.free[:0], cur.owner, upto)
	} else {
		r.free = appendFree(r.free[:0], cur.owner, nfree)
		r.pending = r.pending[:0]
		for _, k2 := range r.moved[mi+1:] {
			r.pending = append(r.pending, w.Jobs[p.Jobs[k2]].Nodes)
		}
		step := RepairStep{Window: w, Free: r.free, Size: size, Pending: r.pending, Starts: min(a.Q, len(r.free)), Rand: r.rng}
		u = a.Repair.ChooseStart(&step)
		if u < 0 || u >= step.Starts {
			return fmt.Errorf("sa: the repair chose start %d outside [0, %d)", u, step.Starts)
		}
	}
	cur.nodes[k] = cur.nodes[k][:0]
	for d := 0; d < size; d++ {
		i := r.free[(u+d)%nfree]
		cur.owner[i] = k
		cur.nodes[k] = append(cur.nodes[k], i)
	}
	cur.cost[k] = r.price(cur.nodes[k])
	cur.total += cur.cost[k]
	return nil
}

// result is the best solution seen, as the answer.
func (r *annealRun) result() *solver.Result {
	stats := r.stats
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "dcas", Solver: "sa",
		Objective: r.best.total, Stats: solver.Stats{Anneal: &stats}}
	for k, j := range r.p.Jobs {
		nodes := make([]int, len(r.best.nodes[k]))
		for d, i := range r.best.nodes[k] {
			nodes[d] = r.q[i]
		}
		res.Allocations = append(res.Allocations, model.Allocation{Job: j, Nodes: nodes, Start: r.w.Time})
	}
	return res
}

// appendFree appends to free the first upto positions of owner that no
// job holds (owner −1), in order.
func appendFree(free, owner []int, upto int) []int {
	for i, o := range owner {
		if len(free) == upto {
			break
		}
		if o < 0 {
			free = append(free, i)
		}
	}
	return free
}

// initialOnly returns the initial solution (Initial, or Seq) as the
// answer, with zero steps; Initial is checked as load checks it.
func (a Anneal) initialOnly(p *solver.Problem) (*solver.Result, error) {
	w := p.Window
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "dcas", Solver: "sa",
		Stats: solver.Stats{Anneal: &solver.AnnealStats{}}}
	if a.Initial == nil {
		seq, err := Seq{}.Solve(context.Background(), p)
		if err != nil {
			return nil, err
		}
		res.Allocations, res.Objective = seq.Allocations, seq.Objective
		return res, nil
	}
	want := make([]bool, len(w.Jobs))
	for _, j := range p.Jobs {
		want[j] = true
	}
	free := make([]bool, w.Topology.NumNodes()) // free[id]: idle and not taken yet
	for _, id := range w.Idle {
		free[id] = true
	}
	for _, al := range a.Initial {
		if al.Job < 0 || al.Job >= len(want) || !want[al.Job] || len(al.Nodes) != w.Jobs[al.Job].Nodes {
			return nil, fmt.Errorf("sa: the initial solution does not match the problem (job index %d)", al.Job)
		}
		want[al.Job] = false
		for _, id := range al.Nodes {
			if id < 0 || id >= len(free) || !free[id] {
				return nil, fmt.Errorf("sa: the initial solution uses node %d, which is not idle or used twice", id)
			}
			free[id] = false
		}
		res.Allocations = append(res.Allocations, model.Allocation{Job: al.Job, Nodes: slices.Clone(al.Nodes), Start: w.Time})
	}
	if len(res.Allocations) != len(p.Jobs) {
		return nil, fmt.Errorf("sa: the initial solution places %d of %d jobs", len(res.Allocations), len(p.Jobs))
	}
	res.Objective = solver.Objective(w, res.Allocations)
	return res, nil
}

// load sets cur from a.Initial, checking that it places exactly the
// problem's jobs on distinct idle nodes.
func (a Anneal) load(cur *annealState, p *solver.Problem, pos []int32) error {
	index := make(map[int]int, len(p.Jobs))
	for k, j := range p.Jobs {
		index[j] = k
	}
	seen := 0
	for _, al := range a.Initial {
		k, ok := index[al.Job]
		if !ok || cur.nodes[k] != nil || len(al.Nodes) != p.Window.Jobs[al.Job].Nodes {
			return fmt.Errorf("sa: the initial solution does not match the problem (job index %d)", al.Job)
		}
		for _, id := range al.Nodes {
			if id < 0 || id >= len(pos) || pos[id] < 0 || cur.owner[pos[id]] >= 0 {
				return fmt.Errorf("sa: the initial solution uses node %d, which is not idle or used twice", id)
			}
			i := int(pos[id])
			cur.owner[i] = k
			cur.nodes[k] = append(cur.nodes[k], i)
		}
		seen++
	}
	if seen != len(p.Jobs) {
		return fmt.Errorf("sa: the initial solution places %d of %d jobs", seen, len(p.Jobs))
	}
	return nil
}
