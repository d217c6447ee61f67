package heuristics

import (
	"fmt"

	"github.com/optsched/optsched/model"
)

// An Incremental allocator places jobs one at a time on a cluster whose
// free nodes it keeps between jobs: Place takes a job's nodes, Release
// gives them back when the job ends. It answers what the allocator's
// Solve answers on a one-job window of the same state — the free nodes as
// idle, the nodes of the jobs placed and not released as running, with
// their Comm — in time proportional to the job rather than the cluster
// (on ordered topologies: generated layouts and fat-trees; on others it
// ranks every candidate leaf, as Solve does, but still builds no tree).
//
// Mishra's allocators read the Comm of the running jobs: here that of
// each job Place placed, until Release.
type Incremental struct {
	name string
	tr   *tree
	m    *mishra
	mode mishraMode
	// leafOf is the leaf switch of each node, for Release, and deltas
	// Release's scratch.
	leafOf []int
	deltas []leafTake
}

// IncrementalNames lists the allocators NewIncremental accepts: slurm,
// mishra-greedy, mishra-balanced, mishra-adaptive.
var IncrementalNames = []string{"slurm", "mishra-greedy", "mishra-balanced", "mishra-adaptive"}

// NewIncremental returns the allocator name (one of IncrementalNames) on
// topology t with the nodes idle free (every other node is down: busy,
// and not communication-intensive).
func NewIncremental(name string, t *model.Topology, idle []int) (*Incremental, error) {
	w := &model.Window{Topology: t, Idle: idle}
	a := &Incremental{name: name}
	switch name {
	case "slurm":
		a.tr = newTree(w)
		if a.tr.fx = newTreeIndex(a.tr); a.tr.fx != nil {
			a.tr.byCnt = nil
		}
	case "mishra-greedy", "mishra-balanced", "mishra-adaptive":
		a.mode = map[string]mishraMode{"mishra-greedy": mishraGreedy, "mishra-balanced": mishraBalanced, "mishra-adaptive": mishraAdaptive}[name]
		a.m = newMishra(w)
		a.tr = a.m.tree
		if a.tr.fx = newTreeIndex(a.tr); a.tr.fx != nil {
			a.tr.byCnt = nil
			a.tr.fx.noPaths = true
			a.m.mx = newMishraIndex(a.m)
		}
	default:
		return nil, fmt.Errorf("heuristics: no incremental allocator %q (want one of %v)", name, IncrementalNames)
	}
	if a.tr.fx != nil {
		a.leafOf = a.tr.fx.leafOf
	} else {
		a.leafOf = make([]int, t.NumNodes())
		for id := range a.leafOf {
			a.leafOf[id] = t.Node(id).Leaf
		}
	}
	return a, nil
}

// Name returns the allocator's name.
func (a *Incremental) Name() string { return a.name }

// Indexed reports whether the topology is ordered, so that placing a job
// takes time in proportion to the job.
func (a *Incremental) Indexed() bool { return a.tr.fx != nil }

// Free returns the number of free nodes.
func (a *Incremental) Free() int { return a.tr.total }

// Place takes job.Nodes free nodes for job and returns them in increasing
// order: an error when fewer are free, or when Mishra's adaptive
// allocator meets an unknown pattern.
func (a *Incremental) Place(job model.Job) ([]int, error) {
	if job.Nodes > a.tr.total || job.Nodes < 1 {
		return nil, fmt.Errorf("%s: job %s needs %d nodes, %d are free", a.name, job.ID, job.Nodes, a.tr.total)
	}
	if a.m == nil {
		return a.tr.slurmPlace(job.Nodes), nil
	}
	if a.mode == mishraAdaptive && !validPattern(job.Pattern) {
		return nil, fmt.Errorf("%s: job %s: unknown communication pattern %q", a.name, job.ID, job.Pattern)
	}
	plan, _ := a.m.plan(a.mode, &job)
	return a.m.commit(plan, job.Comm), nil
}

// Release gives back nodes (in increasing order) that Place took for a job
// of communication intensity comm.
func (a *Incremental) Release(nodes []int, comm bool) {
	x := a.tr.fx
	ds := a.deltas[:0]
	for len(nodes) > 0 {
		leaf := a.leafOf[nodes[0]]
		k := 1
		for k < len(nodes) && a.leafOf[nodes[k]] == leaf {
			k++
		}
		switch {
		case x != nil:
			// The counts of all the leaves at once, below.
			a.tr.putBack(leaf, nodes[:k])
			ds = append(ds, leafTake{leaf, k})
		case a.m != nil:
			a.m.release(leaf, nodes[:k], comm)
		default:
			a.tr.give(leaf, nodes[:k])
		}
		nodes = nodes[k:]
	}
	a.deltas = ds
	if x == nil {
		return
	}
	x.movedBatch(ds)
	if a.m != nil {
		for _, d := range ds {
			a.m.released(d.leaf, d.k, comm)
		}
	}
}
