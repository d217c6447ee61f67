// Package bench is the home of optsched's experiments; it holds no code of
// its own. Its sub-packages:
//
//   - bench/gaps: optimality gaps and latencies of solvers against
//     heuristics on classes of generated windows (`optsched bench scas`);
//   - bench/limits: the time-limit and memory sweep (`optsched bench
//     limits`);
//   - bench/trace and bench/sim: workload traces and the window-based
//     simulator over them (`optsched simulate`);
//   - bench/lan2023 and bench/bridi: the reproductions of [Lan23] and
//     [Bridi16];
//   - bench/predict: remaining-run-time predictors from what an SWF log
//     records, and their error on held-out jobs (`optsched bench predict`);
//   - bench/report: what they share — box-plot figures, learning curves
//     and the terminal progress bar.
//
// The experiments may import every other optsched package; nothing but
// the command imports them.
//
// [Lan23]: Z. Lan et al., IEEE CLUSTER 2023.
// [Bridi16]: T. Bridi et al., IEEE TPDS 2016.
package bench
