// Package replay measures a batch scheduler on a workload: it submits a
// time-compressed slice of an SWF log to a real server, waits for every job
// it submitted to finish, and computes the metrics from the server's own
// records of those jobs (`optsched replay`).
//
// The pipeline:
//
//		SWF log ──Plan(Mapping)──▶ []Job ──Run(Backend)──▶ []Record ──Compute──▶ Report
//
//	  - Plan takes jobs K..K+N−1 of a log read by bench/trace and compresses
//	    them by a speedup S: job k is submitted (submit_k − submit_K)/S after
//	    the first, runs `sleep round(run_k/S)` and asks for a walltime of
//	    ⌈request_k/S⌉ + pad (request = the SWF requested time, or the run
//	    time when unknown). Its processors become chunks by the Mapping:
//	    chunks = ⌈procs × nodes / MaxProcs⌉ (1..nodes), each chunk
//	    NCPUs CPUs, whole nodes (PBS place=excl, Slurm --exclusive).
//	  - Run submits each job at its time through a Backend, polls the
//	    records until every submitted job has finished, and on a timeout or
//	    a cancelled context deletes the unfinished jobs it submitted — no
//	    others.
//	  - Compute derives, per job, wait = start − queued, run = the server's
//	    used walltime (at least 1 s), the bounded slowdown
//	    max(1, (wait + run) / max(run, 10 s)), and the CH cost of the job's
//	    node set ([Lan23] Eq. 1, lan-code, on the Cluster's topology); and
//	    over the run: jobs that ran, failed (non-zero exit) and never ran,
//	    mean and largest wait and bounded slowdown, makespan (first queued
//	    to last end), utilisation (node-seconds used / (nodes × makespan))
//	    and the mean CH cost of the multi-node jobs.
//
// A Backend is one server kind: Cluster (its compute nodes and topology),
// Submit, Records and Delete. pbsched/replay is the OpenPBS / PBS
// Professional one (qsub, qstat -fx, qdel, pbsnodes); slurmsched/replay
// the Slurm one (sbatch --nodes=C --exclusive, squeue --json, scancel,
// sinfo --json and scontrol show topology). The back ends know nothing
// of logs or metrics, and this package nothing of any server's commands:
// one driver and one set of metrics serve both.
//
// References:
//
//   - [Lan23] Z. Lan et al., "Optimization of Topology-Aware Job
//     Allocation on a High-Performance Computing Cluster by Neural
//     Simulated Annealing", IEEE CLUSTER 2023 (arXiv:2302.03517).
//   - [PWA14] D. G. Feitelson, D. Tsafrir, D. Krakov, "Experience with
//     using the Parallel Workloads Archive", J. Parallel Distrib. Comput.
//     74(10), 2014.
package replay
