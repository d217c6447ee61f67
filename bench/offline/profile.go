package offline

import (
	"cmp"
	"math"
	"slices"
)

// profile is the free-node count of a partial schedule over time: free[i]
// nodes are free on [t[i], t[i+1]) and free[len−1] from the last time on.
// t[0] is the earliest time the profile describes; before it nothing may
// start.
type profile struct {
	t    []int64
	free []int
}

func newProfile(from int64, nodes int) profile {
	return profile{t: []int64{from}, free: []int{nodes}}
}

func (p profile) clone() profile {
	return profile{t: slices.Clone(p.t), free: slices.Clone(p.free)}
}

// fit is the earliest time ≥ lo (and ≥ t[0]) at which n nodes are free for
// run seconds.
func (p profile) fit(n int, run, lo int64) int64 {
	if lo < p.t[0] {
		lo = p.t[0]
	}
	if run == 0 {
		return lo
	}
	// i: the segment holding cand.
	i := 0
	for i+1 < len(p.t) && p.t[i+1] <= lo {
		i++
	}
	cand := lo
	for {
		end := cand + run
		k := i
		ok := true
		for ; k < len(p.t) && p.t[k] < end; k++ {
			if p.free[k] < n {
				ok = false
				break
			}
		}
		if ok {
			return cand
		}
		// segment k blocks: restart after it (the last segment never
		// blocks, since n ≤ nodes is free there).
		i = k + 1
		cand = p.t[i]
	}
}

// split makes t a breakpoint and returns its index.
func (p *profile) split(t int64) int {
	i, found := slices.BinarySearch(p.t, t)
	if found {
		return i
	}
	// t > p.t[0] always for the callers (starts ≥ t[0], runs > 0).
	p.t = slices.Insert(p.t, i, t)
	p.free = slices.Insert(p.free, i, p.free[i-1])
	return i
}

// place takes n nodes on [start, start+run).
func (p *profile) place(n int, start, run int64) {
	if run == 0 {
		return
	}
	a := p.split(start)
	b := p.split(start + run)
	for k := a; k < b; k++ {
		p.free[k] -= n
	}
}

// trim forgets the profile before time from (nothing will start earlier).
func (p *profile) trim(from int64) {
	i := 0
	for i+1 < len(p.t) && p.t[i+1] <= from {
		i++
	}
	if i > 0 {
		p.t = p.t[i:]
		p.free = p.free[i:]
	}
	if p.t[0] < from {
		p.t[0] = from
	}
}

// serial is the serial schedule-generation scheme: the jobs in order, each
// at the earliest time ≥ its submit time at which it fits beside the jobs
// placed before it.
func serial(jobs []Job, nodes int, order []int) []int64 {
	starts := make([]int64, len(jobs))
	p := newProfile(math.MinInt64, nodes)
	for _, j := range order {
		s := p.fit(jobs[j].Nodes, jobs[j].Run, jobs[j].Submit)
		starts[j] = s
		p.place(jobs[j].Nodes, s, jobs[j].Run)
	}
	return starts
}

// greedy is an event-driven list scheduler: at every submit and end, the
// waiting jobs are scanned in priority order (smaller key first) and each
// one that fits in the free nodes starts (a later job may pass a blocked
// earlier one). It returns the starts.
func greedy(jobs []Job, nodes int, key func(Job) float64) []int64 {
	n := len(jobs)
	starts := make([]int64, n)
	bySubmit := make([]int, n)
	for i := range bySubmit {
		bySubmit[i] = i
	}
	slices.SortStableFunc(bySubmit, func(a, b int) int { return cmp.Compare(jobs[a].Submit, jobs[b].Submit) })
	keys := make([]float64, n)
	for i, j := range jobs {
		keys[i] = key(j)
	}
	var waiting []int // sorted by (key, index)
	type end struct {
		t int64
		n int
	}
	var running []end
	free := nodes
	next, done := 0, 0
	t := int64(math.MinInt64)
	for done < n {
		// the next event time
		nt := int64(math.MaxInt64)
		if next < n {
			nt = jobs[bySubmit[next]].Submit
		}
		for _, e := range running {
			nt = min(nt, e.t)
		}
		t = max(t, nt)
		kept := running[:0]
		for _, e := range running {
			if e.t <= t {
				free += e.n
			} else {
				kept = append(kept, e)
			}
		}
		running = kept
		for next < n && jobs[bySubmit[next]].Submit <= t {
			j := bySubmit[next]
			pos, _ := slices.BinarySearchFunc(waiting, j, func(a, b int) int {
				if keys[a] != keys[b] {
					if keys[a] < keys[b] {
						return -1
					}
					return 1
				}
				return a - b
			})
			waiting = slices.Insert(waiting, pos, j)
			next++
		}
		w := waiting[:0]
		for _, j := range waiting {
			if jobs[j].Nodes <= free {
				starts[j] = t
				done++
				if jobs[j].Run > 0 {
					free -= jobs[j].Nodes
					running = append(running, end{t + jobs[j].Run, jobs[j].Nodes})
				}
			} else {
				w = append(w, j)
			}
		}
		waiting = w
	}
	return starts
}

// heuristics are the priority keys of the list schedules that give the
// incumbents: first come first served, shortest job first, smallest area
// first, and a Smith-like ratio (area × max(run, Floor), the bounded
// slowdown's weight being 1/max(run, Floor)).
var heuristics = []struct {
	name string
	key  func(Job) float64
}{
	{"fcfs", func(j Job) float64 { return float64(j.Submit) }},
	{"sjf", func(j Job) float64 { return float64(j.Run) }},
	{"saf", func(j Job) float64 { return float64(j.Run) * float64(j.Nodes) }},
	{"smith", func(j Job) float64 {
		return float64(j.Run) * float64(j.Nodes) * math.Max(float64(j.Run), Floor)
	}},
}

// bestHeuristic runs every list schedule, both as the event-driven greedy
// (online: only submitted jobs) and as the serial scheme over the jobs
// sorted by the key (offline: a job may be placed in a hole before jobs
// earlier in the order), and returns the best one's starts, value and
// name.
func bestHeuristic(jobs []Job, nodes int) ([]int64, float64, string) {
	var best []int64
	bv, bn := math.Inf(1), ""
	order := make([]int, len(jobs))
	for _, h := range heuristics {
		if s := greedy(jobs, nodes, h.key); Value(jobs, s) < bv {
			best, bv, bn = s, Value(jobs, s), h.name
		}
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			ka, kb := h.key(jobs[a]), h.key(jobs[b])
			switch {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			return cmp.Compare(jobs[a].Submit, jobs[b].Submit)
		})
		if s := serial(jobs, nodes, order); Value(jobs, s) < bv {
			best, bv, bn = s, Value(jobs, s), "serial-"+h.name
		}
	}
	return best, bv, bn
}
