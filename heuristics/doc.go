// Package heuristics owns the fast, non-exact window allocators that
// optsched compares exact solvers against and falls back on when a time
// limit runs out. Each implements solver.Solver, so it is run, checked and
// reported exactly like an exact solver, with Status Feasible and no bound.
//
//   - Seq: the "Seq." initial solution of [Lan23] §V-C.
//   - Anneal: simulated annealing on the dynamic continuity strategy,
//     [Lan23] Algorithm 1 with its Table I parameters. Its StartChooser
//     hook lets heuristics/nsa (neural simulated annealing) choose the
//     repair's starts with a trained policy.
//   - Slurm: Slurm's topology/tree best fit.
//   - MishraGreedy, MishraBalanced, MishraAdaptive: the allocations of
//     Mishra et al. (ICPP Workshops 2020) under their cost model.
//
// Incremental runs Slurm's and Mishra's allocators job by job on a
// cluster whose free nodes it keeps (a simulator's): the same answers as
// their Solve on a one-job window, in time proportional to the job on
// generated layouts and fat-trees rather than to the cluster.
//
// CompactNow moves the units of a checked units schedule that start now
// off idle nodes onto nodes already in use, the starts unchanged (the PBS
// planner runs it on its cp schedule), each move judged by
// model.NodeUsesFit, model.Check's per-node rule.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package heuristics
