// Package limits owns the deadline and memory sweep of `optsched bench
// limits`: it checks the promises of `optsched solve` that every solve
// returns within its --time-limit plus 50 ms measured inside the process
// (the elapsed_ms of the JSON answer), that the process returns within the
// limit plus its start-up, and that the peak memory of a solve stays under
// 1 GiB on windows of up to 10,000 nodes and 200 jobs, on every path.
//
// The sweep generates the windows of each window class (Classes) into a
// folder, then runs every cell — class × solver (Solvers) × time limit —
// on each window as a child process, `optsched solve --time-limit L
// [flags] -o json FILE`, one at a time (runs in parallel would distort the
// timing measured). Of each run it keeps the status and elapsed_ms of the
// answer, the process's wall time taken around the exec, and its peak
// resident set size from the operating system's resource usage (Run).
// Summarise reduces the runs to cells (worst and p99 overshoot, median
// elapsed, worst wall time, peak RSS, statuses, failures), Judge to a
// verdict against the promises, and Print writes the tables.
//
// On Linux a child's peak RSS as the kernel reports it is at least the
// parent's own peak at the time of the fork (the child shares the
// parent's memory until it execs), so before every run the sweep returns
// its free memory to the system and resets its own peak
// (/proc/self/clear_refs); each run records the floor that remains.
//
// The package may import every other optsched package; nothing imports it
// but the command.
package limits
