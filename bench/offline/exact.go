package offline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// MaxExactJobs is the largest sequence Exact accepts (its search keeps the
// placed jobs in a 64-bit set).
const MaxExactJobs = 64

// ErrTooManyJobs is returned by Exact for a sequence longer than its cap.
var ErrTooManyJobs = errors.New("offline: too many jobs for Exact")

// ExactOptions tunes Exact. The zero value is the default.
type ExactOptions struct {
	// MaxJobs caps the sequence length (default and at most MaxExactJobs).
	MaxJobs int
	// MaxNodes caps the search nodes (0: no cap). With it the search is
	// deterministic, whatever the machine's speed.
	MaxNodes int64
	// Bound tunes the root's Lagrangian bound (default: 200 iterations).
	Bound BoundOptions
}

// ExactResult is what Exact returns.
type ExactResult struct {
	// Value is the sum of bounded slowdowns of Starts, the best schedule
	// found; Bound a lower bound on the optimum. When Proven, Value is the
	// optimum, up to a relative 1e-9 (Value − Bound ≤ 1e-9·Value).
	Value, Bound float64
	Proven       bool
	Starts       []int64
	// Nodes is the number of search nodes expanded.
	Nodes int64
	// RootBound is the root's bound (the Lagrangian of Bound or the sum of
	// the jobs' bsld at their earliest fits, whichever is larger).
	RootBound float64
}

// Exact finds a schedule of jobs on a cluster of nodes nodes that minimises
// the sum of bounded slowdowns, by depth-first branch and bound over the
// job orders of the serial schedule-generation scheme, restricted to orders
// sorted by start time (see the package documentation for why this keeps
// an optimum, and for the node bound and the dominance rule). When ctx ends
// or MaxNodes is reached it returns the best schedule found, a valid bound
// and Proven = false. Invalid input and sequences longer than MaxJobs are
// errors.
func Exact(ctx context.Context, jobs []Job, nodes int, opt ExactOptions) (ExactResult, error) {
	if err := Validate(jobs, nodes); err != nil {
		return ExactResult{}, err
	}
	capJobs := opt.MaxJobs
	if capJobs <= 0 || capJobs > MaxExactJobs {
		capJobs = MaxExactJobs
	}
	if len(jobs) > capJobs {
		return ExactResult{}, fmt.Errorf("%w: %d jobs, at most %d", ErrTooManyJobs, len(jobs), capJobs)
	}
	bo := opt.Bound
	if bo.MaxIterations == 0 {
		bo.MaxIterations = 200
	}
	br, lg := bound(ctx, jobs, nodes, bo)
	if lg != nil && br.Method == Lagrangian {
		lg.useBest()
	} else {
		lg = nil
	}
	e := &search{ctx: ctx, jobs: jobs, nodes: nodes, maxNodes: opt.MaxNodes,
		inc: br.Upper, incStarts: br.Starts, cur: make([]int64, len(jobs)), lg: lg}
	if len(jobs) == 0 {
		return ExactResult{Starts: []int64{}, Proven: true}, nil
	}
	root := e.rootState()
	rootLB := math.Max(br.Value, root.lb)
	res := ExactResult{RootBound: rootLB}
	open := math.Inf(1)
	if rootLB < e.inc*(1-1e-9) {
		open = e.expand(root)
	}
	res.Value, res.Starts, res.Nodes = e.inc, e.incStarts, e.count
	// open is a bound on the part not searched; the searched part holds
	// nothing below the incumbent (up to the pruning tolerance).
	res.Bound = math.Max(rootLB, math.Min(open, e.inc*(1-1e-9)))
	res.Proven = !e.aborted
	if res.Proven {
		res.Bound = math.Max(rootLB, e.inc*(1-1e-9))
	}
	res.Bound = math.Min(res.Bound, res.Value)
	return res, nil
}

// search is the state of one Exact run.
type search struct {
	ctx       context.Context
	jobs      []Job
	nodes     int
	maxNodes  int64
	count     int64
	aborted   bool
	inc       float64
	incStarts []int64
	cur       []int64     // starts of the placed jobs on the current path
	lg        *lagrangian // the root's relaxation at its best multipliers, or nil
}

// state is a search node: the placed jobs, their profile, the last placed
// job and start, the placed jobs' bsld sum, and for every unplaced job its
// earliest fit ef (≥ last) in the profile.
type state struct {
	placed   uint64
	prof     profile
	last     int
	lastS    int64
	cost, lb float64
	ef       []int64 // indexed by job; meaningful for unplaced jobs
}

func (e *search) rootState() *state {
	st := &state{prof: newProfile(math.MinInt64, e.nodes), last: -1, lastS: math.MinInt64,
		ef: make([]int64, len(e.jobs))}
	for i, j := range e.jobs {
		st.ef[i] = j.Submit
		st.lb += BSLD(j, j.Submit)
	}
	return st
}

type child struct {
	j  int
	st *state
}

// expand searches the subtree of st and returns a lower bound on what it
// left unsearched (+Inf when it searched it all).
func (e *search) expand(st *state) float64 {
	e.count++
	if e.count&255 == 0 && e.ctx.Err() != nil || e.maxNodes > 0 && e.count > e.maxNodes {
		e.aborted = true
		return st.lb
	}
	n := len(e.jobs)
	var unplaced []int
	for i := range n {
		if st.placed&(1<<i) == 0 {
			unplaced = append(unplaced, i)
		}
	}
	if len(unplaced) == 0 {
		if st.cost < e.inc {
			e.inc = st.cost
			e.incStarts = slices.Clone(e.cur)
		}
		return math.Inf(1)
	}
	// The Lagrangian bound at the root's multipliers, on what the placed
	// jobs leave free.
	if e.lg != nil && len(unplaced) > 2 {
		if l := st.cost + e.lg.partial(st.placed, st.ef, st.prof); l > st.lb {
			st.lb = l
			if l >= e.inc*(1-1e-9) {
				return math.Inf(1)
			}
		}
	}
	// Dominance: a job j is not placed next if some unplaced i could run
	// wholly before j's earliest fit (ef_i + p_i ≤ ef_j, ef_i < ef_j).
	// minEnd[x] = min ef_i+p_i over the unplaced i with ef_i < x.
	byEF := slices.Clone(unplaced)
	slices.SortFunc(byEF, func(a, b int) int { return cmp.Compare(st.ef[a], st.ef[b]) })
	var kids []child
	minEnd := int64(math.MaxInt64)
	for k := 0; k < len(byEF); {
		// the group with equal ef sees only strictly smaller ones
		g := k
		for g < len(byEF) && st.ef[byEF[g]] == st.ef[byEF[k]] {
			g++
		}
		for _, j := range byEF[k:g] {
			ej := st.ef[j]
			if ej >= minEnd {
				continue
			}
			if ej == st.lastS && j < st.last {
				continue // ties are placed in index order
			}
			c := e.child(st, j)
			if c.lb < e.inc*(1-1e-9) {
				kids = append(kids, child{j, c})
			}
		}
		for _, i := range byEF[k:g] {
			minEnd = min(minEnd, st.ef[i]+e.jobs[i].Run)
		}
		k = g
	}
	slices.SortStableFunc(kids, func(a, b child) int {
		switch {
		case a.st.lb < b.st.lb:
			return -1
		case a.st.lb > b.st.lb:
			return 1
		}
		return 0
	})
	for x, c := range kids {
		if c.st.lb >= e.inc*(1-1e-9) {
			continue
		}
		e.cur[c.j] = st.ef[c.j]
		r := e.expand(c.st)
		if e.aborted {
			for _, d := range kids[x+1:] {
				r = math.Min(r, d.st.lb)
			}
			return r
		}
	}
	return math.Inf(1)
}

// child places job j at its earliest fit and computes the new earliest
// fits and bound: every unplaced job starts at or after its earliest fit
// in the new profile from j's start on (the profile only fills up, and
// starts along an order are non-decreasing).
func (e *search) child(st *state, j int) *state {
	s := st.ef[j]
	c := &state{placed: st.placed | 1<<j, prof: st.prof.clone(), last: j, lastS: s,
		ef: make([]int64, len(e.jobs))}
	c.prof.place(e.jobs[j].Nodes, s, e.jobs[j].Run)
	c.prof.trim(s)
	c.cost = st.cost + BSLD(e.jobs[j], s)
	c.lb = c.cost
	for i, job := range e.jobs {
		if c.placed&(1<<i) != 0 {
			continue
		}
		f := c.prof.fit(job.Nodes, job.Run, max(job.Submit, s))
		c.ef[i] = f
		c.lb += BSLD(job, f)
	}
	return c
}
