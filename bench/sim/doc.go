// Package sim is optsched's discrete-event simulator of a cluster over a
// job trace. It replays a trace (bench/trace) under a scheduling policy and
// reports per-job and per-run metrics: the communication-hop (CH) cost of
// each job's nodes ([Lan23] Eq. 1; one-node jobs count 1), wait, bounded
// slowdown (10 s), unbounded slowdown and normalised turnaround,
// turnaround, utilisation, makespan, per window the solve
// latency, and the queue metrics of [Bridi16] (see Summary).
//
// Policies:
//
//   - window: window-based scheduling ([Lan23] §III-C): every τ seconds the
//     ended jobs release their nodes, the arrivals of the period join the
//     queue, a window is selected (model.SelectJobs: waiting periods, then
//     size; --max-jobs) and solved by any solver.Solver, its jobs start,
//     and the jobs left waiting gain a waiting period. A period in which
//     nothing arrived or ended is skipped, as in the published code. A
//     window in which no job can start (the first job of the selection
//     order needs more nodes than are idle) is not solved either, only
//     counted (Result.Skipped) and its jobs aged, and a solved window
//     holds only the queued jobs selection can reach.
//     Config.GapSolver additionally re-solves each window with an exact
//     solver and records the window solver's gap to the optimum (or the
//     proven bound), without changing the trajectory.
//   - per job, at every arrival and end: fcfs (first come, first served),
//     easy (FCFS with EASY backfilling: a later job may start now if it
//     does not delay the reservation of the queue's head, judged by
//     requested walltimes), sjf, saf, drf, tetris, pbs-fifo and
//     pbs-walltime (see PolicyNames), and cp: bench/cpolicy's CP/SAT
//     scheduler deciding which waiting jobs start (Config.CP).
//   - select: a learned job selector (Config.Selector, e.g. bench/learned's
//     JoSHH) names, while any waiting job fits, the job to start now and
//     its placement strategy (DepthFirst, BreadthFirst or
//     FirstFitStrategy on the switch tree; selector.go).
//
// A per-job policy decides which jobs start; Config.Allocator decides on
// which idle nodes: first-fit on the lowest idle node ids (the default),
// Slurm's topology/tree best fit (heuristics.Slurm) or the allocators of
// Mishra et al. (heuristics.MishraGreedy, MishraBalanced, MishraAdaptive),
// each answering what it answers on a one-job window of the current idle
// nodes (heuristics.Incremental keeps its tree between jobs). The
// simulator treats every job as communication-intensive with recursive
// doubling (Mishra et al.'s allocators read it).
//
// Every allocation of every policy goes through model.Check; with
// Config.Check, those of the per-job policies (and cp) and each window's
// of the window policy in a goroutine of its own, in the order they were
// made, against the cluster's state restricted to their nodes, while the
// simulation goes on (the first that fails is returned as the run's
// error, as if it had stopped there, with the same text; a window whose
// nodes are off the cluster, busy or used twice stops the run at once).
//
// Cluster is the window policy's period stepping (release, arrive,
// window, start), exported for other window-based runners: bench/lan2023's
// Tables III–IV protocol steps its epochs with it.
//
// NewConfig builds the Config of a trace from a Setup, the choices as
// `optsched simulate` takes them: the cluster's layout (whole pods of
// 4 × 10 nodes that hold the log's cluster, unless given), the limits at
// scale (ScaleNodes) and the cp policy; the caller adds a learned
// policy's chooser, picker or selector (bench/learned imports sim).
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
// [Bridi16]: T. Bridi, A. Bartolini, M. Lombardi, M. Milano, L. Benini, IEEE TPDS 2016.
package sim
