//go:build pbsitest

package itest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDefaultWakeHook: the server hook of `optsched pbs wake-hook`
// (postqueuejob, jobobit), installed with qmgr, wakes `optsched pbs run`
// whose interval is 10 minutes: a job submitted to an idle complex
// starts, and the job queued behind it starts when it ends, each within
// a minute — long before the next interval. The pid file is there while
// the daemon runs and gone after SIGTERM.
func TestDefaultWakeHook(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "run", "optsched.pid")
	hook := filepath.Join(dir, "optsched_wake.py")
	o := newOptsched(t)
	r := runCmd(time.Minute, optschedBin, "pbs", "wake-hook", "--pid-file", pidFile)
	if r.code != 0 || r.err != nil {
		t.Fatalf("pbs wake-hook: %v", r)
	}
	if err := os.WriteFile(hook, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	// Hooks live in PBS_HOME, not in the datastore: one left by an
	// earlier run goes first.
	runCmd(30*time.Second, "qmgr", "-c", "delete hook optsched_wake")
	qmgr(t, "create hook optsched_wake")
	t.Cleanup(func() { runCmd(30*time.Second, "qmgr", "-c", "delete hook optsched_wake") })
	qmgr(t, `set hook optsched_wake event = "postqueuejob,jobobit"`)
	qmgr(t, "import hook optsched_wake application/x-python default "+hook)

	bg := o.start(append([]string{"pbs", "run", "--apply", "--interval", "10m", "--pid-file", pidFile, "--time-limit", "1s"}, defaultArgs...)...)
	waitUntil(t, 60*time.Second, "the daemon should write its pid file", func() (bool, string) {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return false, err.Error()
		}
		return strings.TrimSpace(string(data)) == strconv.Itoa(bg.cmd.Process.Pid), "pid file holds " + string(data)
	})
	// Let the first cycle (an empty queue) pass: the jobs below must be
	// started by cycles that the hook's wake-ups ran.
	waitUntil(t, 60*time.Second, "the first cycle should be logged", func() (bool, string) {
		_, err := os.Stat(o.log)
		return err == nil, "no audit log yet"
	})

	// Both take all 8 vnodes: b can start only when a has ended.
	a := sleepJob(t, "wake_a", 3, "select=8:ncpus=4", "place=excl")
	b := sleepJob(t, "wake_b", 1, "select=8:ncpus=4", "place=excl")
	waitJobs(t, 60*time.Second, "the submission should wake optsched, which starts the job (the interval is 10 minutes)", []string{a}, func(j job) bool { return j.ran() })
	waitFinished(t, 60*time.Second, a)
	waitJobs(t, 60*time.Second, "the end of the job before it should wake optsched, which starts this one", []string{b}, func(j job) bool { return j.ran() })
	waitFinished(t, 60*time.Second, b)

	if err := bg.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := bg.wait(60 * time.Second); code != 0 {
		t.Errorf("pbs run after SIGTERM: exit %d, want 0", code)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("the pid file outlived the daemon: %v", err)
	}
	if n := len(o.audit()); n < 3 {
		t.Errorf("%d cycles logged, want at least 3 (the first, and one woken by each job)", n)
	}
}
