package sat

import "time"

// The counters of a Schedule call are a *solver.SATStats, the answer's
// Stats.SAT; the searches' are solver.SATSearchStats.

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
