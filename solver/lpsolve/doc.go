// Package lpsolve owns the exact solution of the M_SCAS 0-1 program of
// [Lan23] §IV-A by lp_solve 5.5, reached through
// github.com/draffensperger/golp. Its Solver builds the program with
// encode/scas (strong or paper formulation), loads it into a golp model —
// binary columns, sparse rows (AddConstraintSparse), minimisation — solves
// it by lp_solve's branch and bound under the caller's deadline, decodes the
// incumbent into allocations, and checks it: the solution must satisfy the
// program's rows, and lp_solve's objective must agree within 0.5 with the
// CH cost recomputed from the allocation (solver.Objective), which is the
// objective reported.
//
// The package owns the translation of a neutral encode.Program into golp's
// API, the deadline, and the mapping of lp_solve's result codes:
//
//	OPTIMAL                    → Optimal, Bound = Objective
//	SUBOPTIMAL (stopped, with  → Feasible, the incumbent
//	           an incumbent)
//	USERABORT / TIMEOUT        → Unknown (no incumbent: lp_solve's objective
//	                             then reads 1e30 and is never decoded)
//	INFEASIBLE                 → Infeasible
//	anything else              → error
//
// A proof lp_solve reports after the deadline or a cancellation has hit is
// not trusted (OPTIMAL becomes Feasible, INFEASIBLE Unknown).
//
// # The deadline
//
// Every stage watches the context. Solve returns Unknown at once when it
// is already done. Encoding cannot be interrupted (the paper form of a
// large window takes 200–500 ms), so under a context that can end it runs
// in a goroutine that Solve stops waiting for; the goroutine finishes on
// its own and only reads the window. Loading looks at the clock every 256
// rows: lp_solve spends some 10–20 µs per row added (in its own
// append_rows, whatever the row's length, so 10⁵-row paper forms take
// seconds to load). The search is stopped by the shim's abort callback.
// lp_solve polls it between simplex iterations and B&B nodes, so a stop
// lands at the next poll: TestDeadline sees Solve return within a few
// milliseconds of a 300 ms deadline on the shipped windows.
//
// # The shim
//
// golp's SetTimeout takes whole seconds, and golp binds neither an abort
// hook nor the MIP gap. A small cgo shim in this package (shim.go) calls
// lp_solve on golp's model for exactly these:
//
//   - put_abortfunc: a C callback, polled by lp_solve wherever it checks
//     its own timeout (every simplex iteration and B&B node), returns TRUE
//     once a deadline on CLOCK_MONOTONIC has passed or a cancellation flag
//     is set. The deadline is the context's, converted to a budget when
//     the solve starts; the flag is set by a goroutine that watches
//     ctx.Done(). Both live in a malloc'd control block, so C never holds a
//     Go pointer and lp_solve never calls into Go. The callback is sticky
//     (it keeps returning TRUE), so no path in lp_solve can lose the stop.
//   - set_mip_gap: absolute and relative gaps both set to 1e-11, so that
//     OPTIMAL means optimal (the Debian build's defaults are 1e-11 and
//     1e-11, its documentation says 1e-11 and 1e-9).
//   - put_logfunc and set_outputfile(""): lp_solve prints nothing of its
//     own; with Solver.Verbose set, its report lines (verbosity NORMAL) are
//     collected in C and written to Verbose when the solve ends (up to
//     4 MiB). Without Verbose the verbosity is NEUTRAL.
//   - get_total_iter and get_total_nodes, read-only, for Result.Stats.LP.
//   - put_msgfunc (only when the problem has a Publisher): a C callback
//     marks MSG_MILPFEASIBLE and MSG_MILPBETTER, which lp_solve sends just
//     before it copies an improved solution into best_solution; at its
//     next poll the abort callback copies the columns (get_ptr_variables)
//     into the control block under a mutex. Solve's watching goroutine
//     looks every 5 ms, checks a new copy against the program, decodes it
//     and publishes it, so that a Portfolio that must abandon lp_solve
//     keeps its incumbent.
//
// The shim needs the lprec pointer that golp keeps in the unexported field
// LP.ptr. It reads it with reflect after checking the field's name and
// type, so that a golp release with another layout is an error rather
// than memory corruption. golp frees the C model in a finalizer and does
// not keep its *LP alive across its own C calls, so Solve keeps the *LP
// reachable (runtime.KeepAlive) until its last use of the handle.
//
// # Concurrency
//
// lp_solve handles are not safe for concurrent use, but nothing here
// shares one: every Solve makes, uses and drops its own model and control
// block, so concurrent Solves (on one Solver value or several) are fine.
// The first Solve makes one throw-away model alone, so that lp_solve's
// process-wide BLAS table is initialised before any concurrency. A shared
// Verbose writer must itself be safe for concurrent writes.
//
// # Stats
//
// Result.Stats.LP (solver.LPStats) holds rows, cols and nonzeros of the
// program, iterations (simplex) and nodes (branch and bound) from lp_solve,
// lp_status (lp_solve's result code), the wall time of lp_solve's solve
// and the formulation (strong or paper).
//
// lp_solve is a C library reached through cgo and linked dynamically
// (LGPL); CGO_CFLAGS and CGO_LDFLAGS must point at it (the Makefile sets
// them for Debian's liblpsolve55-dev). A binary built without cgo
// (CGO_ENABLED=0) still compiles this package: Available is then false and
// Solve returns ErrUnavailable.
//
// [Lan23]: Z. Lan et al., "Optimization of Topology-Aware Job Allocation on
// a High-Performance Computing Cluster by Neural Simulated Annealing", IEEE
// CLUSTER 2023.
package lpsolve
