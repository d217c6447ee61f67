// Package verdict judges a whole-node answer for a window — what a result
// document of `optsched solve -o json` states — beyond feasibility: that
// the jobs allocated are the window's selection, that the costs and the
// objective are those of the cost model, and that the status claims no
// more than can be true given what the checker can prove by itself (an
// independent lower bound and placements it finds).
//
// Like model.Check, on which it builds, it shares no code with any solver
// or with model.SelectJobs: the selection rule, the lower bound and the
// checker's placements are written again from their definitions ([Lan23]
// §III-C, Eq. (1), §IV-A), so that a bug in a solver's pipeline cannot
// hide behind the same bug here.
package verdict

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model"
)

// An Answer is a whole-node answer for a window, as a result document
// states it, mapped onto the window (job indices, node ids).
type Answer struct {
	// Status is optimal, feasible, fallback, unknown or infeasible.
	Status string
	// Objective is the reported objective, nil when there is none.
	Objective *int64
	// Bound is the reported lower bound, nil when there is none.
	Bound *float64
	// Allocations are the jobs that start; Costs, when not nil, their
	// reported CH costs (one per allocation).
	Allocations []model.Allocation
	Costs       []int64
	// Deferred are the jobs that wait, with their reasons.
	Deferred []model.Deferral
	// MaxJobs is the cap on the multi-node jobs the answer was solved
	// with (0: none); MaxJobsKnown says whether the document recorded it
	// or the caller gave it. When unknown, the selection may have been
	// made with no cap or with the cap the allocation implies.
	MaxJobs      int
	MaxJobsKnown bool
}

// A Check is one verdict on one property of an answer.
type Check struct {
	// Name names the property: feasible, accounted, costs, objective,
	// selection, optimality, bound (and figures, added by the caller).
	Name string `json:"name"`
	// OK is true when the property holds.
	OK bool `json:"ok"`
	// Detail says what was checked, or what is wrong.
	Detail string `json:"detail"`
}

// A Verdict is the judgement of an answer: every check with its outcome,
// and the figures the checker computed by itself.
type Verdict struct {
	// Valid is true when every check holds.
	Valid bool `json:"valid"`
	// Checks are the checks in the order they ran.
	Checks []Check `json:"checks"`
	// Objective is the objective recomputed from the allocations: the
	// CH cost of the multi-node jobs.
	Objective int64 `json:"objective"`
	// LowerBound is the checker's lower bound on the objective of the
	// selected multi-node jobs: the sum over those jobs of the least cost
	// any set of that many idle nodes can have (see JobLowerBound).
	LowerBound int64 `json:"lower_bound"`
	// CheckerBest is the cost of the cheapest placement of the selected
	// multi-node jobs the checker found (runs of the idle sequence, as
	// [Lan23] §IV-A's blocks); nil when there are none to place.
	CheckerBest *int64 `json:"checker_best"`
	// Selected are the ids of the jobs the selection rule starts.
	Selected []string `json:"selected"`
}

// Add appends a check to v, keeping Valid up to date.
func (v *Verdict) Add(name string, err error, okDetail string) {
	if err != nil {
		v.Checks = append(v.Checks, Check{Name: name, OK: false, Detail: err.Error()})
		v.Valid = false
		return
	}
	v.Checks = append(v.Checks, Check{Name: name, OK: true, Detail: okDetail})
}

// Err returns nil for a valid verdict, or an error listing the failed
// checks.
func (v *Verdict) Err() error {
	var errs []error
	for _, c := range v.Checks {
		if !c.OK {
			errs = append(errs, fmt.Errorf("%s: %s", c.Name, c.Detail))
		}
	}
	return errors.Join(errs...)
}

// maxPairwise bounds the node count of a job whose cost Judge recomputes
// pair by pair (model.CostModel.PairwiseCost, the definition of Eq. (1)
// itself, O(n²)); larger jobs are priced with model.CostModel.Cost.
const maxPairwise = 2000

// Judge checks answer a for window w under w.Cost. It never stops at the
// first failed check: every check runs and is reported, in this order:
//
//   - feasible: model.Check;
//   - accounted: every waiting job allocated or deferred once
//     (model.CheckAccounted);
//   - costs: each reported cost is the cost model's;
//   - objective: the reported objective is the CH cost of the
//     multi-node allocations;
//   - selection: the jobs that start are exactly the selection rule's
//     (see Select), except that under status unknown or infeasible the
//     selected multi-node jobs wait;
//   - optimality: an answer claiming optimal costs no less than the
//     lower bound and no more than the checker's best placement; one
//     claiming infeasible has no placement the checker can find;
//   - bound: a reported bound is no more than the checker's best
//     placement.
func Judge(w *model.Window, a Answer) *Verdict {
	v := &Verdict{Valid: true}
	v.Add("feasible", model.Check(w, a.Allocations),
		"only free nodes, each job its requested count, no node twice, no start before the window time")
	v.Add("accounted", model.CheckAccounted(w, a.Allocations, a.Deferred),
		"every waiting job allocated or deferred exactly once")

	// costs and objective
	var costErr error
	var obj int64
	multiAlloc := map[int]bool{}
	for i, al := range a.Allocations {
		if al.Job < 0 || al.Job >= len(w.Jobs) || !validNodes(w, al.Nodes) {
			continue // feasible has reported it
		}
		c := jobCost(w, al.Nodes)
		if a.Costs != nil && a.Costs[i] != c && costErr == nil {
			costErr = fmt.Errorf("allocations[%d] (job %s): reported cost %d, the cost model %s gives %d",
				i, w.Jobs[al.Job].ID, a.Costs[i], costName(w.Cost), c)
		}
		if len(al.Nodes) >= 2 {
			obj += c
			multiAlloc[al.Job] = true
		}
	}
	v.Objective = obj
	v.Add("costs", costErr, "each allocation's cost is the "+costName(w.Cost)+" cost of its nodes")
	var objErr error
	if a.Objective != nil && *a.Objective != obj {
		objErr = fmt.Errorf("reported %d, the multi-node allocations cost %d", *a.Objective, obj)
	}
	v.Add("objective", objErr, fmt.Sprintf("%d, the CH cost of the multi-node allocations", obj))

	// selection
	caps := []int{a.MaxJobs}
	if !a.MaxJobsKnown {
		caps = []int{0}
		if m := len(multiAlloc); m > 0 {
			caps = append(caps, m)
		}
	}
	var sel Selection
	var selErr error
	for i, c := range caps {
		sel = Select(w, c)
		if selErr = checkSelection(w, a, sel); selErr == nil {
			break
		}
		if i > 0 {
			selErr = fmt.Errorf("%w (also against a cap of %d multi-node jobs)", selErr, c)
		}
	}
	for _, j := range sel.Start {
		v.Selected = append(v.Selected, w.Jobs[j].ID)
	}
	v.Add("selection", selErr, fmt.Sprintf("the jobs that start are the selection's %d (waiting periods, then size, while they fit%s)",
		len(sel.Start), capText(sel.Cap)))

	// What the checker can prove about the selected multi-node jobs.
	var multi []int
	for _, j := range sel.Start {
		if w.Jobs[j].Nodes >= 2 {
			multi = append(multi, j)
		}
	}
	if len(multi) > 0 {
		lb := newBounder(w)
		for _, j := range multi {
			v.LowerBound += lb.bound(w.Jobs[j].Nodes)
		}
	}
	if len(multi) > 0 {
		best := BestPlacement(w, multi)
		v.CheckerBest = &best
	}
	sameSet := len(multi) == len(multiAlloc)
	for _, j := range multi {
		sameSet = sameSet && multiAlloc[j]
	}
	var optErr error
	optDetail := "no optimality claimed"
	switch {
	case a.Status == "optimal" && len(multi) == 0:
		optDetail = "no multi-node job to place: the empty placement is optimal"
	case a.Status == "optimal":
		claimed := obj
		if a.Objective != nil {
			claimed = *a.Objective
		}
		switch {
		case claimed < v.LowerBound:
			optErr = fmt.Errorf("status optimal with objective %d, but the selected multi-node jobs cannot cost less than %d (the checker's lower bound)", claimed, v.LowerBound)
		case sameSet && v.CheckerBest != nil && obj > *v.CheckerBest:
			optErr = fmt.Errorf("status optimal with objective %d, but the checker found a placement of the same jobs costing %d", obj, *v.CheckerBest)
		default:
			optDetail = fmt.Sprintf("objective %d lies between the checker's lower bound %d and its best placement %s", claimed, v.LowerBound, fmtPtr(v.CheckerBest))
		}
	case a.Status == "infeasible" && v.CheckerBest != nil:
		optErr = fmt.Errorf("status infeasible, but the checker placed the selected multi-node jobs at cost %d", *v.CheckerBest)
	}
	v.Add("optimality", optErr, optDetail)

	var boundErr error
	boundDetail := "no bound reported"
	if a.Bound != nil {
		boundDetail = fmt.Sprintf("%s, at most the checker's best placement %s", plain(*a.Bound), fmtPtr(v.CheckerBest))
		switch {
		case v.CheckerBest == nil && *a.Bound > 1e-6:
			boundErr = fmt.Errorf("%s, but there is no multi-node job to place (the optimum is 0)", plain(*a.Bound))
		case v.CheckerBest != nil && *a.Bound > float64(*v.CheckerBest)+1e-6:
			boundErr = fmt.Errorf("%s is above the cost %d of a placement the checker found", plain(*a.Bound), *v.CheckerBest)
		}
	}
	v.Add("bound", boundErr, boundDetail)
	return v
}

// plain writes x without an exponent.
func plain(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func fmtPtr(p *int64) string {
	if p == nil {
		return "(none)"
	}
	return fmt.Sprint(*p)
}

func capText(c int) string {
	if c > 0 {
		return fmt.Sprintf(", at most %d multi-node jobs", c)
	}
	return ""
}

// costName names a cost model as window files do.
func costName(m model.CostModel) string {
	return fmt.Sprintf("%s (c = %d)", m.Kind, m.HopCost)
}

func validNodes(w *model.Window, nodes []int) bool {
	n := w.Topology.NumNodes()
	seen := make(map[int]bool, len(nodes))
	for _, k := range nodes {
		if k < 0 || k >= n || seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// jobCost is the CH cost of nodes: by the pairwise definition for up to
// maxPairwise nodes, by model.CostModel.Cost above.
func jobCost(w *model.Window, nodes []int) int64 {
	if len(nodes) <= maxPairwise {
		return w.Cost.PairwiseCost(w.Topology, nodes)
	}
	return w.Cost.Cost(w.Topology, nodes)
}

// checkSelection checks that the jobs a starts are exactly sel's, with the
// selected multi-node jobs waiting instead under status unknown or
// infeasible (the solver found no placement, or claims there is none:
// the optimality check judges that claim).
func checkSelection(w *model.Window, a Answer, sel Selection) error {
	allocated := make(map[int]bool, len(a.Allocations))
	for _, al := range a.Allocations {
		allocated[al.Job] = true
	}
	selected := make(map[int]bool, len(sel.Start))
	noPlacement := a.Status == "unknown" || a.Status == "infeasible"
	var wrong []string
	note := func(format string, args ...any) {
		if len(wrong) < 5 {
			wrong = append(wrong, fmt.Sprintf(format, args...))
		}
	}
	for _, j := range sel.Start {
		selected[j] = true
		job := &w.Jobs[j]
		if allocated[j] {
			continue
		}
		if job.Nodes >= 2 && noPlacement {
			continue
		}
		note("job %s (%d nodes, nwp %d) is selected (it fits), but not allocated", job.ID, job.Nodes, job.NWP)
	}
	for _, al := range a.Allocations {
		if al.Job < 0 || al.Job >= len(w.Jobs) || selected[al.Job] {
			continue
		}
		job := &w.Jobs[al.Job]
		note("job %s is allocated, but the selection defers it: %s", job.ID, sel.Why[al.Job])
	}
	if len(wrong) == 0 {
		return nil
	}
	return errors.New(strings.Join(wrong, "; "))
}

// A Selection is what the selection rule starts in a window.
type Selection struct {
	// Start are the indices of the jobs that start, in priority order.
	Start []int
	// Why gives, for each job not started, the reason.
	Why map[int]string
	// Cap is the cap on multi-node jobs applied (0: none).
	Cap int
}

// Select applies the selection rule of [Lan23] §III-C as optsched
// documents it (docs/formats.md, `optsched solve --help`): the waiting
// jobs are ranked by more waiting periods (nwp) first, then fewer
// requested nodes, then window order; they are taken in that order while
// their node counts fit in the idle nodes left, and the selection stops at
// the first job that does not fit, and at the first multi-node job beyond
// maxMulti multi-node jobs when maxMulti > 0. It is written apart from
// model.SelectJobs, which the solvers use.
func Select(w *model.Window, maxMulti int) Selection {
	type ranked struct{ nwp, nodes, idx int }
	rs := make([]ranked, len(w.Jobs))
	for i, j := range w.Jobs {
		rs[i] = ranked{j.NWP, j.Nodes, i}
	}
	slices.SortFunc(rs, func(x, y ranked) int {
		switch {
		case x.nwp != y.nwp:
			if x.nwp > y.nwp {
				return -1
			}
			return 1
		case x.nodes != y.nodes:
			if x.nodes < y.nodes {
				return -1
			}
			return 1
		}
		return x.idx - y.idx
	})
	s := Selection{Why: map[int]string{}, Cap: maxMulti}
	left := len(w.Idle)
	multi := 0
	stopped := ""
	for _, r := range rs {
		if stopped != "" {
			s.Why[r.idx] = stopped
			continue
		}
		job := &w.Jobs[r.idx]
		if job.Nodes > left {
			s.Why[r.idx] = fmt.Sprintf("needs %d nodes, %d idle nodes left after the jobs ranked before it", job.Nodes, left)
			stopped = fmt.Sprintf("ranked after job %s, which does not fit", job.ID)
			continue
		}
		if job.Nodes >= 2 && maxMulti > 0 && multi == maxMulti {
			s.Why[r.idx] = fmt.Sprintf("beyond the cap of %d multi-node jobs", maxMulti)
			stopped = fmt.Sprintf("ranked after job %s, beyond the cap of %d multi-node jobs", job.ID, maxMulti)
			continue
		}
		left -= job.Nodes
		if job.Nodes >= 2 {
			multi++
		}
		s.Start = append(s.Start, r.idx)
	}
	return s
}

// A ScheduleAnswer is an answer of the time-and-resource model ([Bridi16];
// `optsched solve --encoding cp`), as a schedule document states it.
type ScheduleAnswer struct {
	// Objective is the reported objective, nil when there is none.
	Objective *float64
	// Bound is the reported lower bound, nil when there is none.
	Bound *float64
	// CHWeight is the weight W of the CH term of the objective (0: none).
	CHWeight float64
	// Allocations, Costs and Deferred are as in Answer.
	Allocations []model.Allocation
	Costs       []int64
	Deferred    []model.Deferral
}

// JudgeSchedule checks schedule answer a for window w: feasible and
// accounted (as Judge), costs (each reported cost is the cost model's),
// objective (the weighted queue time Σ (start − submit) / ewt_queue, plus
// CHWeight times the allocations' CH costs) and bound (at most the
// objective). The selection rule does not apply: the model schedules
// every job that ever fits.
func JudgeSchedule(w *model.Window, a ScheduleAnswer) *Verdict {
	v := &Verdict{Valid: true}
	v.Add("feasible", model.Check(w, a.Allocations),
		"units within node capacities at every time, exclusivity, place and reservations kept, no start before the window time")
	v.Add("accounted", model.CheckAccounted(w, a.Allocations, a.Deferred),
		"every waiting job scheduled or deferred exactly once")
	var costErr error
	var ch int64
	for i, al := range a.Allocations {
		if al.Job < 0 || al.Job >= len(w.Jobs) || !validNodes(w, al.Nodes) {
			continue
		}
		c := jobCost(w, al.Nodes)
		ch += c
		if a.Costs != nil && a.Costs[i] != c && costErr == nil {
			costErr = fmt.Errorf("allocations[%d] (job %s): reported cost %d, the cost model %s gives %d",
				i, w.Jobs[al.Job].ID, a.Costs[i], costName(w.Cost), c)
		}
	}
	v.Add("costs", costErr, "each allocation's cost is the "+costName(w.Cost)+" cost of its nodes")
	obj := model.WeightedQueueTime(w, a.Allocations)
	what := "weighted queue time"
	var objErr error
	switch {
	case a.CHWeight < 0 || a.CHWeight != a.CHWeight || a.CHWeight > 1e300:
		objErr = fmt.Errorf("ch_weight: must be a finite number at least 0, got %v", a.CHWeight)
	case a.CHWeight > 0:
		obj += a.CHWeight * float64(ch)
		what = fmt.Sprintf("weighted queue time + %g x CH cost", a.CHWeight)
	}
	tol := 1e-6 * max(1, abs(obj))
	if objErr == nil && a.Objective != nil && abs(*a.Objective-obj) > tol {
		objErr = fmt.Errorf("reported %.9g, the schedule's %s is %.9g", *a.Objective, what, obj)
	}
	v.Add("objective", objErr, fmt.Sprintf("%.9g, the schedule's %s", obj, what))
	var boundErr error
	if a.Bound != nil && a.Objective != nil && *a.Bound > *a.Objective+1e-6*max(1, abs(*a.Objective)) {
		boundErr = fmt.Errorf("%.9g is above the objective %.9g", *a.Bound, *a.Objective)
	}
	v.Add("bound", boundErr, "at most the objective")
	v.Objective = int64(obj + 0.5)
	return v
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
