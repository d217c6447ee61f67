// Package heuristics owns the fast, non-exact window allocators that
// optsched compares exact solvers against and falls back on when a time
// limit runs out. Each implements solver.Solver, so it is run, checked and
// reported exactly like an exact solver, with Status Feasible and no bound.
//
// Present: Seq, the "Seq." initial solution of [Lan23] (Z. Lan et al.,
// IEEE CLUSTER 2023, §V-C).
package heuristics
