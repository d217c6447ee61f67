// Package runloop holds the scheduler-neutral pieces of an external
// scheduler's daemon, shared by optsched's PBS cycle (pbsched/cycle) and
// its Slurm cycle (slurmsched/cycle):
//
//   - TakeLock, the flock(2) lock file that keeps cycles one at a time on
//     a host;
//   - AppendJSONLine, one line of a JSON-lines audit log, written with one
//     write call;
//   - Graceful, the SIGINT and SIGTERM handling of cycles that act (the
//     first signal stops after the cycle in flight, a second aborts it);
//   - WakeSignals and the pid file of a daemon woken by SIGUSR1;
//   - Loop, the daemon loop that runs a cycle every interval or soon after
//     a wake-up, until a count, a signal or its context ends it;
//   - Exec and BoundProcess, a server's client command run with a timeout
//     that kills its children too (Commands is what the callers take, so
//     that tests can answer from fixtures).
//
// It imports no optsched package: what a cycle reads, decides and logs
// belongs to its caller.
package runloop
