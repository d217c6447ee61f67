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
// What it does not model: qrun's latency and the server's own pacing,
// which the real replays show cost a few percent of slowdown (see
// docs/results); the figures are for comparing settings of the rule with
// one another, not with the servers.
package compactsim
