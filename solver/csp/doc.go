// Package csp is optsched's default exact window solver: it solves the
// constrained-shortest-path graph of [Lan23] §IV-B (encode/csp), pure Go.
//
// Small state spaces — the paper's windows of at most five multi-node jobs
// — are solved exactly by dynamic programming over (position of Q, multiset
// of sizes still to place), in microseconds to milliseconds. The arcs that
// wrap from the end of Q to its head are handled by fixing, in turn, how
// many head positions the wrapping block covers; a cheap lower bound skips
// the cases that cannot beat the incumbent.
//
// Larger windows get a Lagrangian relaxation of the count constraints (one
// shortest path per multiplier vector, subgradient updates), whose value is
// the reported lower bound; when the jobs nearly fill Q, a second phase
// counts the free positions in the subproblem (at most |Q| − Σ sizes), a
// relaxation without the integrality property and so stronger than the LP
// bound. The incumbent comes from a primal heuristic — the best placement
// for a fixed order of sizes along Q, by dynamic programming, improved by
// local search and simulated annealing over the order. The result is Optimal when the
// two meet, and Feasible with the gap otherwise.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package csp
