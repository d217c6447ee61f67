package free

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/encode/dcas"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
)

// Name is the solver's name on the command line and in results.
const Name = "free"

// DefaultSCASShare is the share of the time limit the SCAS optimum (the
// csp solver) may take before the free search starts from it.
const DefaultSCASShare = 0.7

// Solver solves the free (DCAS) problem exactly: see the package doc.
type Solver struct {
	// SCASShare is the share of the time left that the csp solver may
	// spend on the SCAS optimum, the first incumbent; 0 means
	// DefaultSCASShare, a negative value skips it (tests).
	SCASShare float64
	// MaxNodes stops the branch and bound after this many complete job
	// placements (0: no limit), so that tests can bound its work
	// whatever the machine's speed.
	MaxNodes int64
	// Progress, when set, receives one line per new incumbent.
	Progress io.Writer
}

var _ solver.Solver = Solver{}

// Name returns "free".
func (Solver) Name() string { return Name }

// Solve places the problem's jobs on any idle nodes, minimising the total
// CH cost. It starts from the SCAS optimum (csp), improves it by
// re-placing one job at a time at its best spot, and then proves the
// optimum by branch and bound; when the deadline or MaxNodes stops it, the
// result is Feasible with its root bound (every job alone, or the
// Lagrangian bound).
func (s Solver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	t0 := time.Now()
	w := p.Window
	t, err := dcas.NewTree(ctx, w)
	if err != nil {
		if ctx.Err() != nil {
			return &solver.Result{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "dcas", Solver: Name}, nil
		}
		return nil, fmt.Errorf("free: %w", err)
	}
	order := slices.Clone(p.Jobs)
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(w.Jobs[b].Nodes, w.Jobs[a].Nodes) })
	size := make([]int, len(order))
	need := 0
	for i, j := range order {
		if j < 0 || j >= len(w.Jobs) || w.Jobs[j].Nodes < 1 {
			return nil, fmt.Errorf("free: job index %d is not a job of the window with nodes", j)
		}
		size[i] = w.Jobs[j].Nodes
		need += size[i]
	}
	stats := &solver.FreeStats{}
	res := &solver.Result{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "dcas", Solver: Name, Stats: solver.Stats{Free: stats}}
	if need > t.Cap[0] {
		res.Status = solver.Infeasible
		return res, nil
	}
	board := p.Publish()
	board.Raise(float64(len(size))) // every job costs at least 1
	st := newSearch(ctx, t, w.Cost, size)
	st.limit = s.MaxNodes
	st.onBetter = func(obj int64, inc []dcas.LeafCounts) {
		board.Offer(obj, Name, nil, func() []model.Allocation {
			a, _ := t.Decode(order, inc) // nil on error: the final decode reports it
			return a
		})
		if s.Progress != nil {
			fmt.Fprintf(s.Progress, "free: %.1f ms: incumbent %d\n", float64(time.Since(t0).Microseconds())/1000, obj)
		}
	}

	// 1. The SCAS optimum, feasible for the free problem.
	if s.SCASShare >= 0 {
		share := s.SCASShare
		if share == 0 {
			share = DefaultSCASShare
		}
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if dl, ok := ctx.Deadline(); ok {
			cctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Duration(share*float64(time.Until(dl)))))
		}
		// csp's bound is the SCAS optimum's, above the free optimum: it
		// must not reach the publisher, which takes bounds of the free
		// problem.
		r, err := csp.Solver{}.Solve(cctx, p.WithPublisher(nil))
		cancel()
		if err != nil {
			return nil, fmt.Errorf("free: the SCAS start: %w", err)
		}
		if r.Status == solver.Optimal || r.Status == solver.Feasible {
			stats.SCASObjective = &r.Objective
			stats.SCASOptimal = r.Status == solver.Optimal
			res.Stats.CSP = r.Stats.CSP
			byJob := make(map[int][]int, len(r.Allocations))
			for _, a := range r.Allocations {
				byJob[a.Job] = a.Nodes
			}
			inc := make([]dcas.LeafCounts, len(order))
			var obj int64
			for i, j := range order {
				lc, err := t.Counts(w.Topology, byJob[j])
				if err != nil || lc.Len() != size[i] {
					return nil, fmt.Errorf("free: the SCAS start places job %s badly: %v", w.Jobs[j].ID, err)
				}
				inc[i] = lc
				obj += st.jobCost(size[i], lc)
			}
			st.offer(obj, inc)
		}
	}
	// 2. Re-place one job at a time, from the SCAS optimum and from the
	// greedy placement (each job at its best spot, largest first).
	if st.inc != nil {
		st.improve(st.inc)
	}
	if g := st.greedy(); g != nil {
		st.improve(g)
	}
	stats.LSObjective = st.best
	// 3. Lower bounds: every job alone, then the leaves' prices.
	st.sh.update(st.cap)
	lb := st.independent(0)
	if st.stopped {
		lb = int64(len(size)) // cut short: every job costs at least 1
	}
	board.Raise(float64(lb))
	if lb < st.best && ctx.Err() == nil {
		lg := newLagrange(t)
		end := time.Now().Add(time.Hour)
		if dl, ok := ctx.Deadline(); ok {
			end = time.Now().Add(time.Until(dl) / 2)
		}
		b := lg.ascend(w.Cost, size, st.cap, st.sh.kids, float64(st.best), maxAscent,
			func() bool { return ctx.Err() != nil || time.Now().After(end) })
		if !math.IsInf(b, -1) { // −∞: stopped before its first step
			stats.LagrangeBound = &b
			lb = max(lb, ceilBound(b))
			board.Raise(float64(lb))
		}
		if lg.ops(size, st.cap) <= maxLagOps {
			st.lg = lg
		}
	}
	stats.RootBound = lb
	res.Bound = float64(lb)
	// 4. Branch and bound. Only a search that ran to its end proves: a
	// deadline that came before it (in the improvement or the bounds)
	// leaves the incumbent unproven.
	if ctx.Err() == nil {
		st.run(0, 0)
	} else {
		st.stopped = true
	}
	stats.Nodes = st.nodes
	stats.ElapsedMS = float64(time.Since(t0).Microseconds()) / 1000
	if st.inc == nil {
		return res, nil // interrupted before any placement
	}
	if res.Allocations, err = t.Decode(order, st.inc); err != nil {
		return nil, fmt.Errorf("free: %w: %v", solver.ErrSolverBug, err)
	}
	res.Objective = st.best
	res.Status = solver.Feasible
	if !st.stopped || st.best <= lb {
		res.Status, res.Bound = solver.Optimal, float64(st.best)
		stats.Proven = true
	}
	board.Raise(res.Bound)
	return res, nil
}

// maxAscent bounds the subgradient iterations at the root; maxLagOps is
// the cost of a bound call (in (min,+) steps) up to which the branch and
// bound prices every node.
const (
	maxAscent = 500
	maxLagOps = 300_000
)

// greedy places the jobs in search order, each at its best spot on the
// capacities the earlier ones leave; nil when one does not fit or the
// deadline comes.
func (st *search) greedy() []dcas.LeafCounts {
	defer copy(st.cap, st.t.Cap)
	counts := make([]dcas.LeafCounts, len(st.size))
	var obj int64
	for i, n := range st.size {
		if st.ctx.Err() != nil {
			return nil
		}
		st.sh.update(st.cap)
		h := st.sh.best(n, st.cap)
		if h >= inf {
			return nil
		}
		st.sh.trace(n, 0, n, st.cap, &counts[i])
		st.apply(counts[i], +1)
		obj += st.cm.FromHops(n, h)
	}
	st.offer(obj, counts)
	return counts
}

// improve re-places one job at a time at its best spot given the others,
// while that lowers the total, from counts (a full placement); it offers
// every improvement.
func (st *search) improve(counts []dcas.LeafCounts) {
	defer copy(st.cap, st.t.Cap)
	counts = slices.Clone(counts)
	cost := make([]int64, len(counts))
	var obj int64
	for i, c := range counts {
		st.apply(c, +1)
		cost[i] = st.jobCost(st.size[i], c)
		obj += cost[i]
	}
	for pass := 0; pass < 100; pass++ {
		better := false
		for i, n := range st.size {
			if st.ctx.Err() != nil {
				return
			}
			st.apply(counts[i], -1)
			st.sh.update(st.cap)
			if h := st.sh.best(n, st.cap); h < inf {
				if c := st.cm.FromHops(n, h); c < cost[i] {
					var lc dcas.LeafCounts
					st.sh.trace(n, 0, n, st.cap, &lc)
					counts[i], obj, cost[i] = lc, obj-cost[i]+c, c
					better = true
					st.offer(obj, counts)
				}
			}
			st.apply(counts[i], +1)
		}
		if !better {
			return
		}
	}
}
