package model

import "fmt"

// CheckAccounted checks that every waiting job of w appears exactly once
// in a window's answer: allocated (allocs) or deferred with a reason
// (deferred). It is the accounting half of the result contract, the other
// half being Check (feasibility); it shares no code with any solver.
func CheckAccounted(w *Window, allocs []Allocation, deferred []Deferral) error {
	seen := make([]int, len(w.Jobs))
	for _, a := range allocs {
		if a.Job < 0 || a.Job >= len(w.Jobs) {
			return fmt.Errorf("allocation of job index %d, which the window does not have", a.Job)
		}
		seen[a.Job]++
	}
	for _, d := range deferred {
		if d.Job < 0 || d.Job >= len(w.Jobs) {
			return fmt.Errorf("deferral of job index %d, which the window does not have", d.Job)
		}
		if d.Reason == "" {
			return fmt.Errorf("job %s: deferred without a reason", w.Jobs[d.Job].ID)
		}
		seen[d.Job]++
	}
	missing, twice := 0, 0
	first := ""
	for j, n := range seen {
		switch {
		case n == 0:
			missing++
		case n > 1:
			twice++
		default:
			continue
		}
		if first == "" {
			first = fmt.Sprintf("job %s appears %d times", w.Jobs[j].ID, n)
		}
	}
	if missing+twice > 0 {
		return fmt.Errorf("every waiting job must be allocated or deferred exactly once: %d missing, %d more than once (%s)", missing, twice, first)
	}
	return nil
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
