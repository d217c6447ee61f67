package offline

import (
	"fmt"
	"sort"
)

// Check reports whether starts is a feasible schedule of jobs on a cluster
// of nodes nodes: one start per job, no start before its submit time, and
// at every instant the running jobs hold at most nodes nodes (a job runs
// on [start, start+Run); at a time t the jobs ending at t release their
// nodes before the jobs starting at t take theirs). It is a sweep over
// start and end events and shares no code with Bound or Exact.
func Check(jobs []Job, nodes int, starts []int64) error {
	if err := Validate(jobs, nodes); err != nil {
		return err
	}
	if len(starts) != len(jobs) {
		return fmt.Errorf("offline: %d starts for %d jobs", len(starts), len(jobs))
	}
	type event struct {
		t     int64
		delta int // −Nodes at an end, +Nodes at a start
		job   int
	}
	ev := make([]event, 0, 2*len(jobs))
	for i, j := range jobs {
		s := starts[i]
		if s < j.Submit {
			return fmt.Errorf("offline: job %d starts at %d, before its submit time %d", i, s, j.Submit)
		}
		if s > 4*maxTime {
			return fmt.Errorf("offline: job %d starts at %d, beyond 2^42", i, s)
		}
		if j.Run == 0 {
			continue
		}
		ev = append(ev, event{s, j.Nodes, i}, event{s + j.Run, -j.Nodes, i})
	}
	sort.Slice(ev, func(a, b int) bool {
		if ev[a].t != ev[b].t {
			return ev[a].t < ev[b].t
		}
		return ev[a].delta < ev[b].delta // ends first
	})
	used := 0
	for _, e := range ev {
		used += e.delta
		if used > nodes {
			return fmt.Errorf("offline: at time %d job %d starts and %d nodes are in use, above %d", e.t, e.job, used, nodes)
		}
	}
	return nil
}
