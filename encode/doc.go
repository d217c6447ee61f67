// Package encode owns the formulations of a window: it turns a
// model.Window into a neutral mathematical model and decodes a solution of
// that model back into model.Allocations. It knows no solver: the solvers
// in package solver consume what it produces, and its writers hand the same
// models to outside solvers.
//
// This package holds the neutral sparse 0-1 program (Program) and its LP
// (lp_solve syntax) and free-MPS writers. Sub-packages build formulations:
//
//   - encode/scas: the M_SCAS 0-1 program of [Lan23] §IV-A, in the paper's
//     form and a strong form;
//   - encode/csp: the constrained-shortest-path graph of [Lan23] §IV-B.
//
// [Lan23]: Z. Lan et al., "Optimization of Topology-Aware Job Allocation on
// a High-Performance Computing Cluster by Neural Simulated Annealing", IEEE
// CLUSTER 2023.
package encode
