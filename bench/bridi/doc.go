// Package bridi owns optsched's comparison after [Bridi16]'s Table 1: the
// CP/SAT time-and-resource scheduler (solver/sat) against the PBSFifo and
// PBSWalltime list schedulers (heuristics) on a 65-node Eurora-like
// cluster (instances.EuroraWindow) under a documented synthetic workload,
// in an event-driven simulation, with Bridi et al.'s metrics: WQT (the
// weighted queue time, Σ wait / ewt of the job's queue), NL (late jobs,
// wait > ewt), TR (tardiness, Σ max(0, wait − ewt)) and the mean overhead
// per scheduling decision. The metrics are bench/sim's (sim.Summary), so
// that they mean the same everywhere.
//
// The simulation: jobs arrive (Workload); at every arrival and every
// actual end — and at the earliest planned start of the last schedule,
// should nothing else happen by then — the policy schedules the whole
// queue as one window (the running jobs with their requested walltimes as
// estimated ends), and the jobs it starts at that instant start: the
// decisions; later starts are only reservations and are re-planned at
// the next event. Jobs run for their actual runtime, at most their
// walltime. Every schedule goes through solver.SolveWindow, that is
// model.Check.
//
// A corpus (Corpus, ReadCorpus) is a set of decision windows solved one
// by one rather than simulated: every scheduler answers each window within
// the time limit, and SolveCorpus measures each answer's gap to the best
// bound any of them proved (optsched bench cp). The corpus drawn from the
// workload follows PBSWalltime's path, which depends on neither the solver
// nor the machine, so two versions of a solver meet the same windows.
//
// [Bridi16]: T. Bridi, A. Bartolini, M. Lombardi, M. Milano, L. Benini,
// "A Constraint Programming Scheduler for Heterogeneous High-Performance
// Computing Machines", IEEE TPDS 27(10), 2016.
package bridi
