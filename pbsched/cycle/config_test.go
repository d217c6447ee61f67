package cycle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/pbsched"
)

// readAudit reads the audit log at path.
func readAudit(t *testing.T, path string) []AuditEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []AuditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPaths: the lock and the log default to $XDG_STATE_HOME/optsched,
// the log beside the lock; given paths are kept.
func TestPaths(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	for _, tc := range []struct {
		lock, log, wantLock, wantLog string
	}{
		{"", "", filepath.Join(state, "optsched", "pbs.lock"), filepath.Join(state, "optsched", "pbs-audit.jsonl")},
		{"/run/o/l", "", "/run/o/l", "/run/o/pbs-audit.jsonl"},
		{"", "/var/log/a.jsonl", filepath.Join(state, "optsched", "pbs.lock"), "/var/log/a.jsonl"},
		{"/run/o/l", "/var/log/a.jsonl", "/run/o/l", "/var/log/a.jsonl"},
	} {
		c := &Config{LockPath: tc.lock, LogPath: tc.log}
		lock, log, err := c.paths()
		if err != nil || lock != tc.wantLock || log != tc.wantLog {
			t.Errorf("lock %q, log %q: got %q, %q, %v; want %q, %q", tc.lock, tc.log, lock, log, err, tc.wantLock, tc.wantLog)
		}
	}
}

// TestQrunName: scripts name qrun as given, or plain qrun.
func TestQrunName(t *testing.T) {
	if n := (&Config{}).QrunName(); n != "qrun" {
		t.Errorf("default %q", n)
	}
	if n := (&Config{Qrun: "/opt/pbs/bin/qrun"}).QrunName(); n != "/opt/pbs/bin/qrun" {
		t.Errorf("given %q", n)
	}
}

// TestLimitedWriter keeps what fits and fails on the write past the
// limit.
func TestLimitedWriter(t *testing.T) {
	var b bytes.Buffer
	w := &limitedWriter{w: &b, n: 5}
	if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("first write: %d, %v", n, err)
	}
	if n, err := w.Write([]byte("def")); n != 0 || err == nil {
		t.Errorf("write past the limit: %d, %v", n, err)
	}
	if n, err := w.Write([]byte("de")); n != 2 || err != nil || b.String() != "abcde" {
		t.Errorf("write up to the limit: %d, %v, %q", n, err, b.String())
	}
}

// TestStdin: a "-" document is read from Stdin, and is an error without
// one.
func TestStdin(t *testing.T) {
	data, err := os.ReadFile(fixture("qstat.json"))
	if err != nil {
		t.Fatal(err)
	}
	c := fixtureConfig()
	c.QstatFile, c.Stdin = "-", bytes.NewReader(data)
	p, _, err := c.Plan(context.Background())
	if err != nil || len(p.Starts) != 4 {
		t.Fatalf("%v, plan %+v", err, p)
	}
	c = fixtureConfig()
	c.NodesFile, c.Stdin = "-", nil
	if _, _, err := c.Plan(context.Background()); err == nil || err.Error() != "--pbsnodes -: no standard input" {
		t.Errorf("no Stdin: %v", err)
	}
}

// TestConfigErrors: the errors that lie in the Config are ConfigErrors,
// and the others are not.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
		config bool
	}{
		{"timezone", func(c *Config) { c.Timezone = "Mars/Olympus_Mons" }, "--timezone: ", true},
		{"no queue list", func(c *Config) { c.QueuesFile = "" }, "reading the state from files needs the queue list too", true},
		{"nodes", func(c *Config) { c.Nodes = "n[1-" }, "--nodes: hostlist", true},
		{"missing file", func(c *Config) { c.NodesFile = filepath.Join(t.TempDir(), "none.json") }, "--pbsnodes: open ", false},
		{"topology.conf", func(c *Config) { c.TopologyConf = filepath.Join(t.TempDir(), "none.conf") }, "--topology-conf: ", false},
	} {
		c := fixtureConfig()
		tc.change(c)
		p, _, err := c.Plan(context.Background())
		var ce ConfigError
		if p != nil || err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ce) != tc.config {
			t.Errorf("%s: plan %v, error %v (a ConfigError: %v), want %q (a ConfigError: %v)", tc.name, p != nil, err, errors.As(err, &ce), tc.want, tc.config)
		}
	}
}

// TestPlanDryRunLog: a dry run takes no lock and is logged only to a
// given log, as command "plan".
func TestPlanDryRunLog(t *testing.T) {
	dir := t.TempDir()
	c := fixtureConfig()
	c.LockPath = filepath.Join(dir, "pbs.lock")
	if _, _, err := c.Plan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pbs-audit.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run without a log wrote one beside the lock: %v", err)
	}
	c.LogPath = filepath.Join(dir, "logs", "audit.jsonl")
	p, _, err := c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.LockPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run took the lock: %v", err)
	}
	e := readAudit(t, c.LogPath)
	if len(e) != 1 || e[0].Command != "plan" || e[0].Apply || e[0].Error != "" || e[0].Plan == nil || !e[0].Plan.DryRun ||
		len(e[0].Plan.Starts) != len(p.Starts) || len(e[0].InputSHA256) != 64 {
		t.Errorf("audit %+v", e)
	}
}

// TestLoop runs three dry-run cycles from files: each is reported in
// turn, under the lock (taken and released) and logged as "run".
func TestLoop(t *testing.T) {
	dir := t.TempDir()
	c := fixtureConfig()
	c.LockPath, c.LogPath = filepath.Join(dir, "l"), filepath.Join(dir, "a.jsonl")
	c.Interval, c.Cycles = time.Millisecond, 3
	var seen []int
	err := c.Loop(context.Background(), func(n int, p *pbsched.Plan, _ *pbsched.Outcome, err error) error {
		seen = append(seen, n)
		if err != nil || p == nil || len(p.Starts) != 4 {
			t.Errorf("cycle %d: %v, plan %+v", n, err, p)
		}
		return nil
	})
	if err != nil || len(seen) != 3 || seen[0] != 1 || seen[2] != 3 {
		t.Fatalf("loop: %v, cycles %v", err, seen)
	}
	e := readAudit(t, c.LogPath)
	if len(e) != 3 || e[2].Command != "run" || e[2].Apply || e[2].Plan == nil || !(e[2].CycleMS > 0) {
		t.Errorf("audit %+v", e)
	}
	l, err := TakeLock(c.LockPath)
	if err != nil {
		t.Fatalf("the loop kept the lock: %v", err)
	}
	l.Unlock()
}

// TestLoopStops: the loop ends when its context ends (nil), when report
// fails (that error), and a cycle's error goes to report without ending
// it; repeating cycles needs an interval.
func TestLoopStops(t *testing.T) {
	dir := t.TempDir()
	c := fixtureConfig()
	c.LockPath, c.LogPath = filepath.Join(dir, "l"), filepath.Join(dir, "a.jsonl")
	c.Interval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	if err := c.Loop(ctx, func(int, *pbsched.Plan, *pbsched.Outcome, error) error { n++; cancel(); return nil }); err != nil || n != 1 {
		t.Errorf("cancelled after the first cycle: %v, %d cycles", err, n)
	}
	stop := errors.New("stop")
	c.Interval, c.Cycles, n = time.Millisecond, 5, 0
	c.QstatFile = filepath.Join(dir, "none.json")
	err := c.Loop(context.Background(), func(_ int, p *pbsched.Plan, _ *pbsched.Outcome, err error) error {
		n++
		if p != nil || err == nil || !strings.Contains(err.Error(), "--qstat: open ") {
			t.Errorf("cycle %d: %v, plan %v", n, err, p != nil)
		}
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("report failing in cycle 2: %v after %d cycles", err, n)
	}
	c.Interval, c.Cycles = 0, 0
	var ce ConfigError
	if err := c.Loop(context.Background(), func(int, *pbsched.Plan, *pbsched.Outcome, error) error { return nil }); !errors.As(err, &ce) {
		t.Errorf("no interval: %v", err)
	}
}
