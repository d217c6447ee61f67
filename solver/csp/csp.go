package csp

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	enc "github.com/optsched/optsched/encode/csp"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// DefaultMaxCells bounds the exact dynamic program: positions × multiset
// states, 8 bytes a cell (a cost: the choices are recovered from the
// costs; 4 bytes when the prices allow int32 tables), so at most 64 MB.
const DefaultMaxCells = 8_000_000

// Solver solves window problems on the CSP graph.
type Solver struct {
	// MaxCells bounds the exact DP table; 0 means DefaultMaxCells. Larger
	// problems use the Lagrangian relaxation and the ordered-DP heuristic.
	MaxCells int
	// Progress, when set, receives a line per improved incumbent or bound.
	Progress io.Writer
	// mode, for tests, forces a path: modeGeneral no single-job shortcut,
	// modeWraps the wrap DPs, modeRotations the rotations wherever they
	// apply (see exact).
	mode int
	// priceAll, for tests, turns the lazy trivial path off (lazyTrivial):
	// every block is priced, as before it.
	priceAll bool
}

const (
	modeAuto = iota
	modeGeneral
	modeWraps
	modeRotations
)

var _ solver.Solver = Solver{}

// Name returns "csp".
func (Solver) Name() string { return "csp" }

const inf = math.MaxInt64 / 4

// search holds one solve's state.
type search struct {
	g    *enc.Graph
	nq   int
	eps  []int   // ε per size index
	minc []int64 // cheapest block per size
	// triv is Σ_s ε_s · minc[s], the trivial bound.
	triv int64
	// cost32 are the block prices as int32 when the DP tables can be
	// narrow (narrowCosts), else nil.
	cost32   [][]int32
	narrowed bool    // narrowCosts has run
	best     int64   // incumbent cost
	starts   [][]int // incumbent starts per size
	bound    float64 // best proven lower bound
	progress io.Writer
	// ctx stops the search's own loops (greedy placement), and pub
	// receives every incumbent and bound (solver.Problem.Publisher).
	ctx   context.Context
	pub   solver.Publisher
	t0    time.Time
	stats *solver.CSPStats
	mode  int // Solver.mode
	// tables are the DP tables made (newTable), given back at the end.
	tables []*table
	seg    segScratch // segmentDP's reusable tables
	res    resScratch // residualDP's reusable tables
}

// resScratch holds residualDP's tables between calls.
type resScratch struct {
	F             []int64
	ch            []int8
	pos, runStart []int
}

// Solve finds an optimal placement, or the best it can within ctx's
// deadline with a lower bound. It always returns an allocation: the
// sequential placement is the first incumbent.
func (s Solver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	if len(p.Jobs) == 1 && s.Progress == nil && s.mode == modeAuto {
		if res, ok := s.single(ctx, p); ok {
			return res, nil
		}
	}
	lazy := s.Progress == nil && s.mode == modeAuto && !s.priceAll
	if lazy {
		if res, ok := s.lazyTrivial(ctx, p); ok {
			return res, nil
		}
	}
	st, err := newSearchContext(ctx, p, s.Progress)
	if err != nil && ctx.Err() != nil {
		// Interrupted while building the graph: the sequential placement,
		// priced without it, is the answer.
		return seqResult(p), nil
	}
	if err != nil {
		return nil, err
	}
	g := st.g
	st.mode = s.mode
	st.stats.LazyFellBack = lazy
	// Nothing of the graph outlives the solve: the allocations copy
	// their nodes, and the board builds them while the solve runs.
	defer g.Release()
	defer st.releaseTables()

	maxCells := s.maxCells()
	states := countStates(st.eps, maxCells)
	cells := states * (st.nq + 1)
	st.stats.States = states
	proven := false
	if float64(st.best) <= math.Ceil(st.bound-1e-9) {
		// The greedy placement put every job on a cheapest block of its
		// size: the trivial bound proves it (common on a mostly idle
		// cluster, where the exact program would be largest).
		st.stats.Method = "trivial"
		proven = true
	} else if states <= maxCells && cells <= maxCells && cells > 0 {
		st.stats.Method = "dp"
		proven = st.exact(ctx, states)
	} else {
		st.stats.Method = "lagrange"
		proven = st.lagrange(ctx)
	}
	allocs, err := g.Allocate(st.starts)
	if err != nil {
		return nil, fmt.Errorf("csp: %w", err)
	}
	res := &solver.Result{Status: solver.Feasible, Allocations: allocs, Objective: st.best,
		Bound: st.bound, Encoding: "csp", Solver: "csp", Stats: solver.Stats{CSP: st.stats}}
	if proven || float64(st.best) <= math.Ceil(st.bound-1e-9) {
		res.Status, res.Bound = solver.Optimal, float64(st.best)
	}
	st.stats.ElapsedMS = float64(time.Since(st.t0).Microseconds()) / 1000
	return res, nil
}

// maxCells is s.MaxCells, or DefaultMaxCells when that is 0.
func (s Solver) maxCells() int {
	if s.MaxCells <= 0 {
		return DefaultMaxCells
	}
	return s.MaxCells
}

// countStates is the size of the DP's state space, Π_s (ε_s + 1), its
// product stopped once past maxCells.
func countStates(eps []int, maxCells int) int {
	states := 1
	for _, e := range eps {
		if states > maxCells {
			break
		}
		states *= e + 1
	}
	return states
}

// newSearch is newSearchContext without a deadline.
func newSearch(p *solver.Problem, progress io.Writer) (*search, error) {
	return newSearchContext(context.Background(), p, progress)
}

// newSearchContext builds p's CSP graph and a search on it with the
// trivial bound and the sequential and greedy placements as incumbents.
// The graph's construction stops with ctx's error; the greedy placement is
// skipped when ctx ends first.
func newSearchContext(ctx context.Context, p *solver.Problem, progress io.Writer) (*search, error) {
	g, err := enc.BuildContext(ctx, p.Window, p.Jobs)
	if err != nil {
		return nil, err
	}
	st := &search{g: g, nq: g.NumVertices(), eps: g.Counts(), best: inf, progress: progress,
		ctx: ctx, pub: p.Publish(), t0: time.Now(), stats: &solver.CSPStats{}}
	st.minc = make([]int64, len(g.Sizes))
	for sz := range g.Sizes {
		m := int64(inf)
		for _, c := range g.Cost[sz] {
			m = min(m, c)
		}
		st.minc[sz] = m
	}
	// Trivial bound: every job costs at least its size's cheapest block.
	var triv int64
	for sz, e := range st.eps {
		triv += int64(e) * st.minc[sz]
	}
	st.triv = triv
	// Published at once, so that a solve abandoned at its deadline (a
	// loaded machine, a 10 ms limit) still answers with a bound.
	st.raise(float64(triv), "every job at its size's cheapest block")
	st.seqIncumbent(p)
	st.greedy()
	return st, nil
}

// seqResult is the sequential placement of p (job k on positions
// Σ_{l<k} n_l … of Q) as a feasible result, built without the graph, with
// the weak bound of 1 a job.
func seqResult(p *solver.Problem) *solver.Result {
	w := p.Window
	allocs := make([]model.Allocation, 0, len(p.Jobs))
	at := 0
	for _, j := range p.Jobs {
		n := w.Jobs[j].Nodes
		if at+n > len(w.Idle) {
			return &solver.Result{Status: solver.Unknown, Bound: solver.NoBound, Encoding: "csp", Solver: "csp"}
		}
		allocs = append(allocs, model.Allocation{Job: j, Start: w.Time, Nodes: slices.Clone(w.Idle[at : at+n])})
		at += n
	}
	// The bound: every job costs at least 1 (model.CostModel.FromHops).
	return &solver.Result{Status: solver.Feasible, Allocations: allocs, Objective: solver.Objective(w, allocs),
		Bound: float64(len(p.Jobs)), Encoding: "csp", Solver: "csp", Stats: solver.Stats{CSP: &solver.CSPStats{InterruptedBuilding: true}}}
}

// seqIncumbent sets the sequential placement (job k at Σ_{l<k} n_l) as
// the first incumbent.
func (st *search) seqIncumbent(p *solver.Problem) {
	g := st.g
	starts := make([][]int, len(g.Sizes))
	pos := 0
	for _, j := range p.Jobs {
		n := p.Window.Jobs[j].Nodes
		for sz, r := range g.Sizes {
			if r == n {
				starts[sz] = append(starts[sz], pos)
			}
		}
		pos += n
	}
	st.offer(starts, "seq")
}

// offer makes starts the incumbent if it is cheaper.
func (st *search) offer(starts [][]int, how string) bool {
	c := st.g.Objective(starts)
	if c >= st.best {
		return false
	}
	st.best = c
	st.starts = make([][]int, len(starts))
	for i := range starts {
		st.starts[i] = append([]int(nil), starts[i]...)
	}
	st.pub.Offer(c, "csp", nil, func() []model.Allocation {
		allocs, err := st.g.Allocate(st.starts)
		if err != nil {
			return nil
		}
		return allocs
	})
	st.log("incumbent %d (%s)", c, how)
	return true
}

// raise records a better lower bound.
func (st *search) raise(b float64, how string) {
	if b > st.bound {
		st.bound = b
		st.pub.Raise(b)
		st.log("bound %.1f (%s)", b, how)
	}
}

func (st *search) log(format string, args ...any) {
	if st.progress == nil {
		return
	}
	gap := "-"
	if st.best < inf && st.best > 0 {
		gap = fmt.Sprintf("%.3f%%", 100*max(0, float64(st.best)-st.bound)/float64(st.best))
	}
	fmt.Fprintf(st.progress, "csp %8.3f ms  %s  [incumbent %d, bound %.1f, gap %s]\n",
		float64(time.Since(st.t0).Microseconds())/1000, fmt.Sprintf(format, args...), st.best, st.bound, gap)
}
