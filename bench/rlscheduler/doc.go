// Package rlscheduler reproduces the benchmark of RLScheduler (D. Zhang,
// D. Dai, Y. He, F. S. Bao, B. Xie, "RLScheduler: an automated HPC batch
// job scheduler using reinforcement learning", SC'20; code in the
// repository DIR-LAB/deep-batch-scheduler), the most used public benchmark
// of batch-scheduling policies, and adds what it lacks: an optimising
// policy and a proven bound on what any policy could reach.
//
// The protocol, as the published code runs it (followed here as facts,
// not as code):
//
//   - Loading (Load): processors = max(allocated, requested); requested
//     time = field 9, or the run time where field 9 is exactly -1; a run
//     time below 0 becomes 10, a run time of 0 drops the job; jobs sorted
//     by job number; submit times stay absolute. Jobs always run their
//     real run time.
//   - Cluster: a counter of free nodes, MaxNodes nodes of MaxProcs/MaxNodes
//     processors (MaxProcs missing: = MaxNodes); a job takes
//     ⌈processors / per node⌉ nodes. No placement.
//   - Sequences: 1,024 consecutive jobs from each of ten start positions
//     (Starts); a sequence starts on an empty cluster at its first job's
//     submit time and ends when its last job starts.
//   - Decisions (Replay): the whole queue is stable-sorted by the
//     policy's key and its head taken; if it fits it starts at once and
//     the next head is chosen at the same time; if not, time advances one
//     event at a time (the next arrival if due no later than the next
//     finish, else one finish) with the head fixed until it fits.
//     Arrivals join the queue one at a time, only while the head waits
//     or when the queue is empty.
//   - Their backfilling: when the head does not fit, its reservation is
//     computed once from the running jobs' start + requested time; after
//     every event the queue is re-sorted by submit time and every job
//     that fits now and would end strictly before the reservation (on its
//     requested time) starts. It is not EASY: there is no "extra nodes"
//     rule.
//   - Keys (s submit, r requested time, n processors): FCFS s; SJF (r, s);
//     F1 log10(r)·n + 870·log10(s) (0.1 for a non-positive argument);
//     WFP3 −(w/r)³·n and UNICEP −(w + 1e−15)/(log2(n + 1e−15)·r) with the
//     published code's waiting time w = −1 − s (its scheduled time is
//     still −1 when the key is read); the intended forms, w = now − s,
//     are the policies wfp3-intended and uni-intended.
//   - Score: a job's bounded slowdown is max(1, (wait + run)/max(run, 10))
//     on its real run time; a sequence scores the mean over its jobs and
//     a cell the mean over the sequences.
//
// Beside the published policies the package runs, on a proper
// event-driven simulation of the same cluster (every arrival due joins
// the queue, every finish releases at its time): EASY (FCFS with EASY
// backfilling, extra nodes included) and cp, optsched's CP/SAT
// time-and-resource scheduler deciding at every event which jobs start
// (bench/cpolicy). And for every sequence an offline lower bound on the
// sum of bounded slowdowns any schedule can reach (bench/offline), with
// each policy's gap to it.
package rlscheduler
