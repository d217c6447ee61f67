package output

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// Answer returns the JSON answer document of r, a solve of window w:
// whole-node, its allocations in the solver's order and the cap on the
// multi-node jobs; time-and-resource (r.Granularity set), its grid, its
// CH weight and its allocations in start order.
func Answer[O solver.ObjectiveValue](w *model.Window, r *solver.WindowAnswer[O]) AnswerDoc[O] {
	d := AnswerDoc[O]{
		Encoding:  r.Encoding,
		Solver:    r.Solver,
		ElapsedMS: ms(r.Elapsed),
		Cost:      CostOf(w.Cost),
	}
	d.Status, d.Objective, d.Bound, d.Gap = figures(r.Status, r.Objective, r.Bound, r.Gap)
	allocs := r.Allocations
	if r.Granularity > 0 {
		d.Granularity, d.CHWeight = &r.Granularity, r.CHWeight
		allocs = slices.Clone(allocs)
		slices.SortStableFunc(allocs, func(a, b model.Allocation) int {
			return cmp.Or(cmp.Compare(a.Start, b.Start), a.Job-b.Job)
		})
	} else {
		d.MaxJobs = &r.MaxJobs
	}
	d.Allocations = allocationDocs(w, allocs)
	d.Deferred = deferralDocs(w, r.Deferred)
	if !r.Stats.Empty() {
		st := r.Stats
		d.Stats = &st
	}
	return d
}

// figures are the status, objective, bound and gap of an answer as both
// documents show them — the core the whole-node and time-and-resource
// pipelines share: the objective only with an allocation (not unknown or
// infeasible), the bound when one is known, the gap with both.
func figures[T solver.ObjectiveValue](st solver.Status, objective T, bound float64, gap func() (float64, bool)) (status string, obj *T, b, g *float64) {
	if st != solver.Unknown && st != solver.Infeasible {
		obj = &objective
	}
	if !math.IsNaN(bound) {
		b = &bound
		if v, ok := gap(); ok {
			g = &v
		}
	}
	return st.String(), obj, b, g
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// allocationDocs maps allocations to their documents (job ids, node
// names, CH cost, and units by node name when the allocation has units),
// in the given order; never nil, so that JSON shows [].
func allocationDocs(w *model.Window, allocs []model.Allocation) []AllocationDoc {
	out := make([]AllocationDoc, 0, len(allocs))
	for _, a := range allocs {
		ad := AllocationDoc{
			Job:   w.Jobs[a.Job].ID,
			Nodes: w.NodeNames(a.Nodes),
			Start: a.Start,
			Cost:  w.Cost.Cost(w.Topology, a.Nodes),
		}
		if a.Units != nil {
			ad.Units = make(map[string]int, len(a.Units))
			for k, u := range a.Units {
				ad.Units[w.Topology.Name(k)] = u
			}
		}
		out = append(out, ad)
	}
	return out
}

// deferralDocs maps deferrals to their documents; never nil.
func deferralDocs(w *model.Window, defs []model.Deferral) []DeferralDoc {
	out := make([]DeferralDoc, 0, len(defs))
	for _, def := range defs {
		out = append(out, DeferralDoc{Job: w.Jobs[def.Job].ID, Reason: def.Reason})
	}
	return out
}
