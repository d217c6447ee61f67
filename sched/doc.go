// Package sched is the scheduler-neutral core of optsched's external
// schedulers: what one cycle decides and does, in terms that no batch
// server's documents or commands appear in. Each server is an adapter
// around it (pbsched for OpenPBS, slurmsched for Slurm) that translates
// its documents into a View and a Plan, and a Plan's starts into its
// commands through a Runner:
//
//		documents ──adapter──▶ View ──planner──▶ Plan ──Check(View)──▶ Recheck(fresh View) ──Apply(Runner)──▶ Outcome
//
//	  - A View is the cluster as one cycle reads it: its nodes (capacity
//	    per resource: CPUs, memory, GRES; what is in use; whether the node
//	    takes new jobs and whose it is), the allocations the server does
//	    not count yet, and the waiting jobs the cycle may start, each with
//	    its demand per node and, when it may not start at all, why.
//	  - A Plan is a plain value: the starts in order, each a job and the
//	    nodes of its chunks, and the server's text of that placement.
//	  - Check applies rules of its own, sharing no code with any planner
//	    (N-version checking), to a Plan and the View it was made from:
//	    each start is a waiting job of the View that may start, started
//	    once, on exactly its chunk count of existing nodes (distinct,
//	    unless the job's chunks stack on a node, as PBS's do) that are the
//	    scope's, in its pool, not excluded and up for new jobs; no start
//	    takes a node over any resource's capacity with what it has in use,
//	    what is in flight and the starts before it; a job that takes whole
//	    nodes (all of them, or some by the node's own policy) gets nodes
//	    with nothing in use and no other start. Its answer is a list of
//	    Violations, values that the adapter words in its server's terms.
//	  - CheckHold applies a Hold (EASY backfilling's reservation for the
//	    first job that does not fit now) to a Plan: the held job waits,
//	    and the starts ranked behind it end by its shadow time or take
//	    only the nodes it leaves, by the empty times and order the adapter
//	    derives from its documents.
//	  - Recheck keeps, in order, the starts that a View read again just
//	    before acting still allows together with the starts kept before
//	    them, and returns the others with their violations.
//	  - Apply runs the starts through a Runner, one at a time, then commits
//	    those that succeeded in one batch when the Runner is also a
//	    Committer (Slurm's release). Its Outcome is a value apart from the
//	    Plan: a Result per start and the commit's error.
//
// The package imports no optsched package: the planners (the window
// solve, the first fit, the CP schedule) and everything a server's
// documents say beyond the View stay in the adapters.
package sched
