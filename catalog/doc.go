// Package catalog is optsched's registry of solvers, heuristics and
// schedulers: every name with its constructor and the options it reads
// (registry.go), the one Validate that every command calls on what its
// flags ask for before it reads any input (a Spec: name, model or
// encoding, options), and the presets the tools share (presets.go): the
// csp + SA portfolio, SA with the parameters of [Lan23] Table I, the
// exact CP schedulers seeded and backed up by the PBSWalltime and PBSFifo
// list schedules, and what the PBS and Slurm schedulers run beside their
// window solver. It is the one place that knows which back end a name
// means (csp, lpsolve, clp, brute, free, sa, nsa, seq, slurm, the Mishra
// allocators; sat, bnb and the PBS list schedules of the
// time-and-resource model) and how an exact solver is wrapped for a time
// limit (a solver.Portfolio with the chosen fallback). `optsched solve`,
// the PBS and Slurm commands, the simulator and the benchmarks build
// through it and hand the built solvers to the packages that run them
// (pbsched, slurmsched and their cycles take built solvers); package
// solver keeps only the contracts.
//
// Names are registered explicitly in this package (no init-time
// registration): an entry is made by wholeNode or timeResource, so that
// its constructor is always of its model. Reading weight files and
// naming flags in errors is the caller's business: the errors are typed
// (*NameError, *OptionError) for a command to word in its flags.
package catalog
