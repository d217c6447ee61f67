package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/solver"
)

// censusSolver wraps the window solver and records every call: the
// window's size, the jobs placed, the path csp took and the time the call
// took (wall time, on whatever core it got).
type censusSolver struct {
	inner solver.Solver
	rows  []censusRow
	last  uint64
	// The previous call's idle list and sizes, and the sizes seen so far.
	prevIdle  []int
	prevSizes map[int]bool
	seen      map[int]bool
	// Pricing positions (sizes × |Q|) of all calls; of sizes priced in the
	// previous call; of sizes priced in any earlier call; of blocks whose
	// nodes are those of the previous call's block from the same node
	// (same size, no node from the block's first to its last changed).
	work, workPrev, workSeen, workReusable int64
	changed                                int64 // Σ |idle set Δ previous idle set|
	// One-job calls whose answer costs as much as n packed nodes (nodes
	// 0…n−1, a lower bound on a uniform layout), and Σ of the answer's
	// position in Q over |Q| for those (how far a scan stopping at the
	// bound would go).
	oneJob, oneAtBound int
	oneAtPos           float64
	oneAtPosAll        float64
	idleSum            int64
}

type censusRow struct {
	queue, idle, multi, running int
	path                        string
	took                        time.Duration
	same                        bool // same waiting jobs and idle set as the previous call
}

func (c *censusSolver) Name() string { return c.inner.Name() }

func (c *censusSolver) Solve(ctx context.Context, p *solver.Problem) (*solver.Result, error) {
	sum := uint64(14695981039346656037)
	mix := func(v uint64) { sum = (sum ^ v) * 1099511628211 }
	for _, j := range p.Window.Jobs {
		for i := 0; i < len(j.ID); i++ {
			mix(uint64(j.ID[i]))
		}
		mix(1 << 40)
	}
	mix(1 << 41)
	for _, k := range p.Window.Idle {
		mix(uint64(k))
	}
	c.reuse(p)
	t0 := time.Now()
	res, err := c.inner.Solve(ctx, p)
	took := time.Since(t0)
	if len(p.Jobs) == 1 && res != nil && len(res.Allocations) == 1 {
		n := p.Window.Jobs[p.Jobs[0]].Nodes
		packed := make([]int, n)
		for i := range packed {
			packed[i] = i
		}
		lb := p.Window.Cost.Cost(p.Window.Topology, packed)
		at, _ := slices.BinarySearch(p.Window.Idle, res.Allocations[0].Nodes[0])
		c.oneJob++
		pos := float64(at) / float64(len(p.Window.Idle))
		c.oneAtPosAll += pos
		if res.Objective == lb {
			c.oneAtBound++
			c.oneAtPos += pos
		}
		if res.Objective < lb {
			panic(fmt.Sprintf("one job of %d nodes at %d below the packed bound %d", n, res.Objective, lb))
		}
	}
	path := "?"
	if res != nil {
		st := res.Stats
		switch {
		case st.Portfolio != nil && st.Portfolio.FallbackObjective != nil:
			m := "none"
			if st.CSP != nil {
				m = st.CSP.Method
			}
			path = "sa-fallback(" + m + ")"
		case st.Portfolio != nil && st.Portfolio.ExactAbandoned:
			path = "abandoned"
		case st.CSP != nil && st.CSP.Single:
			path = "one-job"
		case st.CSP != nil && st.CSP.Lazy:
			path = "trivial (lazy)"
		case st.CSP != nil && st.CSP.LazyFellBack:
			path = st.CSP.Method + " (lazy tried)"
		case st.CSP != nil:
			path = st.CSP.Method
		}
	}
	c.rows = append(c.rows, censusRow{queue: len(p.Window.Jobs), idle: len(p.Window.Idle), multi: len(p.Jobs),
		running: len(p.Window.Running), path: path, took: took, same: sum == c.last})
	c.last = sum
	return res, err
}

// reuse counts how much of p's block pricing the previous call's prices
// could have answered.
func (c *censusSolver) reuse(p *solver.Problem) {
	if c.seen == nil {
		c.seen = map[int]bool{}
	}
	q := p.Window.Idle
	// The sorted symmetric difference of the idle sets.
	var diff []int
	a, b := c.prevIdle, q
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0] < b[0]:
			diff, a = append(diff, a[0]), a[1:]
		case len(a) == 0 || b[0] < a[0]:
			diff, b = append(diff, b[0]), b[1:]
		default:
			a, b = a[1:], b[1:]
		}
	}
	c.changed += int64(len(diff))
	c.idleSum += int64(len(q))
	sizes := map[int]bool{}
	for _, j := range p.Jobs {
		sizes[p.Window.Jobs[j].Nodes] = true
	}
	for r := range sizes {
		c.work += int64(len(q))
		if c.seen[r] {
			c.workSeen += int64(len(q))
		}
		if !c.prevSizes[r] {
			continue
		}
		c.workPrev += int64(len(q))
		k := 0
		for i := 0; i+r <= len(q); i++ {
			v, u := q[i], q[i+r-1]
			for k < len(diff) && diff[k] < v {
				k++
			}
			if k == len(diff) || diff[k] > u {
				c.workReusable++
			}
		}
	}
	for r := range sizes {
		c.seen[r] = true
	}
	c.prevSizes = sizes
	c.prevIdle = append(c.prevIdle[:0], q...)
}

// TestWindowCensus (run by hand: OPTSCHED_CENSUS=LOG) simulates LOG under
// the window policy at default settings with the solver wrapped, and
// prints where the windows and the solver's time go.
func TestWindowCensus(t *testing.T) {
	log := os.Getenv("OPTSCHED_CENSUS")
	if log == "" {
		t.Skip("OPTSCHED_CENSUS not set")
	}
	var out bytes.Buffer
	opts := simulateOpts(t, &out, "--trace", log, "--policy", "window")
	setup, err := opts.setup()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Open(opts.trace, opts.format, trace.Options{ProcsPerNode: opts.procsPerNode, SkipBad: opts.skipBad,
		MaxJobs: opts.maxTraceJobs, Strict: opts.strict, AllowEmpty: opts.allowEmpty})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sim.NewConfig(tr, setup)
	if err != nil {
		t.Fatal(err)
	}
	cs := &censusSolver{inner: cfg.Solver}
	cfg.Solver = cs
	t0 := time.Now()
	res, err := sim.Run(context.Background(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(t0)
	var b strings.Builder
	var windowTime time.Duration
	for _, d := range res.SolveTimes {
		windowTime += d
	}
	fmt.Fprintf(&b, "run %.1fs wall; windows solved %d, skipped %d; SolveWindow total %.1fs; solver calls %d (windows with no multi-node job: %d)\n",
		wall.Seconds(), res.Windows, res.Skipped, windowTime.Seconds(), len(cs.rows), res.Windows-len(cs.rows))
	type agg struct {
		n                  int
		took               time.Duration
		multi, idle, queue int
	}
	paths := map[string]*agg{}
	var total time.Duration
	same := 0
	for _, r := range cs.rows {
		a := paths[r.path]
		if a == nil {
			a = &agg{}
			paths[r.path] = a
		}
		a.n++
		a.took += r.took
		a.multi += r.multi
		a.idle += r.idle
		a.queue += r.queue
		total += r.took
		if r.same {
			same++
		}
	}
	fmt.Fprintf(&b, "solver total %.1fs; calls identical to the previous call (same jobs, same idle set): %d\n", total.Seconds(), same)
	fmt.Fprintf(&b, "pricing positions (sizes × |Q|) %d; of sizes priced in the previous call %.1f%%; of sizes priced in any earlier call %.1f%%; blocks the previous call priced with the same nodes %.1f%%; mean |idle Δ previous idle| %.0f of mean |Q| %.0f\n",
		cs.work, 100*float64(cs.workPrev)/float64(cs.work), 100*float64(cs.workSeen)/float64(cs.work), 100*float64(cs.workReusable)/float64(cs.work),
		float64(cs.changed)/float64(len(cs.rows)), float64(cs.idleSum)/float64(len(cs.rows)))
	fmt.Fprintf(&b, "one-job calls %d: answer at the packed bound %d (%.1f%%), their mean position in Q %.3f of |Q|; mean position of all answers %.3f\n",
		cs.oneJob, cs.oneAtBound, 100*float64(cs.oneAtBound)/float64(cs.oneJob), cs.oneAtPos/float64(max(1, cs.oneAtBound)), cs.oneAtPosAll/float64(cs.oneJob))
	names := make([]string, 0, len(paths))
	for k := range paths {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		a := paths[k]
		fmt.Fprintf(&b, "  %-24s %7d calls  %7.2fs (%5.1f%%)  mean %.3f ms  mean multi %.1f  idle %.0f  queue %.0f\n", k, a.n,
			a.took.Seconds(), 100*a.took.Seconds()/total.Seconds(), 1e3*a.took.Seconds()/float64(a.n),
			float64(a.multi)/float64(a.n), float64(a.idle)/float64(a.n), float64(a.queue)/float64(a.n))
	}
	sorted := slices.Clone(cs.rows)
	slices.SortFunc(sorted, func(x, y censusRow) int { return cmp.Compare(y.took, x.took) })
	for _, pct := range []float64{0.001, 0.01, 0.1, 0.5} {
		k := max(1, int(pct*float64(len(sorted))))
		var s time.Duration
		for _, r := range sorted[:k] {
			s += r.took
		}
		fmt.Fprintf(&b, "top %.1f%% of calls (%d): %.2fs = %.1f%% of solver time\n", 100*pct, k, s.Seconds(), 100*s.Seconds()/total.Seconds())
	}
	if len(sorted) > 0 {
		med := sorted[len(sorted)/2].took
		fmt.Fprintf(&b, "median call %.3f ms, p99 %.3f ms, max %.3f ms\n", 1e3*med.Seconds(), 1e3*sorted[len(sorted)/100].took.Seconds(), 1e3*sorted[0].took.Seconds())
	}
	// multi-node jobs per call histogram and time
	hist := map[int]*agg{}
	for _, r := range cs.rows {
		k := min(r.multi, 10)
		if hist[k] == nil {
			hist[k] = &agg{}
		}
		hist[k].n++
		hist[k].took += r.took
	}
	for k := 1; k <= 10; k++ {
		if a := hist[k]; a != nil {
			fmt.Fprintf(&b, "  multi=%2d%s: %7d calls %7.2fs (%5.1f%%)\n", k, map[bool]string{true: "+", false: " "}[k == 10], a.n, a.took.Seconds(), 100*a.took.Seconds()/total.Seconds())
		}
	}
	// idle-set size buckets
	buckets := []int{100, 1000, 4000, 8000, 16000, 32768}
	for i, hi := range buckets {
		lo := 0
		if i > 0 {
			lo = buckets[i-1]
		}
		n, s := 0, time.Duration(0)
		for _, r := range cs.rows {
			if r.idle > lo && r.idle <= hi {
				n++
				s += r.took
			}
		}
		fmt.Fprintf(&b, "  idle (%5d,%5d]: %7d calls %7.2fs (%5.1f%%)\n", lo, hi, n, s.Seconds(), 100*s.Seconds()/total.Seconds())
	}
	t.Log("\n" + b.String())
	if f := os.Getenv("OPTSCHED_CENSUS_OUT"); f != "" {
		if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
