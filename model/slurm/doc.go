// Package slurm reads Slurm's topology.conf (the topology/tree plugin's
// switch lines): SwitchName= with Nodes= or Switches=, comments and
// continued lines, with every error naming its line. Parse checks the
// tree as Slurm would — declared switches, one parent each, no cycles, at
// most MaxLevels levels and MaxNodes nodes — and returns its switches by
// name; ParseTopology builds the model.Topology from them, its errors
// wrapping model.ErrTopology.
package slurm
