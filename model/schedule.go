package model

import ()

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
