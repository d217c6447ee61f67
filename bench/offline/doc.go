// Package offline bounds, and for short sequences solves exactly, the
// offline problem behind RLScheduler's benchmark [Zhang20]: schedule a
// sequence of jobs on N identical nodes (a free-node counter, no
// placement), knowing every arrival and actual run time, so as to minimise
// the sum of bounded slowdowns
//
//	Σ_j bsld_j,  bsld_j = max(1, (S_j − s_j + p_j) / max(p_j, 10)),
//
// over start times S_j ≥ s_j, each job running without preemption for p_j
// seconds on n_j nodes, at most N nodes in use at any instant. Every
// scheduling policy (FCFS, SJF, backfilling, a learned one) produces such a
// schedule, so a lower bound on the minimum bounds them all.
//
// # Bound: Lagrangian relaxation of bucketed capacity
//
// Cut time, from the earliest submit t_0, into buckets B_k = [b_k, b_{k+1}),
// k < K, and let B_K = [b_K, ∞). For any feasible schedule the node-seconds
// used inside a bucket are at most its capacity:
//
//	Σ_j n_j |[S_j, S_j+p_j) ∩ B_k| ≤ N |B_k|        (k < K)
//
// (integrate the pointwise capacity over B_k). Keep only these
// constraints, and S_j ≥ s_j, and dualise them with multipliers λ_k ≥ 0;
// λ(τ) = λ_k on B_k, 0 on B_K, and Λ(t) = ∫_{t_0}^t λ. For every
// feasible schedule Σ bsld ≥ Σ bsld + Σ_k λ_k(used_k − N|B_k|), hence
//
//	OPT ≥ L(λ) = Σ_j min_{S ≥ s_j} [ bsld_j(S) + n_j (Λ(S+p_j) − Λ(S)) ] − N Σ_k λ_k |B_k|.
//
// Each job's term is a continuous piecewise-linear function of real S:
// bsld_j is linear with one kink at s_j + max(p_j,10) − p_j, and
// Λ(S+p_j) − Λ(S) is linear between the points S = b_k and S = b_k − p_j.
// Its minimum over [s_j, ∞) is therefore at s_j, at the kink or at one of
// those points — beyond b_K the term is bsld_j alone, non-decreasing — and
// since the second part is ≥ 0 the scan can stop at the first point whose
// bsld alone reaches the best value found. Any λ ≥ 0 gives a valid bound,
// whatever the buckets: the last bucket is unbounded with multiplier 0, so
// no horizon needs justifying (the grid spans t_0 to the makespan of a list
// schedule only because contention lies there). Half the boundaries are
// quantiles of the submit times and the list schedule's end times (fine
// where the sequence is busy), half uniform.
//
// L is concave; Bound maximises it by projected subgradient ascent. At the
// argmins S*_j the vector used_k(S*) − N|B_k| is a subgradient; the step is
// taken on the per-bucket average overuse (used_k/|B_k| − N, i.e. in the
// multipliers λ_k|B_k|), with the Polyak length (target − L)/‖g‖², the
// target being the best L so far plus a margin that grows after an
// improvement and halves after five iterations without one (a variable
// target value method), never above the list schedule's value. Every
// iterate's L is a bound; Bound keeps the best, less a relative margin of
// 1e-9 of the magnitudes summed (so rounding cannot lift it above the
// optimum), and never below the trivial Σ 1 = n.
//
// # Exact: branch and bound over sorted serial orders
//
// bsld is non-decreasing in the completion time (a regular objective), so
// some optimal schedule is active (no job can start earlier with the
// others fixed); among optimal schedules take S* with the least Σ S_j: it
// is active. The serial schedule-generation scheme (each job of an order
// in turn at the earliest time ≥ its submit at which it fits beside those
// placed) reproduces S* from its jobs sorted by (S*_j, j): when job k is
// placed, the placed jobs are those before it, at their S* times; k fits
// at S*_k; and if it fitted at some t < S*_k beside them it would fit
// there in S* too (jobs after k start at or after S*_k, and over
// [S*_k, t+p_k) k's own nodes are freed), contradicting activeness. So
// Exact branches only on orders whose starts are non-decreasing, ties by
// index — each job is placed next at its earliest fit no earlier than the
// last start. Node bound: the placed jobs' bsld plus, for every unplaced
// job, its bsld at its earliest fit no earlier than the last start in the
// current profile; the profile only fills up and later starts are not
// earlier, so no completion starts it sooner. Dominance: job j is not
// placed next if an unplaced i has ef_i < ef_j and ef_i + p_i ≤ ef_j —
// in every completion i could move to ef_i (all later jobs start at ≥ ef_j)
// and lower Σ S, so S* is not below that branch. Children are searched in
// increasing bound. A node also takes, when larger, the Lagrangian bound
// at the root's best multipliers: the placed jobs' bsld plus Σ over the
// unplaced jobs of min over S ≥ their earliest fit of bsld_j(S) +
// n_j(Λ(S+p_j) − Λ(S)), less Σ_k λ_k times the node-seconds the profile
// leaves free in B_k from the last start on (the unplaced jobs use only
// those, so the same dualisation argument holds). The incumbent starts as
// Bound's best schedule; the root bound is Bound's. A node whose bound is
// within a relative 1e-9 of the incumbent is pruned. When stopped early
// Exact reports the least bound of the subtrees not yet searched.
//
// # Feasible schedules
//
// Bound also returns its best feasible schedule (Upper): list schedules
// for four priority keys (submit time, run time, area, and area ×
// max(run, 10), a Smith-like ratio for the weights 1/max(p, 10)), each
// both as an online greedy (at every submit and end start every waiting
// job that fits, in key order) and as the serial scheme over the jobs in
// key order, and every fifth iteration the serial scheme over the jobs
// sorted by their relaxed starts S*_j (a Lagrangian heuristic).
//
// Check, the feasibility test every schedule passes in the tests, is a
// sweep of start and end events that shares no code with either.
//
// [Zhang20]: D. Zhang, D. Dai, Y. He, F. S. Bao, B. Xie, "RLScheduler: an
// automated HPC batch job scheduler using reinforcement learning", SC'20.
package offline
