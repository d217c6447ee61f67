package cycle

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	_ "embed"
)

// DefaultWakeDelay is how long a woken Loop waits before its cycle: the
// server's queuejob hook runs before the job is queued, so a cycle that
// read the server at once could miss it; the delay also gathers a burst
// of submissions into one cycle.
const DefaultWakeDelay = 200 * time.Millisecond

// wakeHook is the PBS server hook that wakes `optsched pbs run`; see
// WakeHook.
//
//go:embed optsched_wake.py
var wakeHook string

// wakeHookPIDFile is the placeholder of the pid file's path in wakeHook.
const wakeHookPIDFile = "@PID_FILE@"

// WakeHook returns the source of a PBS server hook (Python, events
// queuejob and jobobit) that sends SIGUSR1 to the `optsched pbs run`
// whose --pid-file is pidFile, so that a cycle follows each submission
// and each job's end at once instead of at the next interval. It checks
// that the pid still names an optsched process before it signals, and
// always accepts the event: a hook never refuses a job for optsched.
func WakeHook(pidFile string) (string, error) {
	if !filepath.IsAbs(pidFile) {
		return "", fmt.Errorf("the pid file must be an absolute path (the hook runs in the server's folder), got %q", pidFile)
	}
	if strings.ContainsAny(pidFile, "\"\\\n\r") {
		return "", fmt.Errorf("the pid file's path must not contain quotes, backslashes or line breaks, got %q", pidFile)
	}
	return strings.ReplaceAll(wakeHook, wakeHookPIDFile, pidFile), nil
}
