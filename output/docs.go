package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
)

// An AnswerDoc is the JSON answer of a window solve in either model, the
// contract of `optsched solve -o json` that every solver fills: ResultDoc
// for the whole-node model (its objective an integer CH cost), ScheduleDoc
// for the time-and-resource model ([Bridi16]; `--encoding cp`: when and
// where every waiting job starts, a fractional objective). The fields of
// one model only are optional: granularity_s and ch_weight are the
// time-and-resource model's, max_jobs the whole-node model's. Field names
// are stable.
type AnswerDoc[O solver.ObjectiveValue] struct {
	// Status is optimal, feasible, fallback, unknown or infeasible.
	Status string `json:"status"`
	// Objective, null when there is no allocation: whole-node, the total
	// CH cost of the window's multi-node jobs (the jobs the optimisation
	// places); time-and-resource, the weighted queue time of the
	// scheduled jobs, Σ (start − submit) / ewt_queue ([Bridi16] Eq. 2),
	// plus the CH term with CHWeight.
	Objective *O `json:"objective"`
	// Bound is a proven lower bound on the objective, null when unknown.
	Bound *float64 `json:"bound"`
	// Gap is (objective − bound) / objective, null when the bound is
	// unknown.
	Gap *float64 `json:"gap"`
	// Encoding names the formulation solved (scas, csp, dcas, tree for
	// the Slurm and Mishra allocators, cp; none when no multi-node job
	// needed placing).
	Encoding string `json:"encoding"`
	// Solver names the solver or heuristic that produced the allocation.
	Solver string `json:"solver"`
	// ElapsedMS is the wall time of the solve, in milliseconds.
	ElapsedMS float64 `json:"elapsed_ms"`
	// Granularity, time-and-resource model, is the time grid of the
	// starts, in seconds.
	Granularity *int64 `json:"granularity_s,omitempty"`
	// CHWeight, time-and-resource model, when positive, is the weight W
	// of the CH term the objective and bound include: weighted queue
	// time + W·Σ CH cost of the allocations' node sets (CostModel.Cost).
	CHWeight float64 `json:"ch_weight,omitempty"`
	// Cost is the cost model the costs and the objective are priced
	// with (the window's, or solve's --cost). Documents written before it
	// was recorded lack it: validate then prices with the window's model
	// or its own --cost.
	Cost *CostDoc `json:"cost,omitempty"`
	// MaxJobs, whole-node model, is the cap on the multi-node jobs the
	// window was solved with (solve's --max-jobs; 0: none). Documents
	// written before it was recorded lack it.
	MaxJobs *int `json:"max_jobs,omitempty"`
	// Allocations are the jobs that start, with their nodes and cost
	// (time-and-resource: every scheduled job, in start order; those
	// that start at the window time are the decisions, the later starts
	// reservations).
	Allocations []AllocationDoc `json:"allocations"`
	// Deferred are the jobs that wait, with the reason.
	Deferred []DeferralDoc `json:"deferred"`
	// Stats are the solver's counters, a key per solver family that took
	// part (solver.Stats: csp, lp, sat, anneal, portfolio, ...), each
	// with every field of its family under a stable name; absent when the
	// solver keeps none (seq, list schedules, nothing to place).
	Stats *solver.Stats `json:"stats,omitempty"`
}

// A ResultDoc is the answer document of the whole-node model.
type ResultDoc = AnswerDoc[int64]

// A ScheduleDoc is the answer document of the time-and-resource model.
type ScheduleDoc = AnswerDoc[float64]

// Scheduled reports whether d is of the time-and-resource model (it has
// a grid).
func (d *AnswerDoc[O]) Scheduled() bool { return d.Granularity != nil }

// A CostDoc names a cost model as a window file's "cost" object does.
type CostDoc struct {
	// Model is lan-code or lan-paper.
	Model string `json:"model"`
	// HopCost is c, the cost of one hop.
	HopCost int64 `json:"hop_cost"`
}

// CostOf returns the document of cost model m.
func CostOf(m model.CostModel) *CostDoc {
	return &CostDoc{Model: m.Kind.String(), HopCost: m.HopCost}
}

// CostModel returns the cost model d names; errors name the field.
func (d *CostDoc) CostModel() (model.CostModel, error) {
	k, err := model.ParseCostKind(d.Model)
	if err != nil {
		return model.CostModel{}, fieldErr("cost.model", "%v", err)
	}
	if d.HopCost < 1 || d.HopCost > 1_000_000 {
		return model.CostModel{}, fieldErr("cost.hop_cost", "must be an integer from 1 to 1000000, got %d", d.HopCost)
	}
	return model.CostModel{Kind: k, HopCost: d.HopCost}, nil
}

// AllocationDoc is one allocation in an AnswerDoc.
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

// DeferralDoc is one deferred job in an AnswerDoc.
type DeferralDoc struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// Parse decodes an answer document and maps its allocations onto w: job
// ids to job indices and node names to node ids. Errors name the field
// path. It checks names only; feasibility is model.Check's business.
func Parse[O solver.ObjectiveValue](w *model.Window, data []byte) (*AnswerDoc[O], []model.Allocation, error) {
	var doc AnswerDoc[O]
	if err := json.Unmarshal(trimBOM(data), &doc); err != nil {
		kind := "result"
		if _, ok := any(doc.Objective).(*float64); ok {
			kind = "schedule"
		}
		return nil, nil, jsonError(kind, err)
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

// CheckFigures checks that the answer's status, objective, bound and gap
// agree (see checkFigures); priced says whether any job the objective
// prices is allocated (whole-node: a multi-node job; time-and-resource:
// any job).
func (d *AnswerDoc[O]) CheckFigures(priced bool) error {
	var obj *float64
	if d.Objective != nil {
		o := float64(*d.Objective)
		obj = &o
	}
	return checkFigures(d.Status, obj, d.Bound, d.Gap, priced)
}

// trimBOM drops a UTF-8 byte order mark, which some editors write at the
// head of a file and which JSON does not allow.
func trimBOM(data []byte) []byte {
	return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
}

// jsonError says why data is not a document of the given kind in the
// document's words: the field path and the JSON type it wants, never a Go
// type or struct name.
func jsonError(kind string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return &windowjson.FieldError{Path: te.Field, Reason: fmt.Sprintf("%s, want %s", jsonArticle(te.Value), jsonTypeName(te.Type))}
	case errors.As(err, &se):
		return &windowjson.FieldError{Reason: fmt.Sprintf("not a %s document: not JSON at byte %d: %s", kind, se.Offset, se.Error())}
	}
	return &windowjson.FieldError{Reason: fmt.Sprintf("not a %s document: %s", kind, strings.TrimPrefix(err.Error(), "json: "))}
}

// jsonArticle names a JSON value kind as the decoder reports it ("string",
// "number -1", "array") with its article.
func jsonArticle(v string) string {
	switch {
	case strings.HasPrefix(v, "array"), strings.HasPrefix(v, "object"):
		return "an " + v
	case v == "":
		return "a value"
	}
	return "a " + v
}

// jsonTypeName names the JSON a Go type reads.
func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonTypeName(t.Elem()) + " or null"
	}
	return "another JSON type"
}

func fieldErr(path, format string, args ...any) error {
	return &windowjson.FieldError{Path: path, Reason: fmt.Sprintf(format, args...)}
}
