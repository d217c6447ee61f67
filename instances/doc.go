// Package instances owns optsched's shipped windows and their known
// results: example-window.json (the README's example), paper-scale windows
// shaped like those of [Lan23] (Z. Lan et al., IEEE CLUSTER 2023), and the
// table known.tsv recording, per window, objectives that tests hold every
// solver and heuristic to. It also generates random windows (Generate), the
// engine of `optsched gen`. It imports only model.
package instances
