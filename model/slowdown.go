package model

// BoundedSlowdownFloor is τ of the bounded slowdown, in seconds: a job's
// slowdown is taken relative to max(run time, τ), so that jobs of a few
// seconds do not dominate a mean.
const BoundedSlowdownFloor = 10

// BoundedSlowdown is a job's bounded slowdown,
//
//	max(1, (wait + run) / max(run, BoundedSlowdownFloor)),
//
// for its wait and run time in seconds: the one definition every
// simulator, replay, benchmark and bound of optsched reports.
func BoundedSlowdown(wait, run float64) float64 {
	return max(1, (wait+run)/max(run, BoundedSlowdownFloor))
}
