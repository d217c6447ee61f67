// Package encode owns the formulations of a window: it turns a
// model.Window into a neutral mathematical model (a sparse 0-1 program for
// the M_SCAS program of [Lan23] §IV-A, a constrained-shortest-path graph for
// §IV-B, CNF for the CP/SAT model of [Bridi16]) and decodes a solution of
// that model back into model.Allocations. It knows no solver: solvers in
// package solver consume what it produces, and its writers (LP, MPS, DIMACS)
// hand the same models to outside solvers.
//
// The formulations arrive with their issues; this package is empty until
// then.
package encode
