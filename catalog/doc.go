// Package catalog builds optsched's solvers, heuristics and schedulers
// from their names and options. It is the one place that knows which back
// end a name means (csp, lpsolve, clp, brute, sa, nsa, seq, slurm, the
// Mishra allocators; sat, bnb and the PBS list schedules of the
// time-and-resource model), which presets the tools share — the csp + SA
// portfolio, SA with the parameters of [Lan23] Table I, the exact CP
// schedulers seeded and backed up by the PBSWalltime and PBSFifo list
// schedules — and how an exact solver is wrapped for a time limit (a
// solver.Portfolio with the chosen fallback). `optsched solve`, the PBS
// scheduler, the simulator and the benchmarks all build through it;
// package solver keeps only the contracts.
//
// Names are registered explicitly in this package (no init-time
// registration); reading weight files and naming flags in errors is the
// caller's business.
package catalog
