// Package cpolicy is optsched's CP/SAT time-and-resource scheduler
// ([Bridi16], encode/cp and solver/sat) as an online scheduling policy on
// a cluster of N identical nodes seen as a free-node counter: at every
// decision point (an arrival or an end) Policy.Decide says which waiting
// jobs start now.
//
// A decision, in order:
//
//  1. The window: the first K waiting jobs by arrival (Submit, then
//     order) that fit the cluster at all, and the running jobs with their
//     estimated ends (start + requested time; an end at or before now
//     counts as now + 1 s: the job overran and ends "soon").
//  2. Trivial cases, without a model, when no job after the window fits
//     the free nodes: nothing in the window fits them → no start; all the
//     window's jobs fit together → all start (the lower bound
//     Σ ω_i·EST_i is reached).
//  3. The model: one pseudo-node whose capacity is the cluster's usable
//     nodes (free + the running jobs' nodes) of one resource "nodes";
//     every job is one unit needing its node count of it, every running
//     job holds its nodes until its estimated end — one cumulative
//     resource, no placement. The grid g is chosen per decision so that
//     the planning horizon (the running jobs' last end plus the waiting
//     jobs' total area over the capacity, plus the longest request) is
//     about Policy.Slots slots; slot 0 is now. Objective "bsld" weights
//     each job's queue time by 1/max(Request, 10) s (the bounded-slowdown
//     weights, on requested times), rounded to the nearest of 2^k and
//     3·2^(k−1) seconds — one queue per distinct weight, whose expected
//     wait is that value — so that the weights stay exact integers
//     (encode/cp's Scale: their least common multiple); "wait" is Bridi et
//     al.'s weighted queue time with one queue: the plain sum of waits.
//  4. Seeds: serial list schedules on the counter (each job, in a
//     priority order, at the earliest slot where it fits for its whole
//     duration beside the running jobs and the jobs before it —
//     conservative backfilling): Smith's rule on area (ω_i/(request·n_i),
//     largest first), smallest first, FCFS and WFP3 (see rules for why
//     not shortest first or F1). The best by the model's weighted
//     objective Σ ω_i s_i is the incumbent; when it reaches the lower
//     bound Σ ω_i EST_i it is optimal and the solver is not called.
//  5. The search: solver/sat, seeded with that incumbent and the catalog's
//     PBS list schedules (catalog.ListSchedulers), improves it within the
//     limit. Its schedule is used when it passes model.Check and is
//     strictly better than the seed (or proven optimal); otherwise (error, nothing found, time out) the
//     seed answers.
//  6. The jobs the schedule starts at slot 0 start now. Then backfilling:
//     the next Policy.Backfill waiting jobs after the window (default
//     256, by arrival, those that fit the cluster) each start now when
//     it fits, for its whole request on the grid, in the capacity the
//     running jobs, the window's schedule and the jobs backfilled before
//     it leave — no window job's planned start moves. Without it, a
//     window whose jobs cannot start (on an overloaded log, the oldest
//     128 jobs are the widest) leaves nodes idle however many small jobs
//     wait behind it. The nodes started sum to at most the free nodes
//     (checked again), and the schedule acted on, backfilled jobs
//     included, passes model.Check (here, or by the caller:
//     Policy.CallerChecks).
//
// The seeds are computed on a plan read straight from the arguments
// (grid, running end slots, per job its earliest start, duration and
// weight, as encode/cp's Build reads the window; TestPlanAsModel); the
// window and cp.Build are made only for the search and the check.
//
// Why seeds and a search rather than the search alone: one decision
// has tens of milliseconds, in which solver/sat rarely proves a window of
// a hundred jobs; the serial schedules cost microseconds and already
// embody the rules that do well on bounded slowdown (shortest first,
// backfilling), and the search can only improve on the best of them.
//
// [Bridi16]: T. Bridi, A. Bartolini, M. Lombardi, M. Milano, L. Benini,
// "A Constraint Programming Scheduler for Heterogeneous High-Performance
// Computing Machines", IEEE TPDS 27(10), 2016.
package cpolicy
