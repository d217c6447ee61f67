package offline

import (
	"errors"
	"fmt"

	"github.com/optsched/optsched/model"
)

// Floor is the τ of the bounded slowdown: a job's slowdown is taken
// relative to max(run time, Floor) seconds.
const Floor = model.BoundedSlowdownFloor

// Job is one job of a sequence: its submit time and actual run time in
// seconds, and the number of nodes it holds for its whole run.
type Job struct {
	Submit, Run int64
	Nodes       int
}

// BSLD is the bounded slowdown of job j started at start:
//
//	max(1, (start − Submit + Run) / max(Run, Floor)).
//
// A start before the submit time is not a valid start; BSLD does not check
// it (the formula still applies).
func BSLD(j Job, start int64) float64 {
	return model.BoundedSlowdown(float64(start-j.Submit), float64(j.Run))
}

// ErrNodes is returned for a cluster of fewer than one node.
var ErrNodes = errors.New("offline: the cluster needs at least one node")

// maxTime bounds submit and run times so that every start, end and sum of
// them that the package forms stays exact in int64 and in float64
// (2^52 s is over a hundred million years).
const maxTime = int64(1) << 40

// JobError says which field of which job is invalid.
type JobError struct {
	Index  int    // the job's index in the sequence
	Field  string // "Submit", "Run" or "Nodes"
	Reason string
}

func (e *JobError) Error() string {
	return fmt.Sprintf("offline: job %d: %s %s", e.Index, e.Field, e.Reason)
}

// Validate checks a sequence against a cluster of nodes nodes: every job
// has 1 ≤ Nodes ≤ nodes, 0 ≤ Run and |Submit|, Run ≤ 2^40 s. It returns
// ErrNodes or a *JobError naming the first bad job and field.
func Validate(jobs []Job, nodes int) error {
	if nodes < 1 {
		return ErrNodes
	}
	for i, j := range jobs {
		switch {
		case j.Nodes < 1:
			return &JobError{i, "Nodes", fmt.Sprintf("is %d, below 1", j.Nodes)}
		case j.Nodes > nodes:
			return &JobError{i, "Nodes", fmt.Sprintf("is %d, above the cluster's %d", j.Nodes, nodes)}
		case j.Run < 0:
			return &JobError{i, "Run", fmt.Sprintf("is %d, negative", j.Run)}
		case j.Run > maxTime:
			return &JobError{i, "Run", fmt.Sprintf("is %d, above 2^40", j.Run)}
		case j.Submit > maxTime || j.Submit < -maxTime:
			return &JobError{i, "Submit", fmt.Sprintf("is %d, beyond ±2^40", j.Submit)}
		}
	}
	return nil
}

// Value is the sum of the bounded slowdowns of a schedule (it does not
// check feasibility; see Check).
func Value(jobs []Job, starts []int64) float64 {
	v := 0.0
	for i, j := range jobs {
		v += BSLD(j, starts[i])
	}
	return v
}
