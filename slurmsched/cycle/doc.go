// Package cycle runs optsched's external scheduler for a Slurm cluster,
// one cycle at a time, around the decision of package slurmsched:
//
//	read the state ──▶ slurmsched.Decide ──▶ slurmsched.Check ──▶ (with Apply: read again, slurmsched.Recheck, slurmsched.Apply with scontrol)
//
// It reads the state from files or from squeue --json, sinfo --json and
// scontrol show topology; holds the lock (a flock(2) file, one cycle at a
// time on a host); appends each cycle to a JSON-lines audit log; handles
// SIGINT and SIGTERM; and runs the loop of `optsched slurm run`. The
// scheduler-neutral pieces come from package runloop, as for PBS.
package cycle
