// Package replay is the Slurm back end of bench/replay (`optsched replay
// --server slurm`): it submits a replay's jobs with sbatch, reads their
// records from squeue --json (which lists finished jobs too, for
// slurmctld's MinJobAge), cancels them with scancel, and reads the nodes
// with sinfo --json, the switch tree with scontrol show topology and the
// cluster's name with scontrol show config; each command runs with a
// timeout that bounds its children too (runloop.Exec).
//
// A job of C chunks is `sbatch --nodes=C --exclusive --time=W --wrap
// "/bin/sleep S"`: C whole nodes, which is what PBS's select=C:ncpus=P
// with place=excl asks of vnodes of P CPUs. Slurm keeps time limits in
// whole minutes and rounds a limit in seconds up to the next minute.
//
// It touches only the jobs it submitted: Server remembers every id sbatch
// returned, and Delete refuses any other id without running scancel. It
// reads the documents with package slurmsched's parsers (ParseJobs,
// ParseNodes, TopologyConf, State.Tree), as `optsched slurm` reads them.
//
// It translates documents and commands only; the schedule of
// submissions, the waiting and the metrics are bench/replay's.
package replay
