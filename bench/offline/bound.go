package offline

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sort"
)

// BoundOptions tunes Bound. The zero value is the default.
type BoundOptions struct {
	// Buckets is the number of time buckets of the relaxation (default
	// min(max(2n, 64), 1024) for n jobs). More buckets give a tighter bound
	// and slower iterations.
	Buckets int
	// MaxIterations caps the subgradient iterations (default 600).
	MaxIterations int
}

// Method says how a bound was obtained.
type Method string

const (
	// Trivial is the bound n: every bounded slowdown is at least 1.
	Trivial Method = "trivial"
	// Lagrangian is the Lagrangian relaxation of the bucketed capacity
	// (see the package documentation).
	Lagrangian Method = "lagrangian"
)

// BoundResult is what Bound returns.
type BoundResult struct {
	// Value is a lower bound on the minimum sum of bounded slowdowns over
	// all feasible schedules.
	Value float64
	// Method says which bound gave Value.
	Method Method
	// Iterations is the number of subgradient iterations run; Buckets the
	// number of time buckets.
	Iterations, Buckets int
	// Upper is the value of the best list schedule found (a feasible
	// schedule, so an upper bound on the optimum), Starts its start times
	// and Heuristic the list schedule's name.
	Upper     float64
	Starts    []int64
	Heuristic string
}

// Bound returns a lower bound on the minimum, over all feasible schedules of
// jobs on a cluster of nodes nodes, of the sum of bounded slowdowns: the
// best value of the Lagrangian relaxation of the bucketed capacity found by
// projected subgradient ascent (see the package documentation for the
// derivation). Each iteration's value is a valid bound, so when ctx ends
// Bound returns the best one so far. It returns an error only for invalid
// input (see Validate).
func Bound(ctx context.Context, jobs []Job, nodes int, opt BoundOptions) (BoundResult, error) {
	if err := Validate(jobs, nodes); err != nil {
		return BoundResult{}, err
	}
	res, _ := bound(ctx, jobs, nodes, opt)
	return res, nil
}

// bound is Bound on valid input; it also returns the relaxation (nil when
// it was not built), its best multipliers in lg.best.
func bound(ctx context.Context, jobs []Job, nodes int, opt BoundOptions) (BoundResult, *lagrangian) {
	n := len(jobs)
	res := BoundResult{Value: float64(n), Method: Trivial}
	if n == 0 {
		res.Starts = []int64{}
		return res, nil
	}
	res.Starts, res.Upper, res.Heuristic = bestHeuristic(jobs, nodes)
	if res.Upper <= float64(n) {
		return res, nil // every job at bsld 1: optimal
	}
	lg := newLagrangian(jobs, nodes, res.Starts, opt.Buckets)
	res.Buckets = lg.k
	maxIt := opt.MaxIterations
	if maxIt <= 0 {
		maxIt = 600
	}
	// variable target value: aim at best+delta; delta grows after an
	// improvement and shrinks after a run of iterations without one.
	best := math.Inf(-1)
	delta, stall := 0.1*float64(n), 0
	for it := 0; it < maxIt; it++ {
		if ctx.Err() != nil {
			break
		}
		l, margin := lg.evaluate()
		res.Iterations++
		if v := l - margin; v > res.Value {
			res.Value, res.Method = v, Lagrangian
			copy(lg.best, lg.lam)
		}
		if it%5 == 0 || l > best {
			// Lagrangian heuristic: the serial scheme in argmin order
			if st := lg.repair(nodes); Value(jobs, st) < res.Upper {
				res.Starts, res.Upper, res.Heuristic = st, Value(jobs, st), "lagrangian"
			}
		}
		if l > best {
			if best > math.Inf(-1) && l-best > 0.5*delta {
				delta *= 1.5
			}
			best, stall = l, 0
		} else if stall++; stall >= 10 {
			delta, stall = delta/2, 0
			if delta < 1e-6*float64(n) {
				break
			}
		}
		if res.Value >= res.Upper*(1-1e-9) {
			break
		}
		lg.step(min(best+delta, res.Upper) - l)
	}
	return res, lg
}

// lagrangian holds the multipliers of the bucketed capacity constraints.
// Times are seconds after the earliest submit, as float64 (exact: they are
// integers below 2^44).
type lagrangian struct {
	jobs  []Job
	nodes float64
	t0    int64
	k     int
	b     []float64 // k+1 bucket boundaries, integers, b[0] = 0
	w     []float64 // widths
	lam   []float64 // multiplier per node-second, ≥ 0
	best  []float64 // the multipliers of the best bound
	pre   []float64 // Λ at the boundaries
	arg   []float64 // each job's argmin start (after t0)
	use   []float64 // node-seconds used per bucket by the argmins
	diff  []float64
	grad  []float64
}

func newLagrangian(jobs []Job, nodes int, starts []int64, buckets int) *lagrangian {
	n := len(jobs)
	if buckets <= 0 {
		buckets = min(max(2*n, 64), 1024)
	}
	t0 := jobs[0].Submit
	for _, j := range jobs {
		t0 = min(t0, j.Submit)
	}
	// events of the sequence: submits and the list schedule's ends
	var ev []int64
	horizon := int64(1)
	for i, j := range jobs {
		ev = append(ev, j.Submit-t0)
		e := starts[i] + j.Run - t0
		ev = append(ev, e)
		horizon = max(horizon, e)
	}
	slices.Sort(ev)
	// half the boundaries at quantiles of the events, half uniform
	bs := []int64{0, horizon}
	for q := 1; q < buckets/2; q++ {
		bs = append(bs, ev[q*len(ev)/(buckets/2)])
		bs = append(bs, horizon*int64(q)/int64(buckets/2))
	}
	slices.Sort(bs)
	bs = slices.Compact(bs)
	for len(bs) > 0 && bs[len(bs)-1] > horizon {
		bs = bs[:len(bs)-1]
	}
	k := len(bs) - 1
	lg := &lagrangian{jobs: jobs, nodes: float64(nodes), t0: t0, k: k,
		b: make([]float64, k+1), w: make([]float64, k), lam: make([]float64, k), best: make([]float64, k),
		pre: make([]float64, k+1), use: make([]float64, k), diff: make([]float64, k+1),
		grad: make([]float64, k), arg: make([]float64, n)}
	for i, v := range bs {
		lg.b[i] = float64(v)
	}
	for i := range k {
		lg.w[i] = lg.b[i+1] - lg.b[i]
	}
	return lg
}

// repair is the serial schedule-generation scheme over the jobs sorted by
// their relaxed starts (ties by submit time, then index): a feasible
// schedule near the relaxation's.
func (lg *lagrangian) repair(nodes int) []int64 {
	order := make([]int, len(lg.jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if lg.arg[a] != lg.arg[b] {
			if lg.arg[a] < lg.arg[b] {
				return -1
			}
			return 1
		}
		return cmp.Compare(lg.jobs[a].Submit, lg.jobs[b].Submit)
	})
	return serial(lg.jobs, nodes, order)
}

// useBest sets the multipliers to the best ones found and Λ to match.
func (lg *lagrangian) useBest() {
	copy(lg.lam, lg.best)
	for i := range lg.k {
		lg.pre[i+1] = lg.pre[i] + lg.lam[i]*lg.w[i]
	}
}

// partial is the Lagrangian bound, at the current multipliers, of the jobs
// not in placed, each starting no earlier than lo[j], on the capacity a
// profile leaves free (none before its first time): L = Σ_j min_{S ≥ lo_j}
// [...] − Σ_k λ_k ∫_{B_k} free, less the rounding margin.
func (lg *lagrangian) partial(placed uint64, lo []int64, prof profile) float64 {
	sum := 0.0
	for i, j := range lg.jobs {
		if placed&(1<<i) != 0 {
			continue
		}
		p := float64(j.Run)
		v, _ := lg.jobMin(float64(j.Submit-lg.t0), float64(lo[i]-lg.t0), p, float64(j.Nodes), math.Max(p, Floor))
		sum += v
	}
	segAt := func(i int) float64 {
		if prof.t[i] == math.MinInt64 {
			return math.Inf(-1)
		}
		return float64(prof.t[i] - lg.t0)
	}
	capTerm := 0.0
	seg := 0
	for k := range lg.k {
		if lg.lam[k] == 0 {
			continue
		}
		lo, hi := math.Max(lg.b[k], segAt(0)), lg.b[k+1]
		if lo >= hi {
			continue
		}
		for seg+1 < len(prof.t) && segAt(seg+1) <= lo {
			seg++
		}
		acc, x := 0.0, lo
		for j := seg; x < hi; j++ {
			end := hi
			if j+1 < len(prof.t) {
				end = math.Min(hi, segAt(j+1))
			}
			acc += float64(prof.free[j]) * (end - x)
			x = end
		}
		capTerm += lg.lam[k] * acc
	}
	return sum - capTerm - 1e-9*(sum+capTerm) - 1e-9
}

// cum is Λ(t) = ∫_0^t λ; *idx is a bucket index hint that only grows
// between calls with growing t.
func (lg *lagrangian) cum(t float64, idx *int) float64 {
	if t <= 0 {
		return 0
	}
	if t >= lg.b[lg.k] {
		return lg.pre[lg.k]
	}
	i := *idx
	for lg.b[i+1] <= t {
		i++
	}
	*idx = i
	return lg.pre[i] + lg.lam[i]*(t-lg.b[i])
}

// jobMin minimises bsld(S) + n(Λ(S+p) − Λ(S)) over real S ≥ lo (lo ≥ s,
// the submit time): the function is piecewise linear with breakpoints at
// lo, the bsld kink s+P−p, the boundaries b and b−p; beyond b[k] it is
// bsld alone, non-decreasing. It returns the minimum and an argmin.
func (lg *lagrangian) jobMin(sub, lo, p, n, pw float64) (float64, float64) {
	f := func(S float64) float64 { return math.Max(1, (S-sub+p)/pw) }
	if p == 0 {
		return f(lo), lo
	}
	s := lo
	b, k := lg.b, lg.k
	i0 := max(sort.SearchFloat64s(b, s)-1, 0)
	iS, iE := i0, i0
	h := func(S float64) float64 {
		return f(S) + n*(lg.cum(S+p, &iE)-lg.cum(S, &iS))
	}
	best, bestS := h(s), s
	kink := sub + pw - p
	// ia: next boundary > s; ib: next boundary with b−p > s
	ia := sort.SearchFloat64s(b, s)
	for ia <= k && b[ia] <= s {
		ia++
	}
	ib := sort.SearchFloat64s(b, s+p)
	for ib <= k && b[ib]-p <= s {
		ib++
	}
	kinkUsed := kink <= s
	for {
		c := math.Inf(1)
		if ia <= k {
			c = b[ia]
		}
		if ib <= k {
			c = min(c, b[ib]-p)
		}
		if !kinkUsed && kink <= c {
			c = kink
			kinkUsed = true
		}
		if math.IsInf(c, 1) || f(c) >= best {
			break
		}
		if v := h(c); v < best {
			best, bestS = v, c
		}
		if ia <= k && b[ia] == c {
			ia++
		}
		if ib <= k && b[ib]-p == c {
			ib++
		}
	}
	return best, bestS
}

// evaluate computes L(λ) and, for the argmins, the subgradient in grad.
// It returns L and a margin that covers its floating-point rounding.
func (lg *lagrangian) evaluate() (float64, float64) {
	k := lg.k
	lg.pre[0] = 0
	capTerm := 0.0
	for i := range k {
		lg.pre[i+1] = lg.pre[i] + lg.lam[i]*lg.w[i]
		capTerm += lg.lam[i] * lg.w[i]
	}
	capTerm *= lg.nodes
	clear(lg.use)
	clear(lg.diff)
	sum := 0.0
	for i, j := range lg.jobs {
		s, p, n := float64(j.Submit-lg.t0), float64(j.Run), float64(j.Nodes)
		v, S := lg.jobMin(s, s, p, n, math.Max(p, Floor))
		lg.arg[i] = S
		sum += v
		if p > 0 {
			lg.addUse(S, S+p, n)
		}
	}
	acc := 0.0
	for i := range k {
		acc += lg.diff[i]
		lg.use[i] += acc * lg.w[i]
		lg.grad[i] = lg.use[i] - lg.nodes*lg.w[i]
	}
	l := sum - capTerm
	margin := 1e-9*(sum+capTerm) + 1e-9
	return l, margin
}

// addUse adds n nodes on [a, e) to the buckets' usage.
func (lg *lagrangian) addUse(a, e, n float64) {
	b, k := lg.b, lg.k
	if a >= b[k] {
		return
	}
	ka := sort.SearchFloat64s(b, a)
	if ka > k || b[ka] > a {
		ka--
	}
	e = math.Min(e, b[k])
	ke := sort.SearchFloat64s(b, e)
	if ke > k || b[ke] > e {
		ke--
	}
	if ka == ke {
		lg.use[ka] += n * (e - a)
		return
	}
	lg.use[ka] += n * (b[ka+1] - a)
	if ke < k {
		lg.use[ke] += n * (e - b[ke])
	}
	lg.diff[ka+1] += n
	lg.diff[ke] -= n
}

// step moves the multipliers along the subgradient, scaled per bucket to
// average node overuse, by a Polyak step of size gap/‖g‖².
func (lg *lagrangian) step(gap float64) {
	norm := 0.0
	for i := range lg.k {
		g := lg.grad[i] / lg.w[i]
		if lg.lam[i] <= 0 && g < 0 {
			continue
		}
		norm += g * g
	}
	if norm == 0 {
		return
	}
	t := gap / norm
	for i := range lg.k {
		lg.lam[i] = math.Max(0, lg.lam[i]+t*lg.grad[i]/(lg.w[i]*lg.w[i]))
	}
}
