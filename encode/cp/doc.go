// Package cp owns the constraint model of the time-and-resource reading
// of a window, after T. Bridi et al., "A Constraint Programming Scheduler
// for Heterogeneous High-Performance Computing Machines", IEEE TPDS 2016
// ([Bridi16]): when and where every waiting job starts on a heterogeneous
// cluster. It knows no solver; encode/cnf turns a Model into CNF.
//
// Times are slots of a grid: slot s is the time t + s·g (t the window
// time, g the granularity). A job i runs over [t + s_i·g, t + s_i·g + d_i)
// for its walltime d_i, so two jobs overlap exactly when
// s_i < s_j + D_j and s_j < s_i + D_i with D = ⌈d/g⌉; the only
// approximation is that starts lie on the grid. When walltimes, running
// jobs' ends and reservation bounds are multiples of g from t
// (Model.GridExact), the best schedule on the grid is the best over all
// start times: some optimal schedule starts every job at t or at an end
// of another job, a running job or a reservation.
//
// The model, in the paper's vocabulary (each documented with its
// decomposition in encode/cnf):
//
//   - interval variables: one start s_i per waiting job, in slots, with
//     domain [EST_i, ∞) — EST_i the earliest slot at which the job fits
//     alone beside the running jobs and the reservations;
//   - alternative(job_i, [unit placements], u_i): the job's u_i units go to
//     nodes, units_{i,n} of them to node n, Σ_n units_{i,n} = u_i, several
//     on one node as far as its capacities allow (place=pack: one node;
//     place=scatter, and whole-node jobs: at most one per node);
//   - synchronize(job_i): all units of a job start at s_i — structural
//     here, as every unit shares the job's one start variable;
//   - cumulative(node n, resource l): at every time the running jobs'
//     use and Σ_i units_{i,n}·r_{i,l} over the jobs running then stay
//     within n's capacity of l;
//   - noOverlap(node n): a reservation or maintenance interval excludes
//     every job from n; an exclusive job (place=excl, or a job of whole
//     nodes) shares n with no other job while it runs.
//
// The objective is Bridi et al.'s Eq. (2), the weighted queue time
// Σ_i (s_i − submit_i)/ewt_{q_i}; on the grid it is an affine function of
// Σ_i ω_i·s_i with integer weights ω_i = Scale/ewt_{q_i} (Scale the least
// common multiple of the expected waits), which is what encode/cnf
// bounds.
//
// Model.SetCHWeight optionally adds W·Σ_i CH_i, the communication-hop
// cost of each job's node set as the window's cost model prices it
// (model.CostModel.Cost, the SCAS side's definition), to the objective;
// the weights are scaled so that its coefficient κ is an integer too.
//
// Model.Pool derives a counting relaxation of a Model — one pseudo-node,
// per resource, threshold c and node set the pooled counts Σ_n ⌊free/c⌋,
// no placement — whose optimum bounds the model's from below (solver/sat
// uses it to prove bounds).
//
// The feasibility rules are model.Check's, which this package does not
// share code with.
//
// [Bridi16]: T. Bridi, A. Bartolini, M. Lombardi, M. Milano, L. Benini,
// IEEE TPDS 27(10), 2016.
package cp
