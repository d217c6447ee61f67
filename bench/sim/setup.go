package sim

import (
	"fmt"
	"time"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/csp"
)

// ScaleNodes is the cluster size above which the window policy's default
// time limit per window is ScaleTimeLimit rather than 10 s, and the cp
// policy decides without its search (Setup.CPNoSearch). On a 32,768-node
// cluster the exact solver spends the whole limit on the hardest windows
// (8 s each at 10 s, against a median of 0.1 ms) for a CH cost that is
// the same to the fifth digit: on the first 20,000 jobs of KTH SP2 scaled
// to 32,768 nodes, 6,816,821 at 50 ms and 6,816,880 at 10 ms, in 41 s and
// 27 s (docs/results/2026-11-26-sim-scale.md).
const (
	ScaleNodes     = 10000
	ScaleTimeLimit = 10 * time.Millisecond
)

// Setup are the choices of a simulation as `optsched simulate` takes
// them; NewConfig turns them into the Config of a trace.
type Setup struct {
	// Policy is the policy's name (Config.Policy).
	Policy string
	// Layout is the cluster's layout; nil: the Lan paper's 25×4×10 when
	// the trace gives no cluster size, else whole pods of 4 leaves × 10
	// nodes that hold it.
	Layout *model.LayoutSpec
	// Tau, MaxJobs and Solver are the window policy's (Config).
	Tau     int64
	MaxJobs int
	Solver  solver.Solver
	// Gap re-solves every window with the exact csp solver
	// (Config.GapSolver).
	Gap bool
	// TimeLimit, when TimeLimitSet, bounds each window solve and each cp
	// decision; else the window policy takes TimeLimit up to ScaleNodes
	// nodes and ScaleTimeLimit above, and the cp policy
	// cpolicy.DefaultLimit.
	TimeLimit    time.Duration
	TimeLimitSet bool
	// Allocator places the jobs of a per-job policy (Config.Allocator).
	Allocator string
	// ExpectedWait and DefaultExpectedWait are the queues' expected
	// waits in seconds (Config).
	ExpectedWait        map[string]int64
	DefaultExpectedWait int64
	// CPObjective, CPJobs and CPBackfill are the cp policy's
	// (cpolicy.Policy's Objective, K and Backfill); CPSearch is on, off
	// or auto (see CPNoSearch).
	CPObjective string
	CPJobs      int
	CPBackfill  int
	CPSearch    string
}

// WindowTimeLimit returns the time limit per window on a cluster of nodes
// nodes: TimeLimit when set, or up to ScaleNodes nodes, else
// ScaleTimeLimit.
func (s Setup) WindowTimeLimit(nodes int) time.Duration {
	if s.TimeLimitSet || nodes <= ScaleNodes {
		return s.TimeLimit
	}
	return ScaleTimeLimit
}

// CPNoSearch reports whether the cp policy decides with its list
// schedules alone: CPSearch off, or auto (any other value but on) on a
// cluster of more than ScaleNodes nodes. With the search, each decision
// may take its whole limit (15 ms): a 250,000-job log on 32,768 nodes has
// 360,000–450,000 decisions and would take about 36 minutes; the list
// schedules alone replay it in 50 s (docs/results/2026-11-26-sim-scale.md).
func (s Setup) CPNoSearch(nodes int) bool {
	switch s.CPSearch {
	case "on":
		return false
	case "off":
		return true
	}
	return nodes > ScaleNodes
}

// A LayoutError is NewConfig's error when the layout cannot be built:
// Given says whether it was Setup.Layout or derived from the trace.
type LayoutError struct {
	Spec  model.LayoutSpec
	Given bool
	Err   error
}

// Error implements error.
func (e *LayoutError) Error() string {
	return fmt.Sprintf("layout %dx%dx%d: %v", e.Spec.Pods, e.Spec.LeavesPerPod, e.Spec.NodesPerLeaf, e.Err)
}

// Unwrap returns the layout's error.
func (e *LayoutError) Unwrap() error { return e.Err }

// NewConfig returns the Config that runs tr under s: the cluster (the
// trace's nodes on s.Layout or the derived layout, at most the layout's
// nodes), the policy and its parameters, and the checks (Check and
// DiscardNodes on). The caller adds the progress hook and, for a learned
// policy, its chooser, picker or selector.
func NewConfig(tr *trace.Trace, s Setup) (Config, error) {
	spec := model.LayoutSpec{Pods: 25, LeavesPerPod: 4, NodesPerLeaf: 10}
	if s.Layout != nil {
		spec = *s.Layout
	} else if tr.Nodes > 0 {
		spec.Pods = (tr.Nodes + 39) / 40 // whole pods of 4 leaves × 10 nodes
	}
	topo, err := model.NewLayout(spec.Pods, spec.LeavesPerPod, spec.NodesPerLeaf)
	if err != nil {
		return Config{}, &LayoutError{Spec: spec, Given: s.Layout != nil, Err: err}
	}
	nodes := min(tr.Nodes, topo.NumNodes()) // a given layout may be smaller than the log's cluster
	if nodes == 0 {
		nodes = topo.NumNodes()
	}
	cfg := Config{Topology: topo, TopologySpec: model.TopologySpec{Layout: &spec}, Nodes: nodes,
		Cost: model.DefaultCostModel, Policy: s.Policy, Tau: s.Tau, Solver: s.Solver,
		MaxJobs: s.MaxJobs, TimeLimit: s.WindowTimeLimit(nodes), Check: true, DiscardNodes: true, Allocator: s.Allocator,
		ExpectedWait: s.ExpectedWait, DefaultExpectedWait: s.DefaultExpectedWait}
	if s.Gap {
		cfg.GapSolver = csp.Solver{}
	}
	if s.Policy == CP {
		cfg.CP = cpolicy.Policy{Objective: s.CPObjective, K: s.CPJobs, NoSearch: s.CPNoSearch(nodes), Backfill: s.CPBackfill}
		if s.TimeLimitSet {
			cfg.CP.Limit = s.TimeLimit
		}
	}
	return cfg, nil
}
