// Package sim is optsched's discrete-event simulator of a cluster over a
// job trace. It replays a trace (bench/trace) under a scheduling policy and
// reports per-job and per-run metrics: the communication-hop (CH) cost of
// each job's nodes ([Lan23] Eq. 1; one-node jobs count 1), wait, bounded
// slowdown (10 s), turnaround, utilisation, makespan, and per window the
// solve latency.
//
// Policies:
//
//   - window: window-based scheduling ([Lan23] §III-C): every τ seconds the
//     ended jobs release their nodes, the arrivals of the period join the
//     queue, a window is selected (model.SelectJobs: waiting periods, then
//     size; --max-jobs) and solved by any solver.Solver, its jobs start,
//     and the jobs left waiting gain a waiting period. A period in which
//     nothing arrived or ended is skipped, as in the published code.
//   - fcfs: first come, first served, per event, first-fit on the lowest
//     idle node ids.
//   - easy: FCFS with EASY backfilling: a later job may start now if it
//     does not delay the reservation of the queue's head (judged by
//     requested walltimes).
//
// Every allocation of every policy goes through model.Check.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
package sim
