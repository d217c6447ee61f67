//go:build unix

package cycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/runloop"
	"github.com/optsched/optsched/slurmsched"
)

// fakeSlurm writes squeue, sinfo and scontrol scripts that answer from
// the fixtures of slurmsched/testdata; scontrol update records the
// placement for show job to read back, and every update and release is
// appended to log.
func fakeSlurm(t *testing.T) (c *Config, log string) {
	t.Helper()
	dir := t.TempDir()
	data, err := filepath.Abs("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "commands.log")
	scripts := map[string]string{
		"squeue": fmt.Sprintf("#!/bin/sh\ncat %s/squeue.json\n", data),
		"sinfo":  fmt.Sprintf("#!/bin/sh\ncat %s/sinfo.json\n", data),
		"scontrol": fmt.Sprintf(`#!/bin/sh
d=%s
case "$1" in
show) if [ "$2" = topology ]; then cat %s/scontrol-show-topology.txt; else cat "$d/job-$4"; fi ;;
update) j=${2#JobId=}; echo "JobId=$j JobState=PENDING $3 $4" > "$d/job-$j"; echo "$*" >> %s ;;
release) echo "release $2" >> %s ;;
*) exit 1 ;;
esac
`, dir, data, log, log),
	}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &Config{
		Squeue: filepath.Join(dir, "squeue"), Sinfo: filepath.Join(dir, "sinfo"), Scontrol: filepath.Join(dir, "scontrol"),
		LockPath: filepath.Join(dir, "state", "slurm.lock"), LogPath: filepath.Join(dir, "state", "audit.jsonl"),
	}, log
}

func readAudit(t *testing.T, path string) []AuditEntry {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []AuditEntry
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e AuditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

// TestPlanDryRun: a dry run changes nothing and takes no lock.
func TestPlanDryRun(t *testing.T) {
	c, log := fakeSlurm(t)
	c.LogPath = ""
	p, o, err := c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Starts) == 0 {
		t.Fatalf("no starts: %+v", p.Deferred)
	}
	if o != nil {
		t.Errorf("dry run: outcome %+v", o)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("dry run ran scontrol update or release: %v", err)
	}
	if _, err := os.Stat(c.LockPath); !os.IsNotExist(err) {
		t.Errorf("dry run took the lock: %v", err)
	}
}

// TestPlanApply: --apply places every start, releases them in one call
// and logs the cycle with each start's status.
func TestPlanApply(t *testing.T) {
	c, log := fakeSlurm(t)
	c.Apply = true
	p, o, err := c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o == nil || len(o.Starts) != len(p.Starts) || o.Released() != len(p.Starts) {
		t.Errorf("outcome %+v for %d starts", o, len(p.Starts))
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != len(p.Starts)+1 || !strings.HasPrefix(lines[len(lines)-1], "release ") {
		t.Fatalf("commands:\n%s\nfor %d starts", data, len(p.Starts))
	}
	var ids []string
	for i, s := range p.Starts {
		ids = append(ids, s.Job)
		want := fmt.Sprintf("update JobId=%s ReqNodeList=%s NumNodes=%d-%d AdminComment=%s", s.Job, s.NodeList, len(s.Nodes), len(s.Nodes), slurmsched.PlacedMark)
		if lines[i] != want {
			t.Errorf("command %d: %q, want %q", i, lines[i], want)
		}
	}
	if got := lines[len(lines)-1]; got != "release "+strings.Join(ids, ",") {
		t.Errorf("release: %q, want the %d jobs", got, len(ids))
	}
	e := readAudit(t, c.LogPath)
	if len(e) != 1 || e[0].Command != "plan --apply" || !e[0].Apply || e[0].Error != "" || e[0].InputSHA256 == "" || e[0].Plan == nil || len(e[0].Plan.Starts) != len(p.Starts) {
		t.Fatalf("audit: %+v", e)
	}
	for _, s := range e[0].Plan.Starts {
		if s.Status != "released" {
			t.Errorf("audit: job %s %q", s.Job, s.Status)
		}
	}
}

// TestLocked: a held lock stops a cycle that acts, and the refusal is
// logged.
func TestLocked(t *testing.T) {
	c, log := fakeSlurm(t)
	c.Apply = true
	l, err := runloop.TakeLock(c.LockPath, ErrLocked)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if p, _, err := c.Plan(context.Background()); p != nil || !errors.Is(err, ErrLocked) {
		t.Fatalf("plan under a held lock: %v, %v", p, err)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("scontrol ran under a held lock")
	}
	if e := readAudit(t, c.LogPath); len(e) != 1 || !strings.Contains(e[0].Error, "another optsched slurm cycle") {
		t.Errorf("audit: %+v", e)
	}
}

// TestLoopCycles: Loop runs its cycles, each logged.
func TestLoopCycles(t *testing.T) {
	c, _ := fakeSlurm(t)
	c.Cycles, c.Interval = 3, 1
	n := 0
	err := c.Loop(context.Background(), func(k int, p *slurmsched.Plan, _ *slurmsched.Outcome, err error) error {
		n = k
		if err != nil || p == nil {
			t.Errorf("cycle %d: %v", k, err)
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("loop: %v after %d cycles", err, n)
	}
	if e := readAudit(t, c.LogPath); len(e) != 3 || e[2].Command != "run" {
		t.Errorf("audit: %d entries", len(e))
	}
	c.Interval, c.Cycles = 0, 2
	var ce ConfigError
	if err := c.Loop(context.Background(), nil); !errors.As(err, &ce) {
		t.Errorf("zero interval: %v", err)
	}
}

// TestReadsAtOnce: squeue and sinfo run at once (the fake squeue answers
// only once sinfo has started, so reads one after the other fail), the
// topology is read once a cycle (not again before acting), and the audit
// log splits the cycle's time into its phases.
func TestReadsAtOnce(t *testing.T) {
	c, _ := fakeSlurm(t)
	c.Apply = true
	dir := filepath.Dir(c.Squeue)
	data, err := filepath.Abs("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	marker, topoLog := filepath.Join(dir, "sinfo-started"), filepath.Join(dir, "topology.log")
	scripts := map[string]string{
		// squeue waits (20 s at most) for sinfo to have started, then
		// removes the marker for the next read.
		"squeue": fmt.Sprintf("#!/bin/sh\ni=0\nwhile [ ! -e %[1]s ]; do i=$((i+1)); [ $i -gt 400 ] && { echo 'sinfo did not run meanwhile' >&2; exit 1; }; sleep 0.05; done\nrm -f %[1]s\ncat %[2]s/squeue.json\n", marker, data),
		"sinfo":  fmt.Sprintf("#!/bin/sh\ntouch %s\ncat %s/sinfo.json\n", marker, data),
	}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scontrol, err := os.ReadFile(c.Scontrol)
	if err != nil {
		t.Fatal(err)
	}
	counted := strings.Replace(string(scontrol), "show) if [ \"$2\" = topology ]; then ", "show) if [ \"$2\" = topology ]; then echo x >> "+topoLog+"; ", 1)
	if counted == string(scontrol) {
		t.Fatal("the fake scontrol changed: cannot count its topology reads")
	}
	if err := os.WriteFile(c.Scontrol, []byte(counted), 0o755); err != nil {
		t.Fatal(err)
	}
	p, o, err := c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Starts) == 0 || o == nil || o.Released() != len(p.Starts) {
		t.Fatalf("starts %d, outcome %+v", len(p.Starts), o)
	}
	if got, err := os.ReadFile(topoLog); err != nil || strings.Count(string(got), "x") != 1 {
		t.Errorf("scontrol show topology ran %q times (%v), want once a cycle", got, err)
	}
	e := readAudit(t, c.LogPath)
	if len(e) != 1 || e[0].PhasesMS == nil {
		t.Fatalf("audit: %+v", e)
	}
	if ph := e[0].PhasesMS; !(ph.ReadMS > 0 && ph.DecideMS > 0 && ph.RereadMS > 0 && ph.ApplyMS > 0) || ph.ReadMS+ph.DecideMS+ph.RereadMS+ph.ApplyMS > e[0].CycleMS {
		t.Errorf("phases %+v of a cycle of %v ms", *ph, e[0].CycleMS)
	}
}
