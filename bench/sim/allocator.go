package sim

import (
	"fmt"
	"slices"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/solver"
)

// FirstFit is the default allocator of the per-job policies: the lowest
// idle node ids.
const FirstFit = "first-fit"

// allocators are the topology-aware allocators a per-job policy may place
// its jobs with, by name (Config.Allocator). Each places one job at a time
// on the idle nodes of a one-job window.
var allocators = map[string]solver.Solver{
	"slurm":           heuristics.Slurm{},
	"mishra-greedy":   heuristics.MishraGreedy{},
	"mishra-balanced": heuristics.MishraBalanced{},
	"mishra-adaptive": heuristics.MishraAdaptive{},
}

// AllocatorNames returns the names Config.Allocator accepts, sorted:
// first-fit (the default, also spelt ""), slurm (heuristics.Slurm) and the
// allocators of Mishra et al. (heuristics.MishraGreedy, MishraBalanced,
// MishraAdaptive).
func AllocatorNames() []string {
	names := []string{FirstFit}
	for n := range allocators {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// allocatorOf resolves a Config.Allocator name: nil for first-fit.
func allocatorOf(name string) (solver.Solver, error) {
	if name == "" || name == FirstFit {
		return nil, nil
	}
	a, ok := allocators[name]
	if !ok {
		return nil, fmt.Errorf("%w: unknown allocator %q (want one of %v)", ErrConfig, name, AllocatorNames())
	}
	return a, nil
}

// place takes the nodes of job (an index into s.jobs) with the configured
// allocator, which keeps the cluster's free nodes (heuristics.Incremental:
// the answer of the allocator's Solve on the one-job window of the
// cluster's state at t, in time proportional to the job).
func (s *state) place(job int, t int64) ([]int, error) {
	j := &s.jobs[job]
	nodes, err := s.inc.Place(s.modelJob(j, 0))
	if err != nil {
		return nil, fmt.Errorf("t=%d: allocator %s: job %s: %w", t, s.inc.Name(), j.ID, err)
	}
	if len(nodes) != j.Nodes {
		return nil, fmt.Errorf("t=%d: allocator %s: job %s: want %d nodes, got %d", t, s.inc.Name(), j.ID, j.Nodes, len(nodes))
	}
	return nodes, nil
}

// newPlacer returns the allocator name on the idle cluster, with the
// cluster's Release giving it back the nodes of every job that ends.
func (s *state) newPlacer(name string) error {
	idle := s.idle()
	inc, err := heuristics.NewIncremental(name, s.cfg.Topology, idle)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	s.inc = inc
	s.released = func(nodes []int) { inc.Release(nodes, s.RunningComm) }
	return nil
}
