// Package bench owns experiments: optimality gaps and latencies of solvers
// against heuristics on classes of generated windows (RunSCAS, the engine
// of `optsched bench scas`), and — with their issue — the window-based
// simulator over workload traces and the reproductions of the tables of
// [Lan23] and [Bridi16]. It may import every other optsched package;
// nothing imports it.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
// [Bridi16]: T. Bridi et al., IEEE TPDS 2016.
package bench
