package instances

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/optsched/optsched/model"
)

// GenConfig describes a random window shaped like those of [Lan23]: the
// trace's jobs of 1–40 nodes and 10–1800 s on a fragmented cluster.
type GenConfig struct {
	Seed uint64
	// Topology is the cluster; Layout or FatTree below says how to write
	// it back. Exactly one must be set.
	Layout  *model.LayoutSpec
	FatTree *model.FatTreeSpec
	// Idle is the number of idle nodes; the others are taken by running
	// jobs of MinNodes..MaxNodes nodes placed the way a previous window
	// would (from a random idle node onwards, in id order).
	Idle int
	// Jobs is the number of waiting jobs, of MinNodes..MaxNodes nodes and
	// MinWalltime..MaxWalltime seconds.
	Jobs                     int
	MinNodes, MaxNodes       int
	MinWalltime, MaxWalltime int64
	// MaxNWP draws each job's waiting periods from 0..MaxNWP.
	MaxNWP int
	// Time is the decision time.
	Time int64
}

// PaperGenConfig returns the defaults of `optsched gen`: the paper's
// 25×4×10 layout and its trace's job ranges.
func PaperGenConfig() GenConfig {
	return GenConfig{
		Layout: &model.LayoutSpec{Pods: 25, LeavesPerPod: 4, NodesPerLeaf: 10},
		Idle:   300, Jobs: 5,
		MinNodes: 1, MaxNodes: 40,
		MinWalltime: 10, MaxWalltime: 1800,
		Time: 3600,
	}
}

// Generate builds a random window from cfg, deterministically for a seed.
func Generate(cfg GenConfig) (*model.Window, error) {
	w := &model.Window{Time: cfg.Time, Cost: model.DefaultCostModel}
	var err error
	switch {
	case cfg.Layout != nil && cfg.FatTree == nil:
		w.TopologySpec.Layout = cfg.Layout
		w.Topology, err = model.NewLayout(cfg.Layout.Pods, cfg.Layout.LeavesPerPod, cfg.Layout.NodesPerLeaf)
	case cfg.FatTree != nil && cfg.Layout == nil:
		w.TopologySpec.FatTree = cfg.FatTree
		w.Topology, err = model.NewFatTree(cfg.FatTree.K, cfg.FatTree.Pods)
	default:
		return nil, fmt.Errorf("gen: set exactly one of a layout and a fat-tree")
	}
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	n := w.Topology.NumNodes()
	switch {
	case cfg.Idle < 0 || cfg.Idle > n:
		return nil, fmt.Errorf("gen: idle nodes must be between 0 and %d, got %d", n, cfg.Idle)
	case cfg.Jobs < 0:
		return nil, fmt.Errorf("gen: jobs must be at least 0, got %d", cfg.Jobs)
	case cfg.MinNodes < 1 || cfg.MaxNodes < cfg.MinNodes:
		return nil, fmt.Errorf("gen: need 1 <= min nodes <= max nodes, got %d and %d", cfg.MinNodes, cfg.MaxNodes)
	case cfg.MinWalltime < 1 || cfg.MaxWalltime < cfg.MinWalltime:
		return nil, fmt.Errorf("gen: need 1 <= min walltime <= max walltime, got %d and %d", cfg.MinWalltime, cfg.MaxWalltime)
	case cfg.MaxNWP < 0:
		return nil, fmt.Errorf("gen: max nwp must be at least 0, got %d", cfg.MaxNWP)
	case cfg.Time < 0:
		return nil, fmt.Errorf("gen: time must be at least 0, got %d", cfg.Time)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	between := func(lo, hi int64) int64 { return lo + rng.Int64N(hi-lo+1) }

	// Fill the cluster with running jobs until only cfg.Idle nodes are
	// idle: each takes the next idle nodes from a random idle node on,
	// wrapping, as a previous window under DCAS would.
	idle := make([]bool, n)
	for i := range idle {
		idle[i] = true
	}
	free := n
	for r := 0; free > cfg.Idle; r++ {
		size := min(int(between(int64(cfg.MinNodes), int64(cfg.MaxNodes))), free-cfg.Idle)
		k := rng.IntN(n)
		for !idle[k] {
			k = (k + 1) % n
		}
		var nodes []int
		for len(nodes) < size {
			if idle[k] {
				idle[k] = false
				nodes = append(nodes, k)
			}
			k = (k + 1) % n
		}
		free -= size
		w.Running = append(w.Running, model.RunningJob{
			ID:    "r" + strconv.Itoa(r),
			Nodes: slices.Sorted(slices.Values(nodes)),
			End:   cfg.Time + between(cfg.MinWalltime, cfg.MaxWalltime),
		})
	}
	w.Idle = []int{}
	for k := range n {
		if idle[k] {
			w.Idle = append(w.Idle, k)
		}
	}
	for j := range cfg.Jobs {
		w.Jobs = append(w.Jobs, model.Job{
			ID:       "j" + strconv.Itoa(j),
			Nodes:    int(between(int64(cfg.MinNodes), int64(cfg.MaxNodes))),
			Walltime: between(cfg.MinWalltime, cfg.MaxWalltime),
			Submit:   max(0, cfg.Time-between(0, 600)),
			Queue:    model.DefaultQueue,
			Comm:     true, // the window format's default
			NWP:      int(between(0, int64(cfg.MaxNWP))),
		})
	}
	return w, nil
}
