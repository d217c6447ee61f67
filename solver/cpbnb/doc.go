// Package cpbnb is a second exact scheduler of the time-and-resource
// model of Bridi et al. (encode/cp): a depth-first branch and bound over
// start-ordered schedules, in pure Go, that shares no code with the SAT
// encoding and search of solver/sat. It owns that search and nothing
// else; tests use it to cross-check solver/sat's optima on windows too
// large for brute force, and `optsched solve --encoding cp --solver bnb`
// runs it.
//
// Why start-ordered schedules suffice. Take an optimal schedule S* and
// list its jobs by start. Place them in that order, each on its S* units
// per node, at the earliest slot — no earlier than the previous job's
// start — at which they fit beside the running jobs, the reservations and
// the jobs placed before. By induction every job starts no later than in
// S*: from s*_k on, the jobs placed before use, per node and resource, a
// subset of what they use in S* (they started no later, so they end no
// later), and nothing else changed. The objective Eq. (2), Σ_i ω_i s_i,
// is regular, so the result is optimal too.
//
// The search enumerates exactly such placements: it chooses the next
// job, a slot s at or after the previous start, and the job's units per
// node at s, s being the earliest slot at or after the previous start at
// which those units fit (a later one is dominated). Since every job placed
// so far started at or before s, what they use of a node only falls
// after s: units that fit at s fit for the whole run, and the first event
// slot at which a remaining job fits alone beside them is a lower bound
// of its start. A node's bound is the cost so far plus
// Σ ω_i·max(s, that slot) over the remaining jobs. Nodes whose state is
// the same from s on (capacities, reservations, the uses still running
// after s) are exchangeable, so the choices are counts per class; jobs
// with the same data are placed in window order.
//
// A finished search proves its best schedule optimal (status optimal).
// Stopped by the deadline, it returns its best schedule (feasible), or
// the best list schedule (fallback), with the least bound of the subtrees
// it left unfinished. The search is exhaustive: it is exact but, on
// windows of many jobs with long waits, far slower than solver/sat (a
// measured 8-job window of the Bridi simulation: about 200 s).
// The first incumbent and every improvement, Σ ω_i·EST_i as a bound at
// the start and the final bound (with exact weights) are published to
// solver.ScheduleProblem.Publisher as they come.
//
// The CH term (solver/sat's --ch-weight) is not supported.
package cpbnb
