// Package solver owns the contract every window solver and heuristic
// fulfils, in both models, generic over the model's objective type O:
// one interface, SolverOf[O], asked a ProblemOf[O] and answering an
// Answer[O] (status, objective, bound, gap, allocation, deferrals,
// statistics). The whole-node model's are Solver, Problem and Result (O
// int64, the CH cost); the time-and-resource model's Scheduler,
// ScheduleProblem and Schedule (O float64, the weighted queue time). Both
// go through one pipeline, SolveWindow: the solve under a context deadline
// with a reserve kept for the checks, the one verification of an answer
// (Verify), the independent feasibility check (model.Check) before
// anything is returned, a failing answer being an ErrSolverBug error;
// what differs between the models (job selection and first-fit placement
// of one-node jobs in the whole-node model, units, grid and published
// incumbents in the time-and-resource model) is the model's alone.
//
// An answer's statistics are typed (Stats: a struct per solver family,
// with stable JSON names). An exact whole-node solver publishes its
// incumbents and bounds as they improve to the Problem's Publisher
// (Problem.Publish); a Portfolio gives its exact solver a Board there, so
// that what the solver found stands when it must be abandoned. An exact
// scheduler (sat, bnb) publishes likewise to ScheduleProblem.Publisher
// (PublisherOf is the one interface, for either objective type);
// SolveWindow gives it a ScheduleBoard and makes its answer carry what
// it published (schedulers run to their return: none is abandoned).
//
// Exact backends live in sub-packages; heuristics live in package
// heuristics and implement the same interface. Solvers are built by name
// in package catalog, never by import side effects.
package solver
