//go:build pbsitest

package itest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDefaultFaults: scenario 4, on the default complex (the stopped
// server is TestDefaultServerStopped).
func TestDefaultFaults(t *testing.T) {
	need(t, cfgDefault)

	// A vnode is set offline after the state was read and before qrun.
	// The state is captured into files (--qstat FILE --pbsnodes FILE),
	// then pbshost[5] is set offline, then plan --apply runs from those
	// files. qrun -H itself accepts an offline vnode; optsched reads
	// qstat and pbsnodes from the server again just before the first
	// qrun (also when the plan came from files) and drops the start the
	// fresh state no longer allows: nothing starts on pbshost[5], the 7
	// other jobs start, and the dropped job is deferred in the audit log.
	t.Run("offline-between-read-and-apply", func(t *testing.T) {
		reset(t)
		var ids []string
		for i := range 8 { // one job per vnode: the plan uses every vnode
			ids = append(ids, sleepJob(t, fmt.Sprintf("off%d", i), 20, "select=1:ncpus=4"))
		}
		qf, nf := capture(t, t.TempDir())
		const off = "pbshost[5]"
		setOffline(t, off)
		t.Cleanup(func() { runCmd(30*time.Second, "qmgr", "-c", "set node "+off+" state -= offline") })
		o := newOptsched(t)
		if r := o.run(append([]string{"pbs", "plan", "--apply", "--qstat", qf, "--pbsnodes", nf}, defaultArgs...)...); r.code != 0 {
			t.Errorf("plan --apply from files, one start dropped: exit %d, want 0", r.code)
		}
		time.Sleep(time.Second)
		js := jobs(t)
		if on := jobsOn(js, ids, off); len(on) > 0 {
			t.Errorf("jobs %v started on %s, which was offline when qrun ran", on, off)
		}
		var waiting []string
		for _, id := range ids {
			if !js[id].ran() {
				waiting = append(waiting, id)
			}
		}
		if len(waiting) != 1 {
			t.Errorf("%d jobs started, want one on each of the 7 vnodes still online (not started: %v)", len(ids)-len(waiting), waiting)
		}
		checkNoOvercommit(t)
		e := o.onePlan()
		if e.Error != "" {
			t.Errorf("audit log: cycle error %q, want none", e.Error)
		}
		for _, id := range waiting {
			if !listed(e.Plan.Deferred, id) {
				t.Errorf("audit log: job %s, dropped before qrun, is not deferred", id)
			}
		}
		for _, s := range e.Plan.Starts {
			if slices.Contains(vnodesOf(s.ExecVnode), off) {
				t.Errorf("audit log: a start on the offline %s: %s %s", off, s.Job, s.ExecVnode)
			}
		}
	})

	// A job is deleted between plan and apply (the plan is made from
	// captured files, the job is deleted, then --apply runs): the state
	// read again before qrun no longer has it queued, so its start is
	// dropped (deferred in the audit log) and no qrun fails; the other
	// two start; exit 0.
	t.Run("deleted-between-plan-and-apply", func(t *testing.T) {
		reset(t)
		ids := sleepJobs(t, "del", 3, 10, "select=1:ncpus=1")
		qf, nf := capture(t, t.TempDir())
		gone := ids[1]
		pbsRun(t, "qdel", gone)
		waitJobs(t, 30*time.Second, "the deleted job should be finished", []string{gone}, func(j job) bool { return j.State == "F" })
		o := newOptsched(t)
		if r := o.run(append([]string{"pbs", "plan", "--apply", "--qstat", qf, "--pbsnodes", nf}, defaultArgs...)...); r.code != 0 {
			t.Errorf("plan --apply from files with a job deleted since: exit %d, want 0", r.code)
		}
		js := started(t, ids[0], ids[2])
		if js[gone].ran() {
			t.Errorf("deleted job %s ran: %v", gone, js[gone])
		}
		e := o.onePlan()
		if e.Error != "" {
			t.Errorf("audit log: cycle error %q, want none", e.Error)
		}
		if !listed(e.Plan.Deferred, gone) {
			t.Errorf("audit log: the deleted job %s is not deferred", gone)
		}
		for _, s := range e.Plan.Starts {
			switch {
			case s.Job == gone:
				t.Errorf("audit log: a qrun of the deleted job %s", gone)
			case s.ExitCode == nil || *s.ExitCode != 0:
				t.Errorf("audit log: qrun of %s exit %v, want 0", s.Job, s.ExitCode)
			}
		}
	})

	// A job is deleted after the re-read, just before its qrun (the qrun
	// wrapper deletes it, then runs the real qrun): that qrun fails, the
	// other jobs still start, the exit status is 1, and the audit log has
	// the failing qrun and the cycle's error.
	t.Run("deleted-just-before-qrun", func(t *testing.T) {
		reset(t)
		ids := sleepJobs(t, "dq", 3, 10, "select=1:ncpus=1")
		gone := ids[1]
		wrapper := qrunWrapper(t, t.TempDir(), fmt.Sprintf("for a; do job=$a; done\nif [ \"$job\" = %s ]; then qdel %s; fi\n", gone, gone))
		o := newOptsched(t)
		if r := o.run(append([]string{"pbs", "plan", "--apply", "--qrun", wrapper}, defaultArgs...)...); r.code != 1 {
			t.Errorf("plan --apply with a failing qrun: exit %d, want 1", r.code)
		}
		js := started(t, ids[0], ids[2])
		if js[gone].ran() {
			t.Errorf("deleted job %s ran: %v", gone, js[gone])
		}
		e := o.onePlan()
		seen := 0
		for _, s := range e.Plan.Starts {
			if slices.Contains(ids, s.Job) {
				seen++
			}
			switch {
			case s.ExitCode == nil:
				t.Errorf("audit log: start of %s has no exit code", s.Job)
			case s.Job == gone && *s.ExitCode == 0:
				t.Errorf("audit log: qrun of the deleted job %s exit 0", s.Job)
			case s.Job != gone && *s.ExitCode != 0:
				t.Errorf("audit log: qrun of %s exit %d; the server ran it", s.Job, *s.ExitCode)
			}
		}
		if seen != len(ids) {
			t.Errorf("audit log: %d starts of the %d jobs, want every one attempted", seen, len(ids))
		}
		if e.Error == "" {
			t.Errorf("audit log: the cycle with a failed qrun has no error")
		}
	})

	// SIGTERM reaches optsched pbs run --apply while the first qrun of a
	// cycle is in flight: the cycle finishes, every one of its qrun
	// commands runs (each job starts, each qrun is logged with exit 0),
	// and optsched exits 0 without starting another cycle. A qrun
	// wrapper (--qrun) records the call and waits 3 s before the real
	// qrun, so that the signal lands mid-call.
	t.Run("sigterm-mid-apply", func(t *testing.T) {
		reset(t)
		ids := []string{
			sleepJob(t, "term0", 20, "select=1:ncpus=1"),
			sleepJob(t, "term1", 20, "select=1:ncpus=2"),
			sleepJob(t, "term2", 20, "select=1:ncpus=3"),
		}
		dir := t.TempDir()
		calls, inflight := filepath.Join(dir, "calls"), filepath.Join(dir, "inflight")
		wrapper := qrunWrapper(t, dir, fmt.Sprintf("echo \"$*\" >>%s\ntouch %s\nsleep 3\n", calls, inflight))
		o := newOptsched(t)
		bg := o.start(append([]string{"pbs", "run", "--apply", "--interval", "2s", "--qrun", wrapper}, defaultArgs...)...)
		waitUntil(t, 60*time.Second, "a qrun should be in flight", func() (bool, string) {
			_, err := os.Stat(inflight)
			return err == nil, fmt.Sprint(err)
		})
		if err := bg.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		code := bg.wait(120 * time.Second)
		t.Logf("optsched ended %v after SIGTERM with exit %d", time.Since(sent).Round(time.Millisecond), code)
		if code != 0 {
			t.Errorf("run --apply after one SIGTERM: exit %d, want 0", code)
		}
		called := wrapperCalls(t, calls)
		js := started(t, ids...)
		for _, id := range ids {
			if !slices.Contains(called, id) {
				t.Errorf("job %s runs but optsched never called qrun for it: %v", id, js[id])
			}
		}
		if len(called) != len(ids) {
			t.Errorf("qrun called %d times (%v), want once per job (%d)", len(called), called, len(ids))
		}
		entries := o.audit()
		if len(entries) != 1 {
			t.Errorf("audit log: %d cycles, want 1: the signal came during the first, and no other may start after it", len(entries))
		}
		logged := 0
		for _, e := range entries {
			if e.Error != "" {
				t.Errorf("audit log: cycle error %q, want none (the first signal lets the cycle finish)", e.Error)
			}
			if e.Plan == nil {
				continue
			}
			for _, s := range e.Plan.Starts {
				if s.ExitCode == nil || *s.ExitCode != 0 {
					t.Errorf("audit log: qrun of %s exit %v, want 0", s.Job, s.ExitCode)
				} else {
					logged++
				}
			}
		}
		if logged != len(ids) {
			t.Errorf("audit log: %d successful qruns, want %d", logged, len(ids))
		}
		checkNoOvercommit(t)
	})

	// A second SIGTERM aborts the cycle: the qrun in flight is killed
	// with its process group (the wrapper never reaches the real qrun,
	// so its job never starts), the qruns after it do not run, and the
	// audit log has the aborted cycle with an error. Before the real
	// qrun the wrapper runs a subshell that sleeps 10 s and then marks
	// that it woke up: killing the wrapper alone would leave that child
	// to wake up, killing the group does not.
	t.Run("sigterm-twice-mid-apply", func(t *testing.T) {
		reset(t)
		ids := []string{
			sleepJob(t, "abrt0", 10, "select=1:ncpus=1"),
			sleepJob(t, "abrt1", 10, "select=1:ncpus=2"),
			sleepJob(t, "abrt2", 10, "select=1:ncpus=3"),
		}
		dir := t.TempDir()
		calls, inflight, woke := filepath.Join(dir, "calls"), filepath.Join(dir, "inflight"), filepath.Join(dir, "woke")
		const nap = 10 * time.Second
		wrapper := qrunWrapper(t, dir, fmt.Sprintf("echo \"$*\" >>%s\ntouch %s\n(sleep %d; touch %s)\n", calls, inflight, int(nap.Seconds()), woke))
		o := newOptsched(t)
		bg := o.start(append([]string{"pbs", "run", "--apply", "--interval", "2s", "--qrun", wrapper}, defaultArgs...)...)
		waitUntil(t, 60*time.Second, "a qrun should be in flight", func() (bool, string) {
			_, err := os.Stat(inflight)
			return err == nil, fmt.Sprint(err)
		})
		for range 2 {
			if err := bg.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond)
		}
		code := bg.wait(120 * time.Second)
		t.Logf("optsched ended with exit %d after two SIGTERMs", code)
		time.Sleep(nap + 5*time.Second) // a wrapper left running would have woken up and run qrun by now
		if _, err := os.Stat(woke); err == nil {
			t.Errorf("the qrun in flight was not killed with its process group by the second SIGTERM: its child went on after its sleep")
		}
		if called := wrapperCalls(t, calls); len(called) != 1 {
			t.Errorf("qrun called %d times (%v), want once: after the second SIGTERM the rest must not run", len(called), called)
		}
		js := jobs(t)
		for _, id := range ids {
			if j := js[id]; j.ran() || j.State != "Q" {
				t.Errorf("job %s: %v, want queued and never started", id, j)
			}
		}
		entries := o.audit()
		if len(entries) != 1 {
			t.Fatalf("audit log: %d cycles, want 1 (the aborted one)", len(entries))
		}
		if entries[0].Error == "" {
			t.Errorf("audit log: the aborted cycle has no error")
		}
		// The log says what happened: the killed qrun with a non-zero
		// exit code, the others with none (not run).
		if p := entries[0].Plan; p == nil || len(p.Starts) != len(ids) {
			t.Errorf("audit log: the aborted cycle should have the plan with its %d starts", len(ids))
		} else {
			ran := 0
			for _, s := range p.Starts {
				switch {
				case s.ExitCode == nil:
				case *s.ExitCode == 0:
					t.Errorf("audit log: qrun of %s exit 0 in the aborted cycle", s.Job)
				default:
					ran++
				}
			}
			if ran != 1 {
				t.Errorf("audit log: %d starts with an exit code, want 1 (the qrun killed in flight; the others not run)", ran)
			}
		}
	})
}

// wrapperCalls reads the jobs a recording qrun wrapper was called for
// (the last argument of each line of file).
func wrapperCalls(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var called []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			called = append(called, f[len(f)-1])
		}
	}
	return called
}

// qrunWrapper writes a qrun wrapper into dir that runs the shell lines
// pre and then the real qrun.
func qrunWrapper(t *testing.T, dir, pre string) string {
	t.Helper()
	p := filepath.Join(dir, "qrun-wrapper")
	script := "#!/bin/sh\n" + pre + "exec /opt/pbs/bin/qrun \"$@\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// jobsOn lists the jobs of ids that ran on vnode v.
func jobsOn(js map[string]job, ids []string, v string) []string {
	var out []string
	for _, id := range ids {
		if ranOn(js[id])[v] {
			out = append(out, id)
		}
	}
	return out
}
