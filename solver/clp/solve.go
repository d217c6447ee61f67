//go:build cgo

package clp

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// integralTol is how far from 0 or 1 an LP value may be for the LP
// solution to count as integral.
const integralTol = 1e-6

// Solve builds the M_SCAS program of p in s.Formulation, solves its LP
// relaxation with LPBound under ctx, and returns the cheapest of these
// allocations, all feasible SCAS placements:
//
//   - the LP solution itself, decoded, when it is integral (and checked:
//     right number of blocks per size, no shared node);
//   - an LP-guided greedy: each job, in problem order, takes the free
//     block D(i, n_j) whose start variable has the largest LP value,
//     cheaper blocks first among equals; and the same greedy taking the
//     jobs largest first;
//   - a cost greedy: each job, in problem order, takes the cheapest free
//     block;
//   - the Seq layout (job k at position Σ_{l<k} n_l of Q, no wrap), which
//     always fits because the sizes sum to at most |Q|; it also stands in
//     when a greedy finds no free block for a late job.
//
// Block costs are integers, so the optimum is at least ⌈bound⌉: when the
// allocation's objective is at most ⌈bound⌉ (always so when the LP optimum
// is integral) the result is Optimal with Bound = Objective. Otherwise it
// is Feasible with Bound the LP bound, which is then below the objective.
// When the LP was stopped the bound is CLP's last Lagrangian bound (see
// LPBound), or NoBound if there is none; the allocation is still returned.
// An LP reported infeasible cannot be right (Build accepts only jobs that
// fit, and Seq fits), so Solve then returns the allocation with NoBound.
// When ctx is already done on entry, Solve builds nothing and returns the
// Seq layout with NoBound.
//
// Stats.LP (solver.LPStats): rows, cols, nonzeros of the program; lp_ms
// (wall time of the LP, matrix loading included); lp_status (CLP's
// problem status, −1 when CLP did not run or was abandoned at the
// deadline); lp_integral (whether the LP solution is integral);
// lp_objective and lp_dual_bound (CLP's objective value and the
// Lagrangian bound of its duals) when known. lanl/clp v1.2.0 does not
// expose CLP's iteration count, so iterations and nodes are null.
//
// It publishes (Problem.Publish) the chosen allocation and the bound when
// it returns: lanl/clp has no callback into CLP's iterations, so nothing
// is published while the LP runs (and an LP abandoned at the deadline
// leaves nothing published).
func (s Solver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	if ctx.Err() != nil {
		// No time to build the program (the paper form of a large window
		// takes a second): answer with Seq alone.
		return s.seqOnly(p)
	}
	enc, err := scas.Build(p.Window, p.Jobs, s.Formulation)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	l, err := newLP(&enc.Program)
	if err != nil {
		return nil, err // Build made a bad program: a bug
	}
	out := l.solve(ctx)
	lps := &solver.LPStats{Formulation: s.Formulation.String(), Rows: l.nrows, Cols: l.ncols, Nonzeros: l.nnz,
		Status: out.clpStatus, SolveMS: float64(time.Since(t0).Microseconds()) / 1000,
		Objective: finite(out.clpObjective), DualBound: finite(out.lagrangian)}
	res := &solver.Result{Status: solver.Feasible, Bound: solver.NoBound, Encoding: "scas", Solver: s.Name(),
		Stats: solver.Stats{LP: lps}}

	r := newRounder(enc, p)
	allocs, obj := r.best(out.x)
	isIntegral := integral(out.x)
	lps.Integral = &isIntegral
	res.Allocations, res.Objective = allocs, obj
	switch {
	case out.status == Infeasible || math.IsNaN(out.bound):
	case float64(obj) <= math.Ceil(out.bound):
		res.Status, res.Bound = solver.Optimal, float64(obj)
	default:
		// Here ⌈bound⌉ < obj, so the bound is below the objective as the
		// result contract demands; the min only guards the invariant.
		res.Bound = math.Min(out.bound, float64(obj))
	}
	pub := p.Publish()
	pub.Offer(obj, s.Name(), allocs, nil)
	pub.Raise(res.Bound)
	return res, nil
}

// finite returns a pointer to v, or nil when v is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// seqOnly answers p with the Seq layout, without a bound.
func (s Solver) seqOnly(p *solver.Problem) (*solver.Result, error) {
	w, need := p.Window, 0
	for _, j := range p.Jobs {
		if j < 0 || j >= len(w.Jobs) {
			return nil, fmt.Errorf("clp: job index %d out of range", j)
		}
		need += w.Jobs[j].Nodes
	}
	if need > len(w.Idle) {
		return nil, fmt.Errorf("clp: the jobs need %d nodes, %d are idle", need, len(w.Idle))
	}
	allocs := (&rounder{w: w, jobs: p.Jobs}).seq()
	obj := solver.Objective(w, allocs)
	p.Publish().Offer(obj, s.Name(), allocs, nil)
	return &solver.Result{Status: solver.Feasible, Allocations: allocs, Objective: obj,
		Bound: solver.NoBound, Encoding: "scas", Solver: s.Name(),
		Stats: solver.Stats{LP: &solver.LPStats{Formulation: s.Formulation.String(), Status: -1}}}, nil
}

// integral reports whether x is non-empty and every value is within
// integralTol of 0 or 1.
func integral(x []float64) bool {
	if len(x) == 0 {
		return false
	}
	for _, v := range x {
		if math.Abs(v-math.Round(v)) > integralTol || v < -integralTol || v > 1+integralTol {
			return false
		}
	}
	return true
}

// A rounder builds SCAS placements of a problem's jobs.
type rounder struct {
	enc  *scas.Encoding
	w    *model.Window
	jobs []int // the problem's jobs (indices into w.Jobs)
	size []int // size[k]: index into Blocks.Sizes of job k
	// yVar[k][i] is the program variable of the start of job k at
	// position i, or nil when the program's layout is not the one
	// expected (then the LP guides nothing).
	yVar [][]int
	nq   int
}

func newRounder(enc *scas.Encoding, p *solver.Problem) *rounder {
	b := enc.Blocks
	r := &rounder{enc: enc, w: p.Window, jobs: p.Jobs, nq: len(b.Q)}
	sizeIdx := make(map[int]int, len(b.Sizes))
	for s, n := range b.Sizes {
		sizeIdx[n] = s
	}
	r.size = make([]int, len(p.Jobs))
	for k, j := range p.Jobs {
		r.size[k] = sizeIdx[p.Window.Jobs[j].Nodes]
	}
	r.yVar = r.startVars()
	return r
}

// startVars maps each job's start positions to the program's variables,
// following the layout scas.Build documents by its variable names:
// Strong has y_r<size>_<i> at s·|Q| + i (size index s); Paper has, for the
// jx-th job in size-then-problem order, y_<jx>_<i> at 2·jx·|Q| + i
// followed by its x family. It returns nil if the program does not match
// (names or objective coefficients), so that a change in scas degrades
// the rounding to the cost greedy instead of misreading the LP.
func (r *rounder) startVars() [][]int {
	b, prog, nq := r.enc.Blocks, &r.enc.Program, r.nq
	// family[k] is the index of job k's y family and name its name.
	family := make([]int, len(r.jobs))
	name := func(f, i int) string { return "" }
	nvars := 0
	switch r.enc.Formulation {
	case scas.Strong:
		copy(family, r.size)
		name = func(f, i int) string { return "y_r" + strconv.Itoa(b.Sizes[f]) + "_" + strconv.Itoa(i) }
		nvars = len(b.Sizes) * nq
	case scas.Paper:
		jx := map[int]int{}
		for s := range b.Sizes {
			for _, j := range b.Jobs[s] {
				jx[j] = len(jx)
			}
		}
		for k, j := range r.jobs {
			family[k] = 2 * jx[j]
		}
		name = func(f, i int) string { return "y_" + strconv.Itoa(f/2) + "_" + strconv.Itoa(i) }
		nvars = 2 * len(r.jobs) * nq
	default:
		return nil
	}
	if prog.NumVars() != nvars || len(prog.Obj) != nvars {
		return nil
	}
	out := make([][]int, len(r.jobs))
	for k := range r.jobs {
		out[k] = make([]int, nq)
		for i := 0; i < nq; i++ {
			v := family[k]*nq + i
			if prog.VarNames[v] != name(family[k], i) || prog.Obj[v] != float64(b.Cost[r.size[k]][i]) {
				return nil
			}
			out[k][i] = v
		}
	}
	return out
}

// best returns the cheapest of the placements listed at Solver.Solve,
// with its objective. x may be nil (no LP values).
func (r *rounder) best(x []float64) ([]model.Allocation, int64) {
	type cand struct {
		allocs []model.Allocation
		obj    int64
	}
	var cands []cand
	add := func(a []model.Allocation) {
		if a != nil {
			cands = append(cands, cand{a, solver.Objective(r.w, a)})
		}
	}
	if integral(x) {
		// Decode and disjoint check the counts and the overlaps, so even
		// an integral point of a stopped solve is used only if feasible.
		if a, err := r.enc.Decode(x); err == nil && disjoint(a) {
			add(a)
		}
	}
	problemOrder := make([]int, len(r.jobs))
	for k := range problemOrder {
		problemOrder[k] = k
	}
	largestFirst := slices.Clone(problemOrder)
	slices.SortStableFunc(largestFirst, func(a, b int) int {
		return cmp.Compare(r.w.Jobs[r.jobs[b]].Nodes, r.w.Jobs[r.jobs[a]].Nodes)
	})
	if w := r.weights(x); w != nil {
		add(r.greedy(problemOrder, w))
		add(r.greedy(largestFirst, w))
	}
	add(r.greedy(problemOrder, nil))
	add(r.seq())
	i := 0
	for k := range cands {
		if cands[k].obj < cands[i].obj {
			i = k
		}
	}
	return cands[i].allocs, cands[i].obj
}

// weights returns the LP value of every start of every job, or nil.
func (r *rounder) weights(x []float64) [][]float64 {
	if r.yVar == nil || len(x) != r.enc.Program.NumVars() {
		return nil
	}
	w := make([][]float64, len(r.jobs))
	for k := range w {
		w[k] = make([]float64, r.nq)
		for i, v := range r.yVar[k] {
			w[k][i] = x[v]
		}
	}
	return w
}

// greedy places the jobs in the given order (indices into r.jobs), each
// on the free block with the largest weight (when wt is not nil), then the
// lowest cost, then the lowest start. It returns nil if a job finds no
// free block.
func (r *rounder) greedy(order []int, wt [][]float64) []model.Allocation {
	b, nq := r.enc.Blocks, r.nq
	used := make([]bool, nq)
	run := make([]int, 2*nq+1) // run[i]: free positions from i on, circularly
	starts := make([]int, len(r.jobs))
	for _, k := range order {
		s := r.size[k]
		n := b.Sizes[s]
		for i := 2*nq - 1; i >= 0; i-- {
			if used[i%nq] {
				run[i] = 0
			} else {
				run[i] = min(nq, run[i+1]+1)
			}
		}
		best := -1
		for i := 0; i < nq; i++ {
			if run[i] < n {
				continue
			}
			if best < 0 || better(wt, k, i, best, b.Cost[s]) {
				best = i
			}
		}
		if best < 0 {
			return nil
		}
		for d := 0; d < n; d++ {
			used[(best+d)%nq] = true
		}
		starts[k] = best
	}
	return r.allocate(starts)
}

// better reports whether start i beats start j for job k.
func better(wt [][]float64, k, i, j int, cost []int64) bool {
	if wt != nil {
		if d := wt[k][i] - wt[k][j]; math.Abs(d) > integralTol {
			return d > 0
		}
	}
	return cost[i] < cost[j] // then the lower start, which j already is
}

// seq places job k at position Σ_{l<k} n_l of Q.
func (r *rounder) seq() []model.Allocation {
	starts := make([]int, len(r.jobs))
	pos := 0
	for k, j := range r.jobs {
		starts[k] = pos
		pos += r.w.Jobs[j].Nodes
	}
	return r.allocate(starts)
}

func (r *rounder) allocate(starts []int) []model.Allocation {
	out := make([]model.Allocation, len(r.jobs))
	for k, j := range r.jobs {
		out[k] = model.Allocation{Job: j, Nodes: r.w.Block(starts[k], r.w.Jobs[j].Nodes), Start: r.w.Time}
	}
	return out
}

// disjoint reports whether no node appears in two allocations.
func disjoint(allocs []model.Allocation) bool {
	seen := map[int]bool{}
	for _, a := range allocs {
		for _, n := range a.Nodes {
			if seen[n] {
				return false
			}
			seen[n] = true
		}
	}
	return true
}
