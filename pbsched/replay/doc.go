// Package replay is the OpenPBS / PBS Professional back end of
// bench/replay (`optsched replay --server pbs`): it submits a replay's
// jobs with qsub, reads their records with qstat -fx -F json, deletes them
// with qdel and reads the vnodes and their topology with pbsnodes -av -F
// json, each command run with a timeout that bounds its children too.
//
// It touches only the jobs it submitted: Server remembers every id qsub
// returned, and Delete refuses any other id without running qdel. The
// topology is read as pbsched's Scope reads it (Scope.Topology: the
// tier0/tier1 vnode resources by default), over the vnodes with CPUs.
//
// It translates documents and commands only; the schedule of
// submissions, the waiting and the metrics are bench/replay's.
package replay
