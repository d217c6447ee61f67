package model

import (
	"encoding/json"
	"fmt"
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
// path. It checks names only; feasibility is Check's business.
func ParseResult(w *Window, data []byte) (*ResultDoc, []Allocation, error) {
	var doc ResultDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, &FieldError{Reason: fmt.Sprintf("not a result document: %v", err)}
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
func allocationsOf(w *Window, docs []AllocationDoc, deferred []DeferralDoc) ([]Allocation, error) {
	allocs := make([]Allocation, 0, len(docs))
	for i := range docs {
		a := &docs[i]
		path := fmt.Sprintf("allocations[%d]", i)
		j, ok := w.JobIndex(a.Job)
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
		if _, ok := w.JobIndex(d.Job); !ok {
			return nil, fieldErr(fmt.Sprintf("deferred[%d].job", i), "job %q is not waiting in the window", d.Job)
		}
	}
	return allocs, nil
}

// allocationOf maps one allocation document of job index j onto w.
func allocationOf(w *Window, path string, j int, a *AllocationDoc) (Allocation, error) {
	al := Allocation{Job: j, Start: a.Start, Nodes: make([]int, len(a.Nodes))}
	for k, name := range a.Nodes {
		id, ok := w.Topology.Lookup(name)
		if !ok {
			return al, fieldErr(fmt.Sprintf("%s.nodes[%d]", path, k), "node %q is not in the topology", name)
		}
		al.Nodes[k] = id
	}
	if a.Units != nil {
		al.Units = make(map[int]int, len(a.Units))
		for _, name := range sortedKeys(a.Units) {
			id, ok := w.Topology.Lookup(name)
			if !ok {
				return al, fieldErr(fmt.Sprintf("%s.units[%q]", path, name), "node %q is not in the topology", name)
			}
			al.Units[id] = a.Units[name]
		}
	}
	return al, nil
}
