package output

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// A ResultDoc is the JSON result of a window solve, the contract of
// `optsched solve -o json` that every solver fills. Field names are stable.
type ResultDoc struct {
	// Status is optimal, feasible, fallback or infeasible.
	Status string `json:"status"`
	// Objective is the total CH cost of the window's multi-node jobs (the
	// jobs the optimisation places); null when there is no allocation.
	Objective *int64 `json:"objective"`
	// Bound is a proven lower bound on the objective, null when unknown.
	Bound *float64 `json:"bound"`
	// Gap is (objective − bound) / objective, null when the bound is
	// unknown.
	Gap *float64 `json:"gap"`
	// Encoding names the formulation solved (scas, csp, dcas, cp).
	Encoding string `json:"encoding"`
	// Solver names the solver or heuristic that produced the allocation.
	Solver string `json:"solver"`
	// ElapsedMS is the wall time of the solve, in milliseconds.
	ElapsedMS float64 `json:"elapsed_ms"`
	// Allocations are the jobs that start, with their nodes and cost.
	Allocations []AllocationDoc `json:"allocations"`
	// Deferred are the jobs that wait, with the reason.
	Deferred []DeferralDoc `json:"deferred"`
}

// AllocationDoc is one allocation in a ResultDoc.
type AllocationDoc struct {
	Job   string   `json:"job"`
	Nodes []string `json:"nodes"`
	Start int64    `json:"start"`
	// Cost is the job's CH cost under the window's cost model.
	Cost int64 `json:"cost"`
	// Units, for a units allocation (the time-and-resource model), maps
	// each node name to the number of the job's units on it.
	Units map[string]int `json:"units,omitempty"`
}

// DeferralDoc is one deferred job in a ResultDoc.
type DeferralDoc struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// ParseResult decodes a result document and maps its allocations onto w:
// job ids to job indices and node names to node ids. Errors name the field
// path. It checks names only; feasibility is model.Check's business.
func ParseResult(w *model.Window, data []byte) (*ResultDoc, []model.Allocation, error) {
	var doc ResultDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, &windowjson.FieldError{Reason: fmt.Sprintf("not a result document: %v", err)}
	}
	allocs, err := allocationsOf(w, doc.Allocations, doc.Deferred)
	if err != nil {
		return nil, nil, err
	}
	return &doc, allocs, nil
}

// allocationsOf maps the allocation documents of a result or schedule
// onto w (job ids to indices, node names to ids) and checks that every
// deferred job is waiting in w. Errors name the field path.
func allocationsOf(w *model.Window, docs []AllocationDoc, deferred []DeferralDoc) ([]model.Allocation, error) {
	allocs := make([]model.Allocation, 0, len(docs))
	jobIndex := w.JobIndices()
	for i := range docs {
		a := &docs[i]
		path := fmt.Sprintf("allocations[%d]", i)
		j, ok := jobIndex(a.Job)
		if !ok {
			return nil, fieldErr(path+".job", "job %q is not waiting in the window", a.Job)
		}
		al, err := allocationOf(w, path, j, a)
		if err != nil {
			return nil, err
		}
		allocs = append(allocs, al)
	}
	for i, d := range deferred {
		if _, ok := jobIndex(d.Job); !ok {
			return nil, fieldErr(fmt.Sprintf("deferred[%d].job", i), "job %q is not waiting in the window", d.Job)
		}
	}
	return allocs, nil
}

// allocationOf maps one allocation document of job index j onto w.
func allocationOf(w *model.Window, path string, j int, a *AllocationDoc) (model.Allocation, error) {
	al := model.Allocation{Job: j, Start: a.Start, Nodes: make([]int, len(a.Nodes))}
	for k, name := range a.Nodes {
		id, ok := w.Topology.Lookup(name)
		if !ok {
			return al, fieldErr(fmt.Sprintf("%s.nodes[%d]", path, k), "node %q is not in the topology", name)
		}
		al.Nodes[k] = id
	}
	if a.Units != nil {
		al.Units = make(map[int]int, len(a.Units))
		for _, name := range slices.Sorted(maps.Keys(a.Units)) {
			id, ok := w.Topology.Lookup(name)
			if !ok {
				return al, fieldErr(fmt.Sprintf("%s.units[%q]", path, name), "node %q is not in the topology", name)
			}
			al.Units[id] = a.Units[name]
		}
	}
	return al, nil
}

// A ScheduleDoc is the JSON result of a time-and-resource solve ([Bridi16];
// `optsched solve --encoding cp -o json`): when and where every waiting
// job starts. Its field names are those of ResultDoc, with a fractional
// objective; the jobs that start at the window time are the decisions,
// the later starts reservations. Field names are stable.
type ScheduleDoc struct {
	// Status is optimal, feasible, fallback or infeasible (see ResultDoc).
	Status string `json:"status"`
	// Objective is the weighted queue time of the scheduled jobs,
	// Σ (start − submit) / ewt_queue ([Bridi16] Eq. 2); null without a
	// schedule.
	Objective *float64 `json:"objective"`
	// Bound is a proven lower bound on the objective, null when unknown.
	Bound *float64 `json:"bound"`
	// Gap is (objective − bound) / objective, null without a bound.
	Gap *float64 `json:"gap"`
	// Encoding is "cp"; Solver names the solver that produced the schedule.
	Encoding string `json:"encoding"`
	Solver   string `json:"solver"`
	// ElapsedMS is the wall time of the solve, in milliseconds.
	ElapsedMS float64 `json:"elapsed_ms"`
	// Granularity is the time grid of the starts, in seconds.
	Granularity int64 `json:"granularity_s"`
	// CHWeight, when positive, is the weight W of the CH term the
	// objective and bound include: weighted queue time + W·Σ CH cost of
	// the allocations' node sets (CostModel.Cost).
	CHWeight float64 `json:"ch_weight,omitempty"`
	// Allocations give every scheduled job its start, nodes and units.
	Allocations []AllocationDoc `json:"allocations"`
	// Deferred are the jobs without a start (they never fit, or no
	// schedule was found), with the reason.
	Deferred []DeferralDoc `json:"deferred"`
}

// ParseSchedule decodes a schedule document and maps its allocations onto
// w, as ParseResult does. Feasibility is model.Check's business.
func ParseSchedule(w *model.Window, data []byte) (*ScheduleDoc, []model.Allocation, error) {
	var doc ScheduleDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, &windowjson.FieldError{Reason: fmt.Sprintf("not a schedule document: %v", err)}
	}
	allocs, err := allocationsOf(w, doc.Allocations, doc.Deferred)
	if err != nil {
		return nil, nil, err
	}
	return &doc, allocs, nil
}

// checkFigures checks that a result's status, objective, bound and gap
// agree with each other: an objective exactly when the status says there
// is an allocation (optimal, feasible, fallback); none of the jobs the
// objective prices allocated under unknown or infeasible (priced says
// whether any is); bound ≤ objective, equal when optimal; a gap only
// with both, equal to (objective − bound) / objective (0 when the
// objective is 0).
func checkFigures(status string, objective, bound, gap *float64, priced bool) error {
	const tol = 1e-6
	switch status {
	case "optimal", "feasible", "fallback":
		if objective == nil {
			return fmt.Errorf("status %s without an objective", status)
		}
	case "unknown", "infeasible":
		if objective != nil {
			return fmt.Errorf("status %s with objective %g", status, *objective)
		}
		if priced {
			return fmt.Errorf("status %s with an allocation of the jobs the objective prices", status)
		}
	default:
		return fmt.Errorf("unknown status %q (want optimal, feasible, fallback, unknown or infeasible)", status)
	}
	if bound != nil && objective != nil {
		if *bound > *objective+tol*max(1, abs(*objective)) {
			return fmt.Errorf("bound %g is above the objective %g", *bound, *objective)
		}
		if status == "optimal" && *bound < *objective-tol*max(1, abs(*objective)) {
			return fmt.Errorf("status optimal, but the bound %g is below the objective %g", *bound, *objective)
		}
	}
	if gap != nil {
		if bound == nil || objective == nil {
			return fmt.Errorf("gap %g without both an objective and a bound", *gap)
		}
		want := 0.0
		if *objective > 0 {
			want = max(0, (*objective-*bound) / *objective)
		}
		if abs(*gap-want) > tol {
			return fmt.Errorf("gap %g, but (objective − bound) / objective is %g", *gap, want)
		}
	}
	return nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// CheckFigures checks that the result's status, objective, bound and gap
// agree (see checkFigures); multi says whether a multi-node job is
// allocated (the jobs the objective prices).
func (d *ResultDoc) CheckFigures(multi bool) error {
	var obj *float64
	if d.Objective != nil {
		o := float64(*d.Objective)
		obj = &o
	}
	return checkFigures(d.Status, obj, d.Bound, d.Gap, multi)
}

// CheckFigures checks that the schedule's status, objective, bound and
// gap agree (see checkFigures); scheduled says whether any job is.
func (d *ScheduleDoc) CheckFigures(scheduled bool) error {
	return checkFigures(d.Status, d.Objective, d.Bound, d.Gap, scheduled)
}

func fieldErr(path, format string, args ...any) error {
	return &windowjson.FieldError{Path: path, Reason: fmt.Sprintf(format, args...)}
}
