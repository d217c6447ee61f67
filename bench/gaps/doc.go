// Package gaps owns the optimality-gap experiment: classes of generated
// windows (the NSA paper's, the large fat-tree and layout classes), every
// chosen solver on every window within a time limit, and per class and
// solver the latency (median, p99), the share proven optimal and the gap
// to the best bound any solver proved (RunSCAS, Summarise, the engine of
// `optsched bench scas`), with sharding, merging, CSV and figures.
package gaps
