#!/bin/sh
# optsched pbs plan for pbs01 (PBS 2022.1.1.20220926110806), state at 2023-11-14T22:13:20Z
# input sha256 41e8acdd7ea3c299b2c312584995b18da2a35429fba301462cf9691cf0ef5abf
# vnodes: 7 owned: 4 idle, 1 partly used, 2 not free (2 job-exclusive); 9 ignored
# topology: vnode resources tier0, tier1: 5 switches, 2 levels
# whole-node window: 1 jobs, optimal by csp, CH cost 500, bound 500, gap 0.000%, T
# partial-node schedule: 2 jobs, optimal by sat, total queue time 1000 s, T
rc=0
# 103.pbs01 (queue workq): partial-node, placed by sat (chunks share vnodes), 1 vnode
qrun -H "(n005:mem=16gb:ncpus=8)" -- 103.pbs01 || rc=1
# 101.pbs01 (queue workq): whole-node, placed by csp (place=excl), 2 vnodes, CH cost 500
qrun -H "(n003:mpiprocs=64:ncpus=64)+(n004:mpiprocs=64:ncpus=64)" -- 101.pbs01 || rc=1
# 106.pbs01 (queue workq): partial-node, placed by sat (chunks share vnodes), 1 vnode
qrun -H "(n009:mem=64gb:ncpus=16:ngpus=2)+(n009:mem=64gb:ncpus=16:ngpus=2)" -- 106.pbs01 || rc=1
# deferred (3):
#   111.pbs01: can never run on optsched's vnodes: chunk 1 (ncpus=8:ngpus=8) fits no vnode even when it is empty
#   102.pbs01: needs 3 whole vnodes, 2 idle vnodes left after higher-priority jobs; no reservation yet (reservations after a wait of 24h0m0s (now 13m20s)): jobs behind it start when they fit
#   107.pbs01: can never run on optsched's vnodes: needs 12 whole vnodes, optsched has 7
# skipped (3 queued jobs optsched does not start):
#   104.pbs01: queue prod is a routing queue, not an execution queue
#   108[].pbs01: job array: qrun starts its subjobs one by one, each a job of its own in qstat -t (read without -t, they are not listed)
#   112.pbs01: queue debug is not started
exit "$rc"
