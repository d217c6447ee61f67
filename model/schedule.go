package model

import (
	"encoding/json"
	"fmt"
)

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
// w, as ParseResult does. Feasibility is Check's business.
func ParseSchedule(w *Window, data []byte) (*ScheduleDoc, []Allocation, error) {
	var doc ScheduleDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, &FieldError{Reason: fmt.Sprintf("not a schedule document: %v", err)}
	}
	allocs, err := allocationsOf(w, doc.Allocations, doc.Deferred)
	if err != nil {
		return nil, nil, err
	}
	return &doc, allocs, nil
}

// WeightedQueueTime returns Σ (start − submit) / ewt over allocs: the
// objective of [Bridi16] Eq. (2) (each job's wait in units of its queue's
// expected wait).
func WeightedQueueTime(w *Window, allocs []Allocation) float64 {
	var sum float64
	for _, a := range allocs {
		j := &w.Jobs[a.Job]
		sum += float64(a.Start-j.Submit) / float64(w.ExpectedWait(j.Queue))
	}
	return sum
}
