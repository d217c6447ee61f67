// Package itest is the Slurm integration suite of optsched slurm: it runs
// the optsched binary against a real Slurm 22.05 cluster (16 nodes of 4
// CPUs and 8000 MB, topology/tree with leaves of 4, the repository's
// hold guard as job_submit.lua) and checks what Slurm reports afterwards
// (squeue --json, sinfo --json, the exit codes of Slurm commands) and
// optsched's exit codes and audit log, never optsched's printed words.
//
// The suite needs Slurm installed and the shared/slurm scripts
// (slurm-up.sh runs the cluster in private namespaces; install-slurm.sh
// installs Debian's packages). make itest runs it through run.sh, which
// builds bin/optsched and the test binary (go test -c -tags slurmitest)
// and runs the binary inside slurm-up.sh. The tests are behind the build
// tag slurmitest; run outside a cluster, they skip and say what they
// need.
package itest
