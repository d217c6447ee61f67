//go:build pbsitest

package itest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDefaultServerStopped: scenario 4, pbs_server stopped. Each subtest
// stops the server with qterm -t quick and starts it again (warm: the
// jobs and vnodes are kept); this file sorts last so that a server that
// does not come back fails only these tests.
func TestDefaultServerStopped(t *testing.T) {
	need(t, cfgDefault)

	// pbs_server is stopped (qterm -t quick) before a cycle: the cycle
	// fails with an error on stderr and a non-zero exit; once the server
	// is back, nothing has started.
	t.Run("server-stopped", func(t *testing.T) {
		reset(t)
		ids := []string{sleepJob(t, "down0", 5, "select=1:ncpus=1"), sleepJob(t, "down1", 5, "select=1:ncpus=4")}
		stopServer(t)
		o := newOptsched(t)
		for _, args := range [][]string{
			append([]string{"pbs", "plan", "--apply"}, defaultArgs...),
			{"pbs", "plan", "--apply"},
			append([]string{"pbs", "run", "--apply", "--once"}, defaultArgs...),
		} {
			r := o.run(args...)
			if r.code == 0 {
				t.Errorf("optsched %s with the server down: exit 0, want non-zero", shellQuote(args))
			}
			if strings.TrimSpace(r.stderr) == "" {
				t.Errorf("optsched %s with the server down: nothing on stderr", shellQuote(args))
			}
		}
		startServer(t)
		js := jobs(t)
		notStarted(t, js, ids...)
		for _, id := range ids {
			if js[id].State != "Q" {
				t.Errorf("after the failed cycles: %v, want state Q", js[id])
			}
		}
		for n, e := range o.audit() {
			if e.Error == "" {
				t.Errorf("audit line %d: a cycle against a stopped server logged no error", n+1)
			}
		}
	})

	// pbs_server stops in the middle of a cycle: the qrun wrapper runs
	// qterm -t quick before the first real qrun. Every qrun of the cycle
	// fails, the exit status is non-zero, and nothing has started once
	// the server is back.
	t.Run("server-stopped-mid-apply", func(t *testing.T) {
		reset(t)
		ids := []string{sleepJob(t, "mid0", 5, "select=1:ncpus=1"), sleepJob(t, "mid1", 5, "select=1:ncpus=2")}
		dir := t.TempDir()
		mark := filepath.Join(dir, "stopped")
		wrapper := qrunWrapper(t, dir, fmt.Sprintf("if [ ! -e %s ]; then touch %s; qterm -t quick; sleep 2; fi\n", mark, mark))
		o := newOptsched(t)
		serverStopped := false
		t.Cleanup(func() {
			if serverStopped && runCmd(10*time.Second, "qstat", "-B").code != 0 {
				startServer(t)
			}
		})
		serverStopped = true
		r := o.run(append([]string{"pbs", "plan", "--apply", "--qrun", wrapper}, defaultArgs...)...)
		if _, err := os.Stat(mark); err != nil {
			t.Fatalf("the cycle ran no qrun, so the server was not stopped mid-cycle (exit %d)", r.code)
		}
		if r.code == 0 {
			t.Errorf("plan --apply with the server stopped mid-cycle: exit 0, want non-zero")
		}
		if strings.TrimSpace(r.stderr) == "" {
			t.Errorf("plan --apply with the server stopped mid-cycle: nothing on stderr")
		}
		waitUntil(t, 30*time.Second, "pbs_server should be down", func() (bool, string) {
			return runCmd(10*time.Second, "qstat", "-B").code != 0, "qstat -B still answers"
		})
		startServer(t)
		js := jobs(t)
		notStarted(t, js, ids...)
	})
}

// stopServer stops pbs_server (qterm -t quick) and waits until it is
// gone; a cleanup starts it again if the test has not.
func stopServer(t *testing.T) {
	t.Helper()
	pbsRun(t, "qterm", "-t", "quick")
	t.Cleanup(func() {
		if runCmd(10*time.Second, "qstat", "-B").code != 0 {
			startServer(t)
		}
	})
	waitUntil(t, 60*time.Second, "pbs_server should stop", func() (bool, string) {
		return runCmd(10*time.Second, "qstat", "-B").code != 0, "qstat -B still answers"
	})
}

// startServer starts pbs_server again (warm: jobs and vnodes kept) and
// waits until it answers and every vnode is back.
func startServer(t *testing.T) {
	t.Helper()
	waitUntil(t, 60*time.Second, "the old pbs_server should be gone", func() (bool, string) {
		return runCmd(10*time.Second, "pgrep", "-x", "pbs_server.bin").code != 0, "pbs_server.bin still runs"
	})
	if r := runCmdEnv(120*time.Second, nil, "pbs_server", "-t", "warm"); r.code != 0 {
		t.Fatalf("pbs_server -t warm: %v", r)
	}
	waitUntil(t, 120*time.Second, "pbs_server should answer again", func() (bool, string) {
		r := runCmd(10*time.Second, "qstat", "-B")
		return r.code == 0, r.String()
	})
	waitUntil(t, 120*time.Second, "every vnode should be back", func() (bool, string) {
		vs, err := readVnodes()
		if err != nil {
			return false, err.Error()
		}
		for name, v := range vs {
			if strings.Contains(v.State, "down") || strings.Contains(v.State, "unknown") {
				return false, name + " is " + v.State
			}
		}
		return true, ""
	})
}
