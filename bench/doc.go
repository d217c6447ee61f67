// Package bench owns experiments: the window-based simulator over workload
// traces and the reproductions of the tables of [Lan23] and [Bridi16], with
// optimality gaps and latencies of solvers against heuristics. It may import
// every other optsched package; nothing imports it.
//
// The simulator and reproductions arrive with their issue; this package is
// empty until then.
package bench
