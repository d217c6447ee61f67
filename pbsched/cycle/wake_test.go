//go:build unix

package cycle

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/optsched/optsched/pbsched"
)

// TestLoopWakes: with an interval of an hour, SIGUSR1 starts the next
// cycle; the pid file names this process while the loop runs and is gone
// after it.
func TestLoopWakes(t *testing.T) {
	dir := t.TempDir()
	c := fixtureConfig()
	c.LockPath, c.LogPath = filepath.Join(dir, "l"), filepath.Join(dir, "a.jsonl")
	c.PIDFile = filepath.Join(dir, "run", "optsched.pid")
	c.Interval, c.Cycles, c.WakeDelay = time.Hour, 3, time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n := 0
	err := c.Loop(ctx, func(k int, p *pbsched.Plan, _ *pbsched.Outcome, err error) error {
		n = k
		if err != nil {
			t.Errorf("cycle %d: %v", k, err)
		}
		data, rerr := os.ReadFile(c.PIDFile)
		if rerr != nil || strings.TrimSpace(string(data)) != strconv.Itoa(os.Getpid()) {
			t.Errorf("cycle %d: pid file %q, %v", k, data, rerr)
		}
		// Two signals during a cycle make one more cycle, not two.
		syscall.Kill(os.Getpid(), syscall.SIGUSR1)
		syscall.Kill(os.Getpid(), syscall.SIGUSR1)
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("loop: %v after %d cycles", err, n)
	}
	if ctx.Err() != nil {
		t.Fatalf("the signals did not wake the loop (an hour's interval): %v", ctx.Err())
	}
	if _, err := os.Stat(c.PIDFile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
}

// TestLoopWakeCoalesces: a burst of signals during one cycle gives one
// cycle after it; the loop then waits for its interval.
func TestLoopWakeCoalesces(t *testing.T) {
	dir := t.TempDir()
	c := fixtureConfig()
	c.LockPath, c.LogPath = filepath.Join(dir, "l"), filepath.Join(dir, "a.jsonl")
	c.Interval, c.WakeDelay = time.Hour, 500*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := c.Loop(ctx, func(k int, p *pbsched.Plan, _ *pbsched.Outcome, err error) error {
		n = k
		switch k {
		case 1:
			for range 5 {
				syscall.Kill(os.Getpid(), syscall.SIGUSR1)
			}
		case 2:
			// No signal now: the next cycle is an hour away, so the
			// loop must still be waiting when the context ends.
			go func() { time.Sleep(300 * time.Millisecond); cancel() }()
		default:
			t.Errorf("cycle %d: a burst of signals made more than one cycle", k)
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("loop: %v after %d cycles", err, n)
	}
}

// TestWakeHook: the hook names the pid file, wakes with SIGUSR1, checks
// the process is optsched's, and always accepts; odd paths are refused.
func TestWakeHook(t *testing.T) {
	h, err := WakeHook("/var/run/optsched/pbs.pid")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`PID_FILE = "/var/run/optsched/pbs.pid"`, "signal.SIGUSR1", "/proc/%d/cmdline", "pbs.event().accept()", "postqueuejob,jobobit"} {
		if !strings.Contains(h, want) {
			t.Errorf("hook lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, wakeHookPIDFile) {
		t.Errorf("placeholder left in the hook's code:\n%s", h)
	}
	for _, bad := range []string{"optsched.pid", `/tmp/a"b`, "/tmp/a\nb", `/tmp/a\b`} {
		if _, err := WakeHook(bad); err == nil {
			t.Errorf("WakeHook(%q) accepted", bad)
		}
	}
}
