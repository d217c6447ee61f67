// Package trace owns the workload traces that drive optsched's window-based
// simulator (bench/sim): it reads them into a Trace, a list of Jobs sorted by
// submit time with the cluster size the trace declares, and it knows nothing
// of topologies, windows or solvers.
//
// Two formats are read:
//
//   - Lan: the trace published with [Lan23] (data/data_large_1800_40.txt of
//     the authors' code), one job per line as "id arrival runtime nodes"
//     (seconds, seconds, whole nodes). The paper's simulator allocates by the
//     actual run time, so a Lan job's Walltime is its Runtime. ReadLan.
//   - SWF: the Standard Workload Format of the Parallel Workloads Archive
//     [PWA14]: header lines start with ';' ("; MaxNodes: 100"), and each job
//     is a line of 18 whitespace-separated numbers, -1 meaning unknown.
//     Processor counts become whole nodes by ProcsPerNode. ReadSWF.
//
// Open reads either from a file, gzip-compressed or not (detected by the
// magic bytes, not the name).
//
// ScaleSWF writes an SWF log reshaped to archive scale — processor counts
// scaled to a given largest job, the size header dropped, shifted copies
// up to a job count — to test the simulator on real arrival patterns at
// sizes the shipped logs do not have (optsched bench scale-swf).
//
// Memory is bounded by the input: a line longer than 1 MiB is an error, the
// header is at most 1 MiB, and Options.MaxJobs stops reading early. Readers
// never panic on any input; malformed job lines are errors naming the line
// and the reason, or with Options.SkipBad are skipped and counted.
//
// Results on an archive log must acknowledge the archive [PWA14] and the
// log's donor (the header's "Acknowledge" field).
//
// References:
//
//   - [Lan23] Z. Lan et al., "Optimization of Topology-Aware Job Allocation on
//     a High-Performance Computing Cluster by Neural Simulated Annealing",
//     IEEE CLUSTER 2023 (arXiv:2302.03517).
//   - [PWA14] D. G. Feitelson, D. Tsafrir, D. Krakov, "Experience with using
//     the Parallel Workloads Archive", J. Parallel Distrib. Comput. 74(10),
//     2014. The Standard Workload Format is defined at
//     https://www.cs.huji.ac.il/labs/parallel/workload/swf.html.
package trace
