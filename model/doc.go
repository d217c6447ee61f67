// Package model owns the vocabulary of optsched — cluster topologies (trees
// of switches over nodes), scheduling windows (idle nodes, running and
// waiting jobs, queues, node resources, reservations), allocations and
// schedules, the communication-hop (CH) cost of a node set, job selection
// for a window, and the parsers of the PBS statements a window carries
// (select, place, sizes) — and the one feasibility check, Check, that every
// solver's and heuristic's answer is held to.
//
// Formats live in packages of their own under model, which may import it:
// model/windowjson (the window JSON codec), model/slurm (topology.conf),
// model/hostlist (Slurm-style hostlists) and model/pbs (qstat, pbsnodes and
// queue JSON). model itself imports no other optsched package. Check shares
// no code with any solver: it is deliberately written from the definitions
// alone so that a bug in a solver cannot hide behind the same bug in its
// checker.
//
// References:
//
//   - [Lan23] Z. Lan et al., "Optimization of Topology-Aware Job Allocation on
//     a High-Performance Computing Cluster by Neural Simulated Annealing",
//     IEEE CLUSTER 2023 (arXiv:2302.03517). Eq. (1) defines the CH cost,
//     §III-C the window and job selection, §IV-A the SCAS blocks D(i,n).
//   - [Bridi16] T. Bridi et al., "A Constraint Programming Scheduler for
//     Heterogeneous High-Performance Computing Machines", IEEE TPDS 2016.
//     Queues, expected waits and per-unit resources in the window come from it.
package model
