// Package hostlist reads and writes Slurm-style hostlists, the compact
// node lists of windows, topology.conf and PBS vnode lists:
// "tux[0-2,12],login1" is tux0, tux1, tux2, tux12 and login1. Expand
// bounds what one expression may expand to (names and their length), so a
// short list cannot ask for gigabytes; Compress writes names back, merging
// runs of numbered names with the same prefix and width.
package hostlist
