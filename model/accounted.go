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
