package sat

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/solver"
)

// groupSize bounds the jobs of one group: windows of this many jobs are
// usually solved to optimality in milliseconds.
const groupSize = 8

// groupBounds is a lower bound on optimum − LB from a partition of the
// jobs: each group's jobs scheduled alone (the others removed, which only
// relaxes the constraints) need at least delta[g] = Σ_{i∈g} ω_i·(s_i −
// EST_i), so every schedule of all jobs has Σ_i ω_i·(s_i − EST_i) ≥ total
// = Σ_g delta[g].
type groupBounds struct {
	groups [][]int
	delta  []int64
	total  int64
}

// partitions returns the partitions of m's jobs the group bound tries, in
// order, each into groups of at most size jobs, and only those of at
// least two groups: by weight (jobs of one queue together), and by the
// set of nodes the job may use (jobs competing for the same nodes
// together), each highest weight first.
func partitions(m *cp.Model, size int) [][][]int {
	byWeight := make([]int, len(m.Jobs))
	for i := range byWeight {
		byWeight[i] = i
	}
	slices.SortStableFunc(byWeight, func(a, b int) int {
		return cmp.Compare(m.Jobs[b].Weight, m.Jobs[a].Weight) // heaviest first
	})
	split := func(key func(i int) string) [][]int {
		classes := map[string][]int{}
		for _, i := range byWeight {
			k := key(i)
			classes[k] = append(classes[k], i)
		}
		var out [][]int
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range classes {
				if !yield(k) {
					return
				}
			}
		}) {
			c := classes[k]
			n := (len(c) + size - 1) / size // groups of about equal size
			for g := range n {
				out = append(out, c[g*len(c)/n:(g+1)*len(c)/n])
			}
		}
		return out
	}
	nodes := func(i int) string {
		var b strings.Builder
		for _, o := range m.Jobs[i].Options {
			fmt.Fprintf(&b, "%d,", o.Node)
		}
		return b.String()
	}
	weight := func(i int) string { return fmt.Sprintf("%020d", -m.Jobs[i].Weight) }
	var out [][][]int
	for _, p := range [][][]int{split(weight), split(nodes)} {
		if len(p) >= 2 {
			out = append(out, p)
		}
	}
	return out
}

// groupBounds computes the group bound of every partition — contention
// and blocking (from best, when there is one) and partitions — into
// groups of at most size, then 1.5·size (and partitions also 2·size) jobs
// until ctx ends and returns the largest (nil when there is no
// partition). Each group is searched alone from best's schedule of its
// jobs, with time in proportion to best's excess on it (groups best does
// not delay are skipped: their bound is 0); a group cut short by the
// deadline contributes its proven bound so far. best may be nil.
func (s Solver) groupBounds(ctx context.Context, m *cp.Model, best *incumbent, size int, start time.Time) (*groupBounds, error) {
	var out *groupBounds
	var parts [][][]int
	if best != nil {
		for _, p := range [][][]int{contention(m, best, size), blocking(m, best, size)} {
			if len(p) >= 2 {
				parts = append(parts, p)
			}
		}
	}
	parts = append(parts, partitions(m, size)...)
	if size < len(m.Jobs) {
		// Then larger groups, if time remains.
		seen := map[string]bool{}
		if best != nil {
			for _, p := range [][][]int{contention(m, best, size*3/2), blocking(m, best, size*3/2)} {
				if len(p) >= 2 {
					parts = append(parts, p)
				}
			}
		}
		for _, p := range parts {
			seen[fmt.Sprint(p)] = true
		}
		for _, k := range []int{size * 3 / 2, size * 2} {
			for _, p := range partitions(m, k) {
				if !seen[fmt.Sprint(p)] {
					seen[fmt.Sprint(p)] = true
					parts = append(parts, p)
				}
			}
		}
	}
	for p, part := range parts {
		if ctx.Err() != nil {
			break
		}
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if dl, ok := ctx.Deadline(); ok {
			share := time.Until(dl) / time.Duration(len(parts)-p)
			if p == 0 && best != nil && len(parts) > 2 {
				// The incumbent's partitions come first and gave the
				// best bounds (measured on 30-job Eurora windows): the
				// first takes half the time.
				share = time.Until(dl) / 2
			}
			pctx, cancel = context.WithDeadline(ctx, time.Now().Add(share))
		}
		gb := &groupBounds{groups: part, delta: make([]int64, len(part))}
		// The groups to search: two jobs or more, and with an incumbent
		// only those it delays (the others are at their bound, 0). Each
		// gets time in proportion to the incumbent's excess on it (the
		// most its bound can give), or an equal share without one.
		type task struct {
			g      int
			sub    cp.Model
			inc    *incumbent
			excess int64
		}
		var tasks []task
		var left int64
		for g, jobs := range part {
			if len(jobs) < 2 {
				continue // one job alone: EST_i
			}
			t := task{g: g, sub: *m, excess: 1}
			t.sub.Jobs = make([]cp.Job, len(jobs))
			for k, i := range jobs {
				t.sub.Jobs[k] = m.Jobs[i]
			}
			if best != nil {
				t.inc = &incumbent{slots: make([]int, len(jobs)), units: make([][]int, len(jobs)), from: best.from}
				for k, i := range jobs {
					t.inc.slots[k], t.inc.units[k] = best.slots[i], best.units[i]
				}
				t.inc.w = t.sub.Total(t.inc.slots, t.inc.units)
				t.excess = t.inc.w - LowerBound(&t.sub)
				if t.excess <= 0 {
					continue
				}
			}
			tasks = append(tasks, t)
			left += t.excess
		}
		for _, t := range tasks {
			if pctx.Err() != nil {
				break
			}
			gctx, gcancel := pctx, context.CancelFunc(func() {})
			if dl, ok := pctx.Deadline(); ok {
				gctx, gcancel = context.WithDeadline(pctx, time.Now().Add(time.Duration(float64(time.Until(dl))*float64(t.excess)/float64(left))))
			}
			left -= t.excess
			_, proven, err := s.sub().search(gctx, &t.sub, t.inc, 0, nil, &solver.SATSearchStats{}, start)
			gcancel()
			if err != nil {
				cancel()
				return nil, fmt.Errorf("group bound: %w", err)
			}
			gb.delta[t.g] = proven
			gb.total += proven
		}
		cancel()
		if out == nil || gb.total > out.total {
			out = gb
		}
	}
	return out, nil // nil: no partition of two groups or more
}

// blocking partitions the jobs by the incumbent: job i, delayed in best,
// is blocked by every job j running in best at s_i − 1 on a node i may
// use (j holds what i would need to start a slot earlier); the pairs,
// heaviest ω_i·(s_i − EST_i) first, join their groups while these stay
// within size jobs. Jobs never joined stay alone.
func blocking(m *cp.Model, best *incumbent, size int) [][]int {
	type edge struct {
		i, j int
		w    int64
	}
	var edges []edge
	onNode := jobsOnNodes(m, best)
	for i, ji := range m.Jobs {
		s := best.slots[i]
		if s <= ji.EST {
			continue
		}
		seen := map[int]bool{}
		for _, o := range ji.Options {
			for _, j := range onNode[o.Node] {
				if j != i && !seen[j] && best.slots[j] <= s-1 && s-1 < best.slots[j]+m.Jobs[j].Dur {
					seen[j] = true
					edges = append(edges, edge{i, j, ji.Weight * int64(s-ji.EST)})
				}
			}
		}
	}
	slices.SortStableFunc(edges, func(a, b edge) int { return cmp.Compare(b.w, a.w) })
	pairs := make([][2]int, len(edges))
	for k, e := range edges {
		pairs[k] = [2]int{e.i, e.j}
	}
	return joinPairs(len(m.Jobs), pairs, size)
}

// contention partitions the jobs by the incumbent: job i, delayed in
// best, contends with every job j that holds, at a slot τ in [EST_i, s_i),
// a node on which a unit of i would fit beside the running jobs at τ
// (Option.UnitsAt): without j, i could have started there earlier. The
// pairs, heaviest ω_i·(s_i − EST_i) first and within one i the largest
// ω_j·(slots held) first, join their groups while these stay within size
// jobs. Jobs never joined stay alone.
func contention(m *cp.Model, best *incumbent, size int) [][]int {
	type edge struct {
		i, j   int
		wi, wj int64
	}
	onNode := jobsOnNodes(m, best)
	var edges []edge
	for i, ji := range m.Jobs {
		s := best.slots[i]
		if s <= ji.EST {
			continue
		}
		held := map[int]int64{}
		for o := range ji.Options {
			opt := &ji.Options[o]
			for _, j := range onNode[opt.Node] {
				if j == i {
					continue
				}
				from, to := max(ji.EST, best.slots[j]), min(s, best.slots[j]+m.Jobs[j].Dur)
				for tau := from; tau < to; tau++ {
					if opt.UnitsAt(tau) > 0 {
						held[j]++
					}
				}
			}
		}
		for j, h := range held {
			edges = append(edges, edge{i, j, ji.Weight * int64(s-ji.EST), m.Jobs[j].Weight * h})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := cmp.Compare(b.wi, a.wi); c != 0 {
			return c
		}
		if c := cmp.Compare(b.wj, a.wj); c != 0 {
			return c
		}
		if c := cmp.Compare(a.i, b.i); c != 0 {
			return c
		}
		return cmp.Compare(a.j, b.j)
	})
	pairs := make([][2]int, len(edges))
	for k, e := range edges {
		pairs[k] = [2]int{e.i, e.j}
	}
	return joinPairs(len(m.Jobs), pairs, size)
}

// jobsOnNodes lists, per node of m, the jobs best places units on.
func jobsOnNodes(m *cp.Model, best *incumbent) [][]int {
	onNode := make([][]int, len(m.Nodes))
	for j := range m.Jobs {
		for o, u := range best.units[j] {
			if u > 0 {
				n := m.Jobs[j].Options[o].Node
				onNode[n] = append(onNode[n], j)
			}
		}
	}
	return onNode
}

// joinPairs partitions jobs 0..n−1: the pairs, in order, join their
// groups while these stay within size jobs; groups in the order of their
// first job, jobs never joined alone.
func joinPairs(n int, pairs [][2]int, size int) [][]int {
	parent := make([]int, n)
	count := make([]int, n)
	for i := range parent {
		parent[i], count[i] = i, 1
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, p := range pairs {
		a, b := find(p[0]), find(p[1])
		if a != b && count[a]+count[b] <= size {
			parent[b] = a
			count[a] += count[b]
		}
	}
	groups := map[int][]int{}
	var roots []int
	for i := range n {
		r := find(i)
		if groups[r] == nil {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	out := make([][]int, 0, len(roots))
	for _, r := range roots {
		out = append(out, groups[r])
	}
	return out
}
