// Package slurmsched is optsched's external scheduler for Slurm: it owns
// one cycle's decision from a parsed cluster state to the scontrol
// commands that place and release held jobs.
//
//		State, Scope ──Decide──▶ Plan ──Check──▶ (Recheck on fresh state) ──Apply(Runner)──▶ Outcome
//
//	  - State is the parsed squeue --json and sinfo --json documents and
//	    the topology (scontrol show topology, or a topology.conf).
//	    ParseState reads them; every error names the document and field.
//	  - Scope says which partitions (and nodes) are optsched's. optsched
//	    owns a job that is pending in one of them, held (priority 0, as the
//	    job_submit hold guard of docs/slurm.md leaves every new job) and is
//	    neither an array's pending tasks nor waiting for a dependency.
//	  - Decide takes the owned jobs in submission order. A whole-node job
//	    (--exclusive, or one that needs every CPU of a node) needs idle
//	    nodes: these go through the topology-aware window solve of package
//	    solver (a model.Window on the idle nodes, catalog's solver, Slurm's
//	    tree best fit as the fallback). A job that shares nodes is placed
//	    by a first fit on the free CPUs and memory of the nodes, partly
//	    used nodes first, leaving the idle nodes the whole-node jobs ahead
//	    of it need.
//	  - Check derives the scheduler-neutral view of package sched from the
//	    raw documents (each node's CPUs and memory, in use and in flight;
//	    each job's demand per node, or why it may not start) and applies
//	    sched.Check's rules, which share no code with Decide: each start is
//	    an owned held job, started once, on exactly its node count of
//	    distinct, usable nodes of its partition, and no node goes over its
//	    CPUs or memory. It words each violation in Slurm's terms. Recheck
//	    applies sched.Recheck to a state read again just before acting and
//	    drops the starts that no longer hold.
//	  - Apply runs sched.Apply: each start is placed with `scontrol update
//	    JobId=J ReqNodeList=NODES NumNodes=k-k` and read back, and the jobs
//	    whose placement reads back right are committed with one `scontrol
//	    release`. What came of each start (released, or why not) is the
//	    Outcome Apply returns, a value apart from the Plan, which Apply
//	    leaves as it was.
//
// The plan's documents (Plan.Doc, the JSON of `optsched slurm plan -o
// json` and of the audit log; Plan.WriteText; Plan.Summary) take the plan
// and the Outcome (nil when the plan was not applied).
//
// Slurm has no "run this job on these nodes now": slurmctld's own
// scheduler starts a released job on its ReqNodeList, and holds any job
// that cannot run there. The README of the project's Slurm test cluster
// and docs/slurm.md record what was verified.
//
// The process around the pipeline (reading the commands, the lock, the
// audit log, signals and the loop) is package slurmsched/cycle's.
package slurmsched
