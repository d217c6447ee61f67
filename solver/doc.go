// Package solver owns the contract every window solver and heuristic
// fulfils — the Solver interface, the Problem it is given and the Result
// it returns (status, objective, bound, gap, allocation, statistics) — and
// the pipeline around it: job selection, the solve under a context
// deadline, first-fit placement of one-node jobs, and the independent
// feasibility check (model.Check) before anything is returned.
//
// Exact backends live in sub-packages; heuristics live in package
// heuristics and implement the same interface. Solvers are built by name
// in package catalog, never by import side effects.
package solver
