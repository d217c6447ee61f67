package pbsched

import (
	"context"
	"fmt"
	"slices"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
)

// placement is the second stage's answer, a plain value: the starts of
// the whole-node window and of the partial-node jobs (first fit and cp
// schedule), the jobs the solves defer, and what the solves report.
type placement struct {
	// whole are the whole-node starts, in the window's allocation order;
	// partial the partial-node ones (the first fit's, then the cp
	// schedule's).
	whole, partial []*Start
	deferred       []Reason
	Notes          []string
	// Solve, Window and Allocs are the whole-node window's (see Plan);
	// CP, CPWindow and CPAllocs the cp schedule's.
	Solve    SolveDoc[int64]
	Window   *model.Window
	Allocs   []model.Allocation
	CP       *SolveDoc[float64]
	CPWindow *model.Window
	CPAllocs []model.Allocation
}

// place is the placement stage (see plan): the whole-node window on the
// idle vnodes the selection left, then the cp schedule on what the
// whole-node starts leave.
func place(ctx context.Context, c *cluster, sel selection, opt Options) (*placement, error) {
	pl := &placement{partial: sel.partial, Solve: SolveDoc[int64]{Status: "none", Solver: "none"}}
	if len(sel.whole) > 0 {
		if err := pl.placeWhole(ctx, c, sel, opt); err != nil {
			return nil, err
		}
	}
	if len(sel.cp) > 0 {
		pl.placeCP(ctx, c, sel, opt)
	}
	return pl, nil
}

// wholeWindow is the window of the selected whole-node jobs on the idle
// vnodes the selection left.
func wholeWindow(c *cluster, sel selection, opt Options) (*model.Window, error) {
	w := &model.Window{Time: c.st.Now, Topology: c.topo, Cost: model.DefaultCostModel, Running: c.running, Idle: slices.Clone(sel.idle)}
	if opt.Cost != "" {
		k, err := model.ParseCostKind(opt.Cost)
		if err != nil {
			return nil, fmt.Errorf("cost model: %w", err)
		}
		w.Cost.Kind = k
	}
	for _, cand := range sel.whole {
		w.Jobs = append(w.Jobs, model.Job{ID: cand.job.ID, Nodes: len(cand.units), Walltime: cand.walltime,
			Submit: cand.submit, Queue: cand.job.Queue, NWP: cand.nwp, Select: cand.job.Select, Comm: true, Pattern: model.PatternRD})
	}
	return w, nil
}

// placeWhole solves the whole-node window (solveWithFallback), improves
// its answer by the best-fit passes and turns the allocations into
// starts; the jobs the solve defers wait with its reason.
func (pl *placement) placeWhole(ctx context.Context, c *cluster, sel selection, opt Options) error {
	w, err := wholeWindow(c, sel, opt)
	if err != nil {
		return err
	}
	res, err := solveWithFallback(ctx, w, opt, pl)
	if err != nil {
		return err
	}
	heuristics.BestFitMulti(w, res.Allocations)
	heuristics.BestFitSingles(w, res.Allocations)
	pl.Window, pl.Allocs = w, res.Allocations
	for _, d := range res.Deferred {
		pl.deferred = append(pl.deferred, Reason{w.Jobs[d.Job].ID, d.Reason})
	}
	for _, a := range res.Allocations {
		cand := sel.whole[a.Job]
		st := &Start{Job: cand.job.ID, Queue: cand.job.Queue, Path: PathWhole, Placement: res.Solver,
			Why: cand.path, Cost: w.Cost.Cost(w.Topology, a.Nodes)}
		for u, id := range a.Nodes {
			st.Chunks = append(st.Chunks, VChunk{Vnode: w.Topology.Name(id), Amounts: cand.units[u].written, Labels: cand.units[u].wlabels})
		}
		pl.whole = append(pl.whole, st)
	}
	return nil
}

// placeCP runs the cp schedule of the cp jobs. Held from it are what
// first-fit jobs hold exclusively (a vnode, or every vnode of a host) and
// the whole-node starts' vnodes until their walltime ends (the cp
// schedule may plan a job there after it). When every cp scheduler fails,
// the jobs start where the first fit held room for them in selection
// order (the whole-node window took none of it); the others wait with
// the first fit's reason.
func (pl *placement) placeCP(ctx context.Context, c *cluster, sel selection, opt Options) {
	now := c.st.Now
	held := map[string]bool{}
	wholeUntil := map[string]int64{}
	for _, st := range pl.whole {
		for _, v := range st.Nodes() {
			wholeUntil[v] = now + c.wallOf(st.Job)
		}
	}
	for v := range sel.taken {
		held[v] = true
	}
	starts, deferred, why, ok := schedulePartialCP(ctx, c, sel.cp, held, wholeUntil, pl.partial, opt, pl)
	if ok {
		pl.partial = append(pl.partial, starts...)
		pl.deferred = append(pl.deferred, deferred...)
		return
	}
	pl.Notes = append(pl.Notes, "partial-node schedulers failed ("+why+"); the first fit placed those jobs")
	if pl.CP != nil {
		pl.CP.Fallback = why + "; the first fit placed the jobs"
	}
	for _, cand := range sel.cp {
		r := sel.room[cand]
		if r.why != "" {
			pl.deferred = append(pl.deferred, Reason{cand.job.ID, r.why})
			continue
		}
		pl.partial = append(pl.partial, &Start{Job: cand.job.ID, Queue: cand.job.Queue, Path: PathPartial,
			Placement: "first-fit", Why: cand.path, Chunks: r.chunks, Cost: -1})
	}
}
