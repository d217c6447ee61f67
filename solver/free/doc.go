// Package free is the exact solver of the free allocation problem of
// [Lan23] §III: every job may take any idle nodes (the dynamic strategy,
// DCAS), not only a run of consecutive positions of the idle sequence as
// M_SCAS and the CSP graph require. Its optimum is the least total CH cost
// any allocator can reach on a window, so the gap to it grades every
// solver and heuristic, the SCAS optimum included.
//
// The cost of a job depends only on how many of its nodes sit under each
// switch (encode/dcas), so the search is over counts, not node sets:
//
//   - Tables. For one job size and one subtree of idle capacity, g[m] is
//     the least hop part of m of the job's nodes in the subtree: at a leaf
//     (n−1)·d·m − 2·C(m,2), above it −2·C(m,2) plus the best split of m
//     over the children, a (min,+) convolution. Subtrees of the same shape
//     (same capacities, up to the order of children) share an id and
//     their tables, which are memoised; the least cost of a job alone is
//     FromHops(n, g_root[n]).
//   - Incumbent. The SCAS optimum of package csp (up to DefaultSCASShare
//     of the time limit), so the answer is never worse than the SCAS
//     optimum csp reaches in that time, and the greedy placement (largest
//     job first, each at its best spot, ties to the tightest fit); both
//     improved by re-placing one job at a time at its best spot given the
//     others.
//   - Bounds. Every job alone (Σ_j its least cost on the window), and a
//     Lagrangian relaxation of the leaves' capacity (lagrange): per job,
//     the tables' recursion with a price λ_ℓ on each idle node of leaf ℓ
//     and Eq. (1) replaced by its linear minorant (the integer division
//     costs at most (n − gcd(c, n))/n), the prices set by subgradient
//     ascent at the root.
//   - Branch and bound. Jobs largest first; each job's placements are
//     enumerated top-down, splitting its count over a switch's children in
//     order of the tables' bound, with isomorphic sibling subtrees taking
//     non-increasing counts (symmetry breaking). A partial placement is cut
//     when the cost so far, the least cost of the job's pending subtrees
//     and the least cost of every later job alone on the capacity left
//     reach the incumbent — or when the Lagrangian bound does (the first
//     two jobs' own placements priced too; the nodes of depth 1 to 3
//     re-price the leaves for the jobs left). A transposition table keeps,
//     per (depth, capacity shape), the cost the jobs left cannot go below.
//     Costs are monotone in the hop count, so the integer division of
//     Eq. (1) is priced exactly on every placed job.
//
// Memory is bounded: the memoised tables and shapes are dropped past 256
// MB (maxMemoBytes) and the transposition table past 2^20 entries; the
// rest is linear in the tree's vertices × the largest job.
//
// The result is Optimal when the branch and bound completes (or the
// incumbent meets the lower bound) and Feasible otherwise, with the
// independent bound: Σ_j the least cost of job j alone on the window.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package free
