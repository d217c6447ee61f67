// Package pbsched is optsched's scheduler for OpenPBS / PBS Professional:
// it owns one cycle's decision from a parsed server state to the qrun
// commands that start jobs.
//
// A cycle is a pipeline, each stage a function of this package:
//
//		State, Scope ──Decide──▶ Plan ──Check──▶ (Recheck on fresh state) ──Apply(Runner)──▶ Outcome
//
//	  - State is the parsed qstat -f -t, pbsnodes -av and qstat -Q -f
//	    documents (model/pbs parses them); Scope says which queues and
//	    vnodes are optsched's and how the topology is read.
//	  - Decide builds the scheduling view (which vnodes are idle or partly
//	    used, which jobs are candidates, which path each takes) and plans:
//	    whole-node jobs go through the topology-aware window solve of
//	    package solver (SCAS/CSP, [Lan23]); partial-node jobs through the
//	    CP/SAT time-and-resource schedule of solver/sat ([Bridi16]) or a
//	    documented first fit. Queue order holds across the paths.
//	  - Check re-derives every rule from the raw PBS documents, sharing no
//	    code with Decide (N-version checking): a plan it rejects must not
//	    run. Recheck applies it to a state read again just before qrun.
//	  - Apply starts the jobs through a Runner, by the scheduler-neutral
//	    sched.Apply (one qrun a start); Qrun runs qrun -H with a timeout
//	    that bounds qrun's children and pipes. What came of each start is
//	    the Outcome Apply returns, a value apart from the Plan, which
//	    Apply leaves as it was.
//
// It is the PBS adapter of package sched, the core it shares with the
// Slurm scheduler. Check is sched.Check on a view that checkInput.view derives
// from the raw documents alone (vnodes with their capacities and queues,
// the jobs with why they may not start, chunks that stack on a vnode,
// whole vnodes by path or by sharing), plus the rules of PBS's own
// documents (the window's allocation, chunks against the select,
// properties, hosts) and the reservation, sched.CheckHold on the order
// and empty times recomputed here; Recheck is sched.Recheck plus those
// document rules; Apply is sched.Apply. Decide is PBS's own.
//
// The plan's documents (Plan.Doc, the JSON of `optsched pbs plan -o
// json` and of the audit log; Plan.WriteScript; Plan.Summary) are
// rendered here too, each from the plan and the Outcome of Apply (nil
// when the plan was not applied).
//
// The cycle around this pipeline is package pbsched/cycle's: reading the
// documents (files, a pbs_snapshot folder, qstat and pbsnodes), the
// lock, the audit log, signal handling and the daemon loop of `optsched
// pbs run`. Flags and printing belong to cmd/optsched; pbstest holds the
// tests' random clusters and fake PBS commands; itest is the OpenPBS
// integration suite.
package pbsched
