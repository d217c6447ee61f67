// Package compactsim replays a slice of an SWF log through optsched's PBS
// planner (pbsched.Decide) on a simulated 16-vnode server of the test
// complex's shape (tier0 = pairs, tier1 = quads), offline, to tune the
// compact-or-wait rule (heuristics.CompactWait) without a server.
//
// Jobs are mapped as `optsched replay` maps them (bench/replay.Plan: the
// compressed run time as the job's run, the compressed request plus a pad
// as its walltime, ⌈processors × 16 / MaxProcs⌉ whole vnodes). Time runs
// in ticks of 0.1 s of the compressed log (the server's documents have
// whole seconds; a tick stands for one of them). A cycle runs every
// Interval ticks and after every submission and end (after Delay ticks,
// the wake-up hook's reaction); each plan must pass pbsched.Check, and
// its starts run at once until their run time (or walltime) is over.
//
// The Slurm planner (slurmsched.Decide, with slurmsched.Check) runs the
// same way on leaves of 4 (Options.Server "slurm"). Models of the
// servers' own schedulers run on the same clock and jobs (competitor.go:
// ServerPBSSched, pbs_sched as installed; ServerPsets, pbs_sched with
// placement sets on tier1; ServerSlurmBackfill, Slurm's main scheduler
// and backfill pass with topology/tree), so that a setting can be scored
// against them offline (Score).
//
// What it does not model: qrun's and scontrol's latency and the servers'
// own pacing, which the real replays show cost a few percent of slowdown
// (see docs/results), for optsched and the models alike; the models are
// read from the schedulers' source and documentation, not run, so their
// figures stand for the servers' only as far as the docs' sanity checks
// show.
package compactsim
