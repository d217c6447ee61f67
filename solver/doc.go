// Package solver owns the contract every window solver and heuristic
// fulfils, in both models: the whole-node model (the Solver interface and
// the Problem it is given) and the time-and-resource model (the Scheduler
// interface). Both answer with the one answer core, Answer[O] (status,
// objective, bound, gap, allocation, statistics; Result for the first
// model, its objective an int64 CH cost, and Schedule for the second, a
// float64 weighted queue time), and both go through one pipeline
// (SolveWindow and ScheduleWindow share within): the solve under a context
// deadline with a reserve kept for the checks, job selection and
// first-fit placement of one-node jobs in the whole-node model, and the
// independent feasibility check (model.Check) before anything is returned,
// a failing answer being an ErrSolverBug error.
//
// An answer's statistics are typed (Stats: a struct per solver family,
// with stable JSON names). An exact whole-node solver publishes its
// incumbents and bounds as they improve to the Problem's Publisher
// (Problem.Publish); a Portfolio gives its exact solver a Board there, so
// that what the solver found stands when it must be abandoned. An exact
// scheduler (sat, bnb) publishes likewise to ScheduleOptions.Publisher
// (PublisherOf is the one interface, for either objective type);
// ScheduleWindow gives it a ScheduleBoard and makes its answer carry what
// it published (schedulers run to their return: none is abandoned).
//
// Exact backends live in sub-packages; heuristics live in package
// heuristics and implement the same interface. Solvers are built by name
// in package catalog, never by import side effects.
package solver
