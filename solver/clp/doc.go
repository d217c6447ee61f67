// Package clp owns the LP relaxation of the M_SCAS program of [Lan23]
// §IV-A and its solution by COIN-OR CLP (through github.com/lanl/clp): it
// relaxes x ∈ {0, 1} to 0 ≤ x ≤ 1 in an encode.Program built by
// encode/scas, solves the LP with CLP's dual simplex under the caller's
// deadline, and turns the outcome into the lower bound that optsched
// reports as a result's bound (LPBound). Its Solver answers a window
// problem with that bound and an allocation rounded from the LP solution
// inside this package; it is optimal when the rounded allocation meets the
// bound (in particular when the LP optimum is integral, which the strong
// formulation often is).
//
// The package owns the translation of a neutral Program into CLP's
// column-wise packed matrix, the conversion of a context deadline into
// CLP's time limit, the safe bound (a Lagrangian bound recomputed from
// CLP's row duals, valid for any duals, so also for a solve stopped by the
// limit) and the rounding. It owns no formulation (encode/scas does) and
// imports no heuristic.
//
// CLP is a C++ library reached through cgo. A binary built without cgo
// (CGO_ENABLED=0) still compiles this package: Available is then false and
// every entry point returns ErrUnavailable.
//
// [Lan23]: Z. Lan et al., "Optimization of Topology-Aware Job Allocation on
// a High-Performance Computing Cluster by Neural Simulated Annealing", IEEE
// CLUSTER 2023.
package clp
