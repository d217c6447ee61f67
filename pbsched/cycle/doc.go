// Package cycle runs optsched's external scheduler for a PBS server, one
// cycle at a time, around the decision of package pbsched:
//
//	read the state ──▶ pbsched.Decide ──▶ pbsched.Check ──▶ (with Apply: read again, pbsched.Recheck, pbsched.Apply with qrun)
//
// It owns what makes a cycle a process's work rather than a function's:
//
//   - reading the server's state: the qstat -f -t, pbsnodes -av and
//     qstat -Q -f documents from files, standard input, a pbs_snapshot
//     folder or the commands themselves (each bounded in size and time),
//     and the server's time zone;
//   - the scope and decision options built from a Config (the solvers
//     come built, from the command, through the catalogue);
//   - the lock file that keeps cycles one at a time on a host (flock(2))
//     and the JSON-lines audit log, one line per cycle, with their default
//     paths under $XDG_STATE_HOME/optsched;
//   - graceful SIGINT and SIGTERM handling for cycles that act, and the
//     daemon loop of `optsched pbs run`.
//
// A Config, built by `optsched pbs plan` and `optsched pbs run` from their
// flags, is the whole API: Config.Plan runs the one cycle of plan,
// Config.Loop the cycles of run, and Config.QrunName names qrun in what
// they print. TakeLock, AuditEntry, ErrLocked and ConfigError are what a
// caller needs to hold the lock, read the log and tell errors apart.
// Parsing and validating flags and printing plans belong to
// cmd/optsched; the decision, its checks and the plan's documents to
// pbsched.
//
// Error messages name the settings by the flags of optsched pbs
// (--qstat, --snapshot, --lock …), the package's one caller.
//
// The package is a sub-package of pbsched rather than part of it so that
// pbsched stays the pure pipeline from a parsed state to started jobs,
// with no process state (environment, files, locks, signals).
package cycle
