package offline

import (
	"math"
	"math/rand/v2"
)

// randomJobs draws n jobs on a cluster of nodes nodes: exponential
// inter-arrival times scaled so that the offered load (node-seconds asked
// per node-second of the arrival span) is about load, log-uniform run
// times in [1, maxRun] (so below and above the 10 s floor), and node
// counts log-uniform in [1, nodes].
func randomJobs(r *rand.Rand, n, nodes int, maxRun int64, load float64) []Job {
	jobs := make([]Job, n)
	area := 0.0
	for i := range jobs {
		run := int64(math.Exp(r.Float64() * math.Log(float64(maxRun)+1)))
		run = min(max(run, 1), maxRun)
		k := int(math.Exp(r.Float64() * math.Log(float64(nodes)+1)))
		k = min(max(k, 1), nodes)
		jobs[i] = Job{Run: run, Nodes: k}
		area += float64(run) * float64(k)
	}
	mean := area / float64(nodes) / load / float64(n) // mean gap
	t := 0.0
	for i := range jobs {
		jobs[i].Submit = int64(t)
		t += r.ExpFloat64() * mean
	}
	return jobs
}

// fcfsList is an independent list schedule for tests: the jobs in submit
// order, each starting at the earliest time ≥ its submit time and ≥ the
// previous job's start at which it fits (no backfilling), found by
// checking the candidate times (its lower limit and the ends of the jobs
// placed) against every placed job.
func listSchedule(jobs []Job, nodes int, order []int, noOvertake bool) []int64 {
	starts := make([]int64, len(jobs))
	var placed []int
	last := int64(math.MinInt64)
	for _, j := range order {
		lo := jobs[j].Submit
		if noOvertake {
			lo = max(lo, last)
		}
		cands := []int64{lo}
		for _, i := range placed {
			if e := starts[i] + jobs[i].Run; e > lo {
				cands = append(cands, e)
			}
		}
		best := int64(math.MaxInt64)
		for _, c := range cands {
			if c >= best || !fitsAt(jobs, nodes, starts, placed, j, c) {
				continue
			}
			best = c
		}
		starts[j] = best
		last = best
		placed = append(placed, j)
	}
	return starts
}

// fitsAt: does job j fit at time c beside the placed jobs? The usage on
// [c, c+run) is largest at c or at a placed job's start inside.
func fitsAt(jobs []Job, nodes int, starts []int64, placed []int, j int, c int64) bool {
	end := c + jobs[j].Run
	if jobs[j].Run == 0 {
		return true
	}
	points := []int64{c}
	for _, i := range placed {
		if starts[i] > c && starts[i] < end {
			points = append(points, starts[i])
		}
	}
	for _, t := range points {
		use := jobs[j].Nodes
		for _, i := range placed {
			if jobs[i].Run > 0 && starts[i] <= t && t < starts[i]+jobs[i].Run {
				use += jobs[i].Nodes
			}
		}
		if use > nodes {
			return false
		}
	}
	return true
}
