// Package sat is optsched's exact time-and-resource scheduler: the
// constraint model of Bridi et al. (encode/cp), encoded to SAT
// (encode/cnf) and solved by gini, with a proven lower bound inside the
// time limit.
//
// The search, for one window:
//
//  1. The list schedulers it is given (heuristics.PBSWalltime and
//     heuristics.PBSFifo from the command line) and, with them, serial
//     schedules of its own (the serial schedule generation scheme with
//     the heaviest jobs first, weight per slot, earliest first, then
//     perturbed orders: swaps and moves, ties accepted) supply the first
//     incumbent, an upper bound W_UB on W = Σ_i ω_i·s_i. With
//     LB = Σ_i ω_i·EST_i, every better schedule has
//     ω_i·(s_i − EST_i) ≤ W_UB − LB − 1, which bounds each job's start
//     domain.
//  2. A first short search (5 % of the time left, at least 20 ms; steps
//     3–5 below) proves many windows at once. Otherwise, lower bounds:
//     the Lagrangian bound of the time-indexed relaxation (timeIndexed:
//     a start variable per candidate slot and a unit variable per node,
//     node capacities at every candidate slot, solved by subgradient
//     steps on the capacity rows; up to 26 jobs and 80,000 candidate
//     starts, 30 % of the remaining time, with reduced-cost fixing: a start whose bound with the job
//     held there reaches the incumbent leaves the last search's domain,
//     and one whose bound exceeds a probe's b is excluded for that probe,
//     cnf.Encoder.Exclude — some better schedule, if any, is
//     left-justified and starts no job there); where it did not run, the
//     optimum of the counting relaxation cp.Model.Pool (up to 24 jobs),
//     and group bounds — the jobs partitioned (by the incumbent's
//     contention: a delayed job with the jobs holding, before its start,
//     nodes it fits on, which gets half the time; by its blocking pairs,
//     by queue weight, by node set; groups of 8, then 12 and 16), each
//     group the incumbent delays solved alone by this same search (the
//     others removed: a relaxation), the groups' proven bounds added. The larger
//     starts the proof, and the groups (or, without a partition, one
//     group with the pool's bound) go into the objective diagrams
//     (cnf.ObjectiveGroups) of a second search, and narrow the start domains: a schedule better than
//     W_UB leaves a job of group g at most W_UB − LB − (the other groups'
//     bounds) of weighted delay. Every search also writes cnf.LeftJustified's
//     dominance clauses, and restricts each job's start to its
//     candidates in the compressed time domain (cnf.Closure: the window
//     time, the running jobs' and reservations' ends, and the ends of the
//     other jobs sharing its nodes at their own candidates, within its
//     domain; the grid with Solver.Grid, or when the closure is over its
//     work limit — stats "closure_fallback"). Some optimal schedule is
//     left-justified and lies there, so this keeps the optimum and every
//     UNSAT proof; the stats "domain_slots" and "domain_candidates" count
//     the slots of the domains before and after. The last search (after
//     the bounds) also holds the counting relaxation's constraints as
//     redundant clauses (cnf.Encoder.PoolCuts): cluster-wide counts that
//     per-node placement hides from the solver.
//  3. Bound tightening under assumptions: the solver is asked for a
//     schedule with Σ ω_i (s_i − EST_i) ≤ b (one assumed literal of the
//     objective diagram), first b = W_UB − LB − 1 (linear SAT-UNSAT
//     search from above). A model is checked against the cumulative and
//     noOverlap constraints between waiting jobs; those it violates are
//     added (the node block of the job and node where it failed, for the
//     node's whole symmetry class) and the solver asked again — a lazy,
//     complete decomposition. A model that violates nothing is a new
//     incumbent, and the bound tightens. UNSAT at b proves the optimum
//     above b.
//  4. Every probe has a time slice. When a probe from above runs out of
//     it, serial schedules around the incumbent (its start order,
//     perturbed) and then — with Solver.LNS or a CH term only —
//     large-neighbourhood moves try to improve the incumbent for a slice
//     (a few jobs freed: a delayed job and the jobs starting nearest to
//     it; the others fixed by assumptions; an objective diagram over the
//     freed jobs only), and then one probe from below,
//     b = proven + step − 1, tries to raise the proven bound (the step
//     doubles after UNSAT, halves after a timeout). The slice doubles
//     when probes from above and below both time out. With two threads
//     (GOMAXPROCS ≥ 2; not with Solver.Sequential) the last search has a
//     prover beside it: a second encoding on its own gini instance that
//     only probes from below, b = proven + step − 1 capped below the
//     incumbent; both share the incumbent and the proven bound as either
//     improves them, and the prover stops with the proof or the deadline.
//  5. UNSAT right below the incumbent proves it optimal. At the deadline
//     the incumbent is returned with the proven bound (status feasible,
//     or fallback when no SAT model improved the list or serial
//     schedule); with no
//     incumbent at all, status unknown.
//
// Every improving incumbent of the whole window (list, serial, SAT or
// neighbourhood) and every rise of its proven bound (with exact weights)
// is published to the problem's solver.ScheduleProblem.Publisher as it
// comes, the two workers of the last search through one guard so that
// each published one improves on the last; the sub-searches of the
// bounds (groups, counting relaxation) publish nothing.
//
// The time limit is spent by a fixed plan, each phase taking a share of
// the time left when it begins, never past the deadline: the serial
// schedules 10 % (at most 150 ms), the quick search 5 % (at least
// 20 ms), the time-indexed relaxation 30 %, the counting relaxation 15 %,
// the group bounds 35 %, and the last search all that is left. A phase
// that does not run, or ends early, leaves its time to the next.
//
// Solver's fields are its options; Solver.Ablation switches parts of the
// steps above off (the serial schedules, the relaxations, the group
// bounds, the dominance clauses, the pool cuts, the fixing, the lazy node
// blocks), to measure what each gives.
//
// With Solver.CHWeight W > 0 the objective is Eq. (2) + W·Σ_i CH_i, CH_i
// the window's cost model's price of job i's node set (cp.Model.
// SetCHWeight, cnf.Encoder.CHTerm): the same search, whose diagrams add
// the CH levels; the lower bounds above stay valid (every CH_i ≥ 1).
//
// Optimality is over starts on the time grid (cp.Model.GridExact tells
// when that is optimality over all start times) and for the jobs that can
// ever start; the others are deferred.
//
// ExportWindow writes a window's complete CNF for an outside solver
// (`optsched export --format cnf`): the model, a bound from an objective
// or one better than baseline schedules (BaselineBound, ObjectiveBound),
// and EncodeBounded's clauses, with Comments for the DIMACS header.
package sat
