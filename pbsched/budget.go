package pbsched

import "time"

// The time limit of `optsched pbs plan` and `run` bounds the whole cycle,
// from reading the documents to writing the plan: the solves end at
// cycleDeadline, which keeps postReserve for the work after them, whose
// cost grows with the cluster and the queue: the model.Check of the
// partial-node schedule and building its starts and deferrals, the
// whole-node window's check, checkPlan, and writing the plan.
//
// Measured with BenchmarkPBSCycle's documents at 10,000 vnodes and 6,200
// jobs (5,000 queued) on a 2-core machine: that work is about 100 ms of
// CPU (checkPlan 37 ms, the script 29 ms, the partial-node schedule's
// model.Check 20 ms), and it ended 16-310 ms after the solves' deadline
// in 9 cycles at a load average of 5 (the machine shared with other
// builds). postPerItem per vnode and job keeps about 180 ms there; what is
// left of an overrun stays within the 200 ms the cycle may take beyond
// its time limit.
const (
	postBase    = 20 * time.Millisecond
	postPerItem = 10 * time.Microsecond
)

// postReserve is the time kept after the solves of a cycle on c: postBase
// plus postPerItem per vnode and per job of the state, at most a quarter
// of the time limit.
func postReserve(limit time.Duration, c *cluster) time.Duration {
	items := len(c.st.Nodes.Nodes) + len(c.st.Jobs.Jobs)
	return min(limit/4, postBase+time.Duration(items)*postPerItem)
}

// cycleDeadline is when the solves of a cycle that started at start must
// end: the time limit from the start, less postReserve.
func cycleDeadline(start time.Time, limit time.Duration, c *cluster) time.Time {
	return start.Add(limit - postReserve(limit, c))
}
