//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/optsched/optsched/pbsched/pbstest"
)

// TestMain lets a test run the command in a process of its own (for
// signals): with OPTSCHED_TEST_ARGS set, the test binary is optsched.
func TestMain(m *testing.M) {
	if args := os.Getenv("OPTSCHED_TEST_ARGS"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startOptsched runs optsched with args in a process of its own; its
// stdout and stderr go to the returned buffer, which may be read while
// it runs.
func startOptsched(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "OPTSCHED_TEST_ARGS="+strings.Join(args, "\x1f"))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// syncBuffer is a bytes.Buffer that one goroutine may write while
// another reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds (generously: the machine may be busy).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// TestPBSSigtermFinishesTheApply: SIGTERM while a cycle's qrun commands
// run lets every one of them run to its end, logs the cycle, starts no
// other cycle and exits 0; a second signal aborts: the qrun in flight is
// killed and the others do not run, and the log says so. The fake qrun
// waits for a file that the test creates only once the signals are
// handled, so that every signal lands while the first qrun is in flight
// and the second is never merged with the first, however slow the
// machine.
func TestPBSSigtermFinishesTheApply(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	for _, signals := range []int{1, 2} {
		dir := t.TempDir()
		log, gate := filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "qrun-may-end")
		t.Setenv("QRUN_WAIT", gate)
		os.Remove(calls)
		cmd, out := startOptsched(t, "pbs", "run", "--apply", "--interval", "1s", "--cycles", "3", "--timezone", "UTC",
			"--lock", filepath.Join(dir, "l"), "--log", log)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			// End optsched if it still runs, then a fake qrun it left
			// waiting (in a process group of its own).
			cmd.Process.Kill()
			os.WriteFile(gate, nil, 0o644)
		})
		waitFor(t, "the first qrun", func() bool { return len(pbstest.QrunCalls(t, calls)) > 0 })
		cmd.Process.Signal(syscall.SIGTERM)
		waitFor(t, "the first signal's notice", func() bool { return strings.Contains(out.String(), "finishing the cycle in flight") })
		if signals == 2 {
			cmd.Process.Signal(syscall.SIGTERM)
		} else if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-exited:
		case <-time.After(60 * time.Second):
			t.Fatalf("%d signals: optsched did not end within 60 s\n%s", signals, out)
		}
		runs, done := pbstest.QrunCalls(t, calls), 0
		for _, c := range pbstest.Calls(t, calls) {
			if strings.HasPrefix(c, "qrun-done") {
				done++
			}
		}
		entries := readAudit(t, log)
		if len(entries) != 1 || entries[0].Plan == nil {
			t.Fatalf("%d signals: audit %+v\n%s", signals, entries, out)
		}
		applied := 0
		for _, s := range entries[0].Plan.Starts {
			if s.ExitCode != nil {
				applied++
			}
		}
		if signals == 1 {
			if err != nil || len(runs) != 4 || done != 4 || applied != 4 || entries[0].Error != "" {
				t.Errorf("one SIGTERM: exit %v, %d qruns, %d finished, %d applied, error %q\n%s", err, len(runs), done, applied, entries[0].Error, out)
			}
			continue
		}
		if len(runs) != 1 || done != 0 || !strings.Contains(entries[0].Error, "not run") {
			t.Errorf("two SIGTERMs: %d qruns, %d finished, error %q\n%s", len(runs), done, entries[0].Error, out)
		}
	}
}

// TestPBSAppliedOutputIsNotAScript: what `plan --apply` prints records
// the commands that ran, but piped to sh by habit it runs nothing, while
// the dry run's script does run them.
func TestPBSAppliedOutputIsNotAScript(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	dir := t.TempDir()
	for _, apply := range []bool{true, false} {
		args := []string{"pbs", "plan", "--timezone", "UTC", "--lock", filepath.Join(dir, "l"), "--log", filepath.Join(dir, "a.jsonl")}
		if apply {
			args = append(args, "--apply")
		}
		code, out, errs := optsched(t, "", args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		before := len(pbstest.QrunCalls(t, calls))
		sh := exec.Command("sh")
		sh.Stdin = strings.NewReader(out)
		if msg, err := sh.CombinedOutput(); err != nil {
			t.Errorf("apply %v: sh: %v %s", apply, err, msg)
		}
		ran := len(pbstest.QrunCalls(t, calls)) - before
		switch {
		case apply && (ran != 0 || !strings.Contains(out, "ran: qrun -H")):
			t.Errorf("the --apply output piped to sh ran %d qrun commands:\n%s", ran, out)
		case !apply && ran != 4:
			t.Errorf("the dry run's script ran %d qrun commands, want 4", ran)
		}
	}
}
