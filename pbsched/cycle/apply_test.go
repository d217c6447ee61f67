//go:build unix

package cycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/pbsched/pbstest"
)

// TestTakeLock: a held lock refuses a second taker with ErrLocked naming
// the holder's pid, and can be taken again once released.
func TestTakeLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "pbs.lock")
	l, err := TakeLock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = TakeLock(path)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path+" is held by pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second taker: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second unlock: %v", err)
	}
	l, err = TakeLock(path)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l.Unlock()
}

// TestPlanApply: with Apply, Plan reads the state from the commands on
// PATH, reads the jobs and vnodes again before qrun, runs qrun once per
// start, and logs the cycle as "plan --apply"; while another holds the
// lock it runs nothing and logs the refusal.
func TestPlanApply(t *testing.T) {
	_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
	dir := t.TempDir()
	c := fixtureConfig()
	c.QstatFile, c.NodesFile, c.QueuesFile = "", "", ""
	c.Apply, c.LockPath, c.LogPath = true, filepath.Join(dir, "pbs.lock"), filepath.Join(dir, "audit.jsonl")

	held, err := TakeLock(c.LockPath)
	if err != nil {
		t.Fatal(err)
	}
	if p, _, err := c.Plan(context.Background()); p != nil || !errors.Is(err, ErrLocked) {
		t.Errorf("locked out: plan %v, %v", p != nil, err)
	}
	if got := pbstest.Calls(t, calls); len(got) != 0 {
		t.Errorf("a locked-out cycle called %q", got)
	}
	held.Unlock()

	p, out, err := c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The state's documents are read at once (in any order), then the
	// jobs and vnodes again, then qrun.
	want := [][]string{{"pbsnodes -av -F json", "qstat -Q -f -F json", "qstat -f -t -F json"}, {"pbsnodes -av -F json", "qstat -f -t -F json"}}
	got := pbstest.Calls(t, calls)
	for _, w := range want {
		if len(got) < len(w) {
			t.Fatalf("calls %q, want %q next", got, w)
		}
		g := slices.Sorted(slices.Values(got[:len(w)]))
		if !slices.Equal(g, w) {
			t.Errorf("calls %q, want %q (in any order)", got[:len(w)], w)
		}
		got = got[len(w):]
	}
	runs := pbstest.QrunCalls(t, calls)
	if len(runs) != 4 || len(p.Starts) != 4 || !out.Applied() {
		t.Fatalf("%d qrun calls for %d starts: %q", len(runs), len(p.Starts), runs)
	}
	for i, s := range p.Starts {
		if w := "qrun -H " + s.ExecVnode() + " -- " + s.Job; runs[i] != w || out.Starts[i].Job != s.Job || out.Starts[i].ExitCode != 0 {
			t.Errorf("start %d: call %q (want %q), outcome %+v", i, runs[i], w, out.Starts[i])
		}
	}
	e := readAudit(t, c.LogPath)
	if len(e) != 2 || !strings.Contains(e[0].Error, "another optsched pbs cycle is running") || e[0].Plan != nil ||
		e[1].Command != "plan --apply" || !e[1].Apply || e[1].Error != "" || e[1].Plan == nil || e[1].Plan.DryRun || len(e[1].Plan.Starts) != 4 {
		t.Errorf("audit %+v", e)
	}
	// The applied cycle's phases: it read, decided, read again (the
	// fixture config always re-reads) and ran qrun, each within the
	// cycle's time; the refused one has none.
	if ph := e[1].PhasesMS; ph == nil || !(ph.ReadMS > 0 && ph.DecideMS > 0 && ph.RereadMS > 0 && ph.ApplyMS > 0) ||
		ph.ReadMS+ph.DecideMS+ph.RereadMS+ph.ApplyMS > e[1].CycleMS {
		t.Errorf("phases %+v of a %v ms cycle", ph, e[1].CycleMS)
	}
	if e[0].PhasesMS != nil {
		t.Errorf("the locked-out cycle has phases %+v", e[0].PhasesMS)
	}
}

// TestClearQstatPacing: only qstat's own marker, an empty regular file,
// is removed; a file with content, a folder and a symbolic link at that
// path are left alone, and a missing one is no error.
func TestClearQstatPacing(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	full := filepath.Join(dir, "full")
	sub := filepath.Join(dir, "sub")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{empty, full, sub, link, filepath.Join(dir, "missing")} {
		clearQstatPacing(p)
	}
	if _, err := os.Lstat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the empty marker was not removed: %v", err)
	}
	for _, p := range []string{full, sub, link, other} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if got := qstatPacingFile(1234); got != "/var/tmp/.pbs_last_query_1234" {
		t.Errorf("qstatPacingFile(1234) = %q", got)
	}
}

// TestQstatPacingCleared: a cycle that reads the server removes qstat's
// pacing marker before its qstat calls, so that they are not paced, and
// leaves it with KeepQstatDelay.
func TestQstatPacingCleared(t *testing.T) {
	for _, keep := range []bool{false, true} {
		_, calls := pbstest.FakePBS(t, fixture("qstat.json"), fixture("pbsnodes.json"), fixture("queues.json"))
		marker := filepath.Join(t.TempDir(), "pbs_last_query")
		old := qstatPacingPath
		qstatPacingPath = func() string { return marker }
		t.Cleanup(func() { qstatPacingPath = old })
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		c := fixtureConfig()
		c.QstatFile, c.NodesFile, c.QueuesFile = "", "", ""
		c.KeepQstatDelay = keep
		c.LockPath, c.LogPath = filepath.Join(dir, "pbs.lock"), filepath.Join(dir, "audit.jsonl")
		if _, _, err := c.Plan(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := len(pbstest.Calls(t, calls)); n < 3 {
			t.Fatalf("keep %v: %d calls", keep, n)
		}
		_, err := os.Lstat(marker)
		if keep && err != nil {
			t.Errorf("KeepQstatDelay: the marker was removed: %v", err)
		}
		if !keep && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the marker was left before qstat: %v", err)
		}
	}
}
