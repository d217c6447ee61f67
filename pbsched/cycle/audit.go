package cycle

import (
	"time"

	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/runloop"
)

// An AuditEntry is one line of the audit log: a cycle's input digest, its
// decisions and the commands' exit codes, or why it failed.
type AuditEntry struct {
	// LoggedAt is when the entry was made (RFC 3339, UTC); Command is
	// "plan", "plan --apply" or "run".
	LoggedAt string `json:"logged_at"`
	Command  string `json:"command"`
	// Apply: the cycle was to run qrun (--apply); the plan's starts carry
	// the exit codes of the qruns that ran.
	Apply bool `json:"apply"`
	// Error is set when the cycle failed (bad input, unsafe plan, qrun
	// failures); Plan is absent when it failed before deciding.
	// InputSHA256 is the digest of the documents read (pbsched.State).
	Error       string           `json:"error,omitempty"`
	InputSHA256 string           `json:"input_sha256,omitempty"`
	Plan        *pbsched.PlanDoc `json:"plan,omitempty"`
	// CycleMS is the cycle's wall time in milliseconds, from taking the
	// lock to the last qrun (reading, deciding, re-reading and acting),
	// for `pbs run` and `plan --apply`: a daemon whose cycles take longer
	// than its --interval shows it here.
	CycleMS float64 `json:"cycle_ms,omitempty"`
	// PhasesMS splits the cycle's time (absent for a cycle that failed
	// before reading).
	PhasesMS *Phases `json:"phases_ms,omitempty"`
}

// Phases are the parts of a cycle's wall time (runloop.Phases); the
// reread is 0 when the state was not read again (Config.RecheckAfter).
type Phases = runloop.Phases

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return runloop.MS(d) }
