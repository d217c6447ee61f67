//go:build pbsitest

package itest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Scenarios 1 and 2 on the default complex: pbshost[0]..pbshost[7]
// (ncpus=4, mem=8gb, tier0 = t0_<i/2>, tier1 = t1_<i/4>) and the natural
// vnode pbshost with ncpus=0 and no tier0/tier1.

// natural is the natural vnode of the default complex's multi-vnode mom.
const natural = "pbshost"

// defaultArgs are the scope flags of the tests on the default complex
// that are not about the natural vnode. --topology-levels flat names a
// resource no vnode has, so the topology is flat: it works around known
// bug (a) (the natural vnode pbshost has no tier0/tier1 and aborts every
// cycle with "resources_available.tier0: missing"), which
// TestDefaultNaturalVnode checks on its own. --nodes cannot be used
// instead because of known bug (b).
var defaultArgs = []string{"--exec-queues", "workq", "--topology-levels", "flat"}

// plan runs one `optsched pbs plan --apply` cycle with the default scope
// plus extra flags.
func (o *optsched) applyDefault(extra ...string) result {
	o.t.Helper()
	return o.run(append(append([]string{"pbs", "plan", "--apply"}, defaultArgs...), extra...)...)
}

// started waits (at most 10 s: qrun returns once the server has run the
// job) until each job has been given vnodes.
func started(t *testing.T, ids ...string) map[string]job {
	t.Helper()
	return waitJobs(t, 10*time.Second, "jobs should have started", ids, job.ran)
}

// notStarted checks that none of the jobs was given vnodes.
func notStarted(t *testing.T, js map[string]job, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if j := js[id]; j.ran() {
			t.Errorf("job %s should not have started: %v", id, j)
		}
	}
}

// TestDefaultNaturalVnode: scenario 1 (known bug (a)). With no flag but
// --exec-queues, a cycle must start the jobs on the child vnodes and
// leave the natural vnode pbshost (ncpus=0, no tier0/tier1) alone.
func TestDefaultNaturalVnode(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	ids := []string{
		sleepJob(t, "nat1", 3, "select=1:ncpus=1"),
		sleepJob(t, "nat4", 3, "select=1:ncpus=4"),
		sleepJob(t, "natx", 3, "select=2:ncpus=2", "place=excl"),
	}
	o := newOptsched(t)
	r := o.run("pbs", "plan", "--apply", "--exec-queues", "workq")
	if r.code != 0 {
		t.Errorf("plan --apply --exec-queues workq: exit %d, want 0 (known bug (a): the natural vnode %s without tier0/tier1 aborts the cycle)", r.code, natural)
	}
	js := jobs(t)
	for _, id := range ids {
		if !js[id].ran() {
			t.Errorf("job %s did not start: %v", id, js[id])
		} else if ranOn(js[id])[natural] {
			t.Errorf("job %s started on the natural vnode %s (ncpus=0): %v", id, natural, js[id])
		}
	}
	checkNoOvercommit(t)
}

// TestDefaultPlanApply: scenario 1. A dry run starts nothing; --apply
// starts every job that fits, each finishes with Exit_status 0, and no
// vnode is overcommitted.
func TestDefaultPlanApply(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	ids := []string{
		sleepJob(t, "pa1", 3, "select=1:ncpus=1"),
		sleepJob(t, "pa2", 3, "select=1:ncpus=2:mem=2gb"),
		sleepJob(t, "pa3", 3, "select=2:ncpus=4", "place=excl"),
		sleepJob(t, "pa4", 3, "select=3:ncpus=1"),
	}
	o := newOptsched(t)
	if r := o.run(append([]string{"pbs", "plan"}, defaultArgs...)...); r.code != 0 {
		t.Errorf("dry run: exit %d, want 0", r.code)
	}
	time.Sleep(2 * time.Second)
	notStarted(t, jobs(t), ids...)
	if r := o.applyDefault(); r.code != 0 {
		t.Errorf("plan --apply: exit %d, want 0", r.code)
	}
	js := started(t, ids...)
	checkNoOvercommit(t)
	for _, id := range ids {
		if ranOn(js[id])[natural] {
			t.Errorf("job %s started on the natural vnode: %v", id, js[id])
		}
	}
	js = waitFinished(t, 60*time.Second, ids...)
	for _, id := range ids {
		if !js[id].finishedOK() {
			t.Errorf("job %s did not end with Exit_status 0: %v", id, js[id])
		}
	}
}

// TestDefaultNodesBracketed: scenario 1 (known bug (b)). --nodes naming
// bracketed vnodes literally restricts the starts to them; so does
// --nodes-file, when this optsched has it.
func TestDefaultNodesBracketed(t *testing.T) {
	need(t, cfgDefault)
	own := []string{"pbshost[0]", "pbshost[1]"}
	check := func(t *testing.T, flags ...string) {
		reset(t)
		var ids []string
		for i := range 4 {
			ids = append(ids, sleepJob(t, fmt.Sprintf("br%d", i), 20, "select=1:ncpus=4"))
		}
		o := newOptsched(t)
		r := o.run(append([]string{"pbs", "plan", "--apply", "--exec-queues", "workq"}, flags...)...)
		if r.code == 2 && slices.Contains(flags, "--nodes-file") {
			t.Skipf("this optsched does not take --nodes-file (exit 2)")
		}
		if r.code != 0 {
			t.Errorf("plan --apply %s: exit %d, want 0 (known bug (b): --nodes reads pbshost[0] as the hostlist pbshost0)", shellQuote(flags), r.code)
		}
		js := jobs(t)
		n := 0
		for _, id := range ids {
			j := js[id]
			if !j.ran() {
				continue
			}
			n++
			for v := range ranOn(j) {
				if !slices.Contains(own, v) {
					t.Errorf("job %s started on %s, outside %v: %v", id, v, own, j)
				}
			}
		}
		if n != len(own) {
			t.Errorf("%d of the 4 one-vnode jobs started, want %d (one per vnode of %v)", n, len(own), own)
		}
		checkNoOvercommit(t)
	}
	t.Run("nodes", func(t *testing.T) { check(t, "--nodes", strings.Join(own, ",")) })
	t.Run("nodes-file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "nodes")
		if err := os.WriteFile(f, []byte(strings.Join(own, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, "--nodes-file", f)
	})
}

// TestDefaultJobShapes: scenario 2. One cycle per job shape; what must
// and must not start, and where.
func TestDefaultJobShapes(t *testing.T) {
	need(t, cfgDefault)

	// exclusive checks that job x holds its vnodes alone: fillers
	// submitted after it land elsewhere, in this cycle and the next.
	// place=excl alone lets chunks share a vnode (the arrangement is
	// free); vscatter puts each on its own (distinct).
	exclusive := func(t *testing.T, x string, chunks int, distinct bool) {
		t.Helper()
		js := started(t, x)
		mine := ranOn(js[x])
		if len(vnodesOf(js[x].ExecVnode)) != chunks || distinct && len(mine) != chunks {
			t.Errorf("job %s: want %d chunks (distinct vnodes: %v): %v", x, chunks, distinct, js[x])
		}
		o := newOptsched(t)
		for cycle := range 2 {
			var fill []string
			for i := range 6 {
				fill = append(fill, sleepJob(t, fmt.Sprintf("fill%d_%d", cycle, i), 20, "select=1:ncpus=1"))
			}
			o.applyDefault()
			js := started(t, fill...)
			for _, id := range fill {
				for v := range ranOn(js[id]) {
					if mine[v] {
						t.Errorf("job %s started on %s, which exclusive job %s holds: %v", id, v, x, js[id])
					}
				}
			}
		}
		vs := vnodes(t)
		for v := range mine {
			if got := vs[v].jobIDs(); len(got) != 1 || got[0] != x {
				t.Errorf("vnode %s runs %v, want only %s", v, got, x)
			}
		}
		checkNoOvercommit(t)
	}

	t.Run("place-excl", func(t *testing.T) {
		reset(t)
		x := sleepJob(t, "excl", 30, "select=2:ncpus=1", "place=excl")
		newOptsched(t).applyDefault()
		exclusive(t, x, 2, false)
	})
	t.Run("place-vscatter-excl", func(t *testing.T) {
		reset(t)
		x := sleepJob(t, "vscx", 30, "select=2:ncpus=2", "place=vscatter:excl")
		newOptsched(t).applyDefault()
		exclusive(t, x, 2, true)
	})
	t.Run("whole-vnode-chunks", func(t *testing.T) {
		reset(t)
		a := sleepJob(t, "whole3", 3, "select=3:ncpus=4:mem=8gb")
		b := sleepJob(t, "whole1", 3, "select=1:ncpus=4")
		if r := newOptsched(t).applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		js := started(t, a, b)
		if len(ranOn(js[a])) != 3 {
			t.Errorf("job %s: want 3 distinct vnodes: %v", a, js[a])
		}
		checkNoOvercommit(t)
		waitFinished(t, 60*time.Second, a, b)
	})
	t.Run("partial-node", func(t *testing.T) {
		reset(t)
		var ids []string
		for i := range 10 {
			ids = append(ids, sleepJob(t, fmt.Sprintf("p%d", i), 3, "select=1:ncpus=1"))
		}
		ids = append(ids, sleepJob(t, "pm1", 3, "select=1:ncpus=2:mem=6gb"), sleepJob(t, "pm2", 3, "select=1:ncpus=2:mem=6gb"),
			sleepJob(t, "pfree", 3, "select=3:ncpus=1", "place=free"))
		if r := newOptsched(t).applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		started(t, ids...)
		checkNoOvercommit(t)
		js := waitFinished(t, 60*time.Second, ids...)
		for _, id := range ids {
			if !js[id].finishedOK() {
				t.Errorf("%v: want Exit_status 0", js[id])
			}
		}
	})
	t.Run("custom-resources", func(t *testing.T) {
		reset(t)
		want := map[string][2]string{ // job -> resource, value
			sleepJob(t, "t0", 10, "select=1:ncpus=1:tier0=t0_1"):          {"tier0", "t0_1"},
			sleepJob(t, "t1", 10, "select=2:ncpus=2:tier1=t1_1"):          {"tier1", "t1_1"},
			sleepJob(t, "t0x", 10, "select=1:ncpus=4:tier0=t0_3"):         {"tier0", "t0_3"},
			sleepJob(t, "t0m", 10, "select=1:ncpus=1:mem=1gb:tier0=t0_2"): {"tier0", "t0_2"},
		}
		ids := slices.Collect(maps.Keys(want))
		if r := newOptsched(t).applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		js := started(t, ids...)
		vs := vnodes(t)
		for id, rv := range want {
			for v := range ranOn(js[id]) {
				if got := vs[v].text(rv[0]); got != rv[1] {
					t.Errorf("job %s asks %s=%s but runs on %s with %s=%q", id, rv[0], rv[1], v, rv[0], got)
				}
			}
		}
		checkNoOvercommit(t)
	})
	t.Run("held", func(t *testing.T) {
		reset(t)
		h := qsub(t, "-h", "-N", "held", "-l", "select=1:ncpus=1", "--", "/bin/sleep", "3")
		ok := sleepJob(t, "nothold", 3, "select=1:ncpus=1")
		o := newOptsched(t)
		if r := o.applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		started(t, ok)
		time.Sleep(time.Second)
		if j := getJob(t, h); j.ran() || j.State != "H" {
			t.Errorf("held job: want state H, never run: %v", j)
		}
		pbsRun(t, "qrls", h)
		o.applyDefault()
		started(t, h)
		waitFinished(t, 60*time.Second, h, ok)
	})
	t.Run("array", func(t *testing.T) {
		// README: an array is skipped (qrun cannot start it as a whole);
		// it must not stop the other jobs.
		reset(t)
		arr := qsub(t, "-J", "1-4", "-N", "arr", "-l", "select=1:ncpus=1", "--", "/bin/sleep", "3")
		ok := sleepJob(t, "notarr", 3, "select=1:ncpus=1")
		if r := newOptsched(t).applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		started(t, ok)
		time.Sleep(time.Second)
		prefix, _, _ := strings.Cut(arr, "[")
		for id, j := range jobs(t) {
			if strings.HasPrefix(id, prefix+"[") && j.ran() {
				t.Errorf("array %s: %s started, but optsched skips arrays: %v", arr, id, j)
			}
		}
		checkNoOvercommit(t)
	})
	t.Run("never-fits", func(t *testing.T) {
		reset(t)
		big := sleepJob(t, "bigmem", 3, "select=1:ncpus=1:mem=16gb")
		wide := sleepJob(t, "wide", 3, "select=9:ncpus=4", "place=excl")
		ok := sleepJob(t, "fits", 3, "select=1:ncpus=1")
		if r := newOptsched(t).applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		started(t, ok)
		time.Sleep(time.Second)
		notStarted(t, jobs(t), big, wide)
	})
	t.Run("vmem", func(t *testing.T) {
		// known bug (c): no vnode lists vmem, so it is not a vnode matter
		// (README) and the job must start.
		reset(t)
		v := sleepJob(t, "vmem", 3, "select=1:ncpus=1:vmem=1gb")
		o := newOptsched(t)
		for range 2 {
			if r := o.applyDefault(); r.code != 0 {
				t.Errorf("exit %d, want 0", r.code)
			}
		}
		if j := getJob(t, v); !j.ran() {
			t.Errorf("job asking for vmem (which no vnode lists) did not start after two cycles (known bug (c)): %v", j)
		}
	})
}

// TestDefaultApplyOutput: known bug (d). What plan --apply prints must not
// be a script that runs qrun again: an operator who pipes it to sh would
// start the jobs a second time. The output is run by sh with a qrun on
// PATH that only records its calls.
func TestDefaultApplyOutput(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	id := sleepJob(t, "out", 3, "select=1:ncpus=1")
	o := newOptsched(t)
	r := o.applyDefault()
	if r.code != 0 {
		t.Fatalf("exit %d, want 0", r.code)
	}
	started(t, id)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	if err := os.WriteFile(filepath.Join(dir, "qrun"), []byte("#!/bin/sh\necho \"$*\" >>"+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "stdout.sh")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := runCmdEnv(30*time.Second, []string{"PATH=" + dir + ":" + os.Getenv("PATH")}, "sh", script)
	t.Logf("sh (stdout of plan --apply): %v", sh)
	if data, err := os.ReadFile(calls); err == nil {
		t.Errorf("the stdout of plan --apply, run by sh, runs qrun again (known bug (d)):\n%s", indent(string(data)))
	}
}
