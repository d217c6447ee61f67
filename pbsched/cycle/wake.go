package cycle

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	_ "embed"
)

// DefaultWakeDelay is how long a woken Loop waits before its cycle. The
// hook's events run inside the server just as it queues a job
// (postqueuejob) and just before it frees an ended job's vnodes
// (jobobit); the server finishes that work before it answers the next
// request, so a cycle could start at once. The signals that come during
// a cycle make one cycle after it; the delay gathers a burst of
// submissions into one cycle when the daemon is idle, and is short: on
// the replays of docs/pbs.md most of a woken cycle's reaction time is
// its reads and qruns, and every 100 ms of it shows in the waits of the
// short jobs.
const DefaultWakeDelay = 20 * time.Millisecond

// wakeHook is the PBS server hook that wakes `optsched pbs run`; see
// WakeHook.
//
//go:embed optsched_wake.py
var wakeHook string

// wakeHookPIDFile is the placeholder of the pid file's path in wakeHook.
const wakeHookPIDFile = "@PID_FILE@"

// WakeHook returns the source of a PBS server hook (Python, events
// postqueuejob and jobobit) that sends SIGUSR1 to the `optsched pbs run`
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
