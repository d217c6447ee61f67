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
// Larger windows get a Lagrangian relaxation of the count constraints: a
// shortest path over packings of Q per multiplier vector, first with
// subgradient updates, then solved to the dual optimum by column
// generation (colgen: a Dantzig–Wolfe master over packings of the cycle,
// exact pricing, stabilised duals), whose value is the reported lower
// bound — at least the LP bound of the strong M_SCAS program. The
// incumbent comes from primal heuristics: the Lagrangian heuristic, the
// master's weight-1 blocks completed by an exact residual DP
// (fixAndSolve), branch-and-price dives that fix the master's heaviest
// blocks, re-solve it by column generation on the positions left and
// backtrack when the residual is infeasible or cannot win (dive), exact
// re-ordering of runs of blocks (segmentDP) and
// large-neighbourhood moves that re-place two runs of blocks exactly
// (lns). When the gap is small, a branch and bound on reduced costs with
// widening targets (rcSearch) tries to prove the optimum. The result is
// Optimal when incumbent and bound meet, and Feasible with the gap
// otherwise.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package csp
