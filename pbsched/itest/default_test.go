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

// defaultArgs are the scope flags of the tests on the default complex:
// workq only. Everything else is optsched's default: every vnode (the
// natural vnode pbshost, which has no CPUs, is ignored with a note) and
// the tier0/tier1 topology, so whole-node jobs go through the window
// solve.
var defaultArgs = []string{"--exec-queues", "workq"}

// applyDefault runs one `optsched pbs plan --apply` cycle with the default scope
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

// TestDefaultNaturalVnode: scenario 1. With no flag but --exec-queues,
// a cycle starts the jobs on the child vnodes and leaves the natural
// vnode pbshost (ncpus=0, no tier0/tier1) alone: the audit log counts
// the 8 children as optsched's vnodes and pbshost as ignored.
func TestDefaultNaturalVnode(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	ids := []string{
		sleepJob(t, "nat1", 3, "select=1:ncpus=1"),
		sleepJob(t, "nat4", 3, "select=1:ncpus=4"),
		sleepJob(t, "natx", 3, "select=2:ncpus=2", "place=excl"),
	}
	o := newOptsched(t)
	if r := o.run("pbs", "plan", "--apply", "--exec-queues", "workq"); r.code != 0 {
		t.Errorf("plan --apply --exec-queues workq: exit %d, want 0", r.code)
	}
	js := started(t, ids...)
	for _, id := range ids {
		if ranOn(js[id])[natural] {
			t.Errorf("job %s started on the natural vnode %s (ncpus=0): %v", id, natural, js[id])
		}
	}
	checkNoOvercommit(t)
	if e := o.audit(); len(e) != 1 || e[0].Plan == nil {
		t.Errorf("audit log: %d lines, want 1 with a plan", len(e))
	} else if n := e[0].Plan.Nodes; n.Owned != 8 || n.Ignored != 1 {
		t.Errorf("audit log: %d vnodes owned, %d ignored; want the 8 children owned and the natural vnode %s ignored", n.Owned, n.Ignored, natural)
	}
	js = waitFinished(t, 60*time.Second, ids...)
	for _, id := range ids {
		if !js[id].finishedOK() {
			t.Errorf("job %s did not end with Exit_status 0: %v", id, js[id])
		}
	}
}

// TestDefaultPlanApply: scenario 1. A dry run starts nothing; --apply
// starts every job that fits, each finishes with Exit_status 0, and no
// vnode is overcommitted. The exclusive two-vnode job is a whole-node
// job: the audit log has it placed by the window solve (path
// whole-node), on the tier topology.
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
	if len(ranOn(js[ids[2]])) != 2 {
		t.Errorf("job %s (select=2:ncpus=4, place=excl): want 2 distinct vnodes: %v", ids[2], js[ids[2]])
	}
	// The dry run given --log is logged too: two lines.
	if e := o.audit(); len(e) != 2 || !e[1].Apply || e[1].Plan == nil {
		t.Errorf("audit log: %d lines, want 2 (the dry run, then --apply with a plan)", len(e))
	} else {
		path := ""
		for _, s := range e[1].Plan.Starts {
			if s.Job == ids[2] {
				path = s.Path
			}
		}
		if path != "whole-node" {
			t.Errorf("audit log: job %s (select=2:ncpus=4, place=excl) has path %q, want whole-node (the window solve)", ids[2], path)
		}
	}
	js = waitFinished(t, 60*time.Second, ids...)
	for _, id := range ids {
		if !js[id].finishedOK() {
			t.Errorf("job %s did not end with Exit_status 0: %v", id, js[id])
		}
	}
}

// TestDefaultNodesBracketed: scenario 1. --nodes takes bracketed vnode
// names literally ('pbshost[0],pbshost[1]'), and a range that names no
// vnode as a hostlist keeps its brackets ('pbshost[0-3]' is pbshost[0]..
// pbshost[3]): the starts stay on those vnodes, one one-vnode job each.
func TestDefaultNodesBracketed(t *testing.T) {
	need(t, cfgDefault)
	check := func(t *testing.T, nodes string, own []string) {
		reset(t)
		var ids []string
		for i := range len(own) + 2 {
			ids = append(ids, sleepJob(t, fmt.Sprintf("br%d", i), 20, "select=1:ncpus=4"))
		}
		o := newOptsched(t)
		if r := o.run("pbs", "plan", "--apply", "--exec-queues", "workq", "--nodes", nodes); r.code != 0 {
			t.Errorf("plan --apply --nodes %s: exit %d, want 0", shellQuote([]string{nodes}), r.code)
		}
		time.Sleep(time.Second)
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
			t.Errorf("%d of the %d one-vnode jobs started, want %d (one per vnode of %v)", n, len(ids), len(own), own)
		}
		checkNoOvercommit(t)
		if e := o.audit(); len(e) == 1 && e[0].Plan != nil && e[0].Plan.Nodes.Owned != len(own) {
			t.Errorf("audit log: %d vnodes owned, want %d (%v)", e[0].Plan.Nodes.Owned, len(own), own)
		}
	}
	t.Run("nodes", func(t *testing.T) {
		check(t, "pbshost[0],pbshost[1]", []string{"pbshost[0]", "pbshost[1]"})
	})
	t.Run("nodes-range", func(t *testing.T) {
		check(t, "pbshost[0-3]", []string{"pbshost[0]", "pbshost[1]", "pbshost[2]", "pbshost[3]"})
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
		// README: an array's queued subjobs (qstat -t: 7[2].pbshost) are
		// candidates, each started with a qrun of its own; the array
		// (7[].pbshost) is not. All 4 subjobs and the other job fit.
		reset(t)
		arr := qsub(t, "-J", "1-4", "-N", "arr", "-l", "select=1:ncpus=1", "--", "/bin/sleep", "3")
		ok := sleepJob(t, "notarr", 3, "select=1:ncpus=1")
		prefix, _, _ := strings.Cut(arr, "[")
		_, suffix, _ := strings.Cut(arr, "]")
		var subs []string
		for i := 1; i <= 4; i++ {
			subs = append(subs, fmt.Sprintf("%s[%d]%s", prefix, i, suffix))
		}
		o := newOptsched(t)
		if r := o.applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		js := started(t, append([]string{ok}, subs...)...)
		if j := js[arr]; j.ran() {
			t.Errorf("the array %s itself was given vnodes: %v", arr, j)
		}
		checkNoOvercommit(t)
		if e := o.audit(); len(e) != 1 || e[0].Plan == nil {
			t.Errorf("audit log: %d lines, want 1 with a plan", len(e))
		} else {
			for _, s := range e[0].Plan.Starts {
				if s.Job == arr {
					t.Errorf("audit log: optsched ran qrun for the array %s itself", arr)
				}
			}
			if !listed(e[0].Plan.Skipped, arr) {
				t.Errorf("audit log: the array %s is not listed as skipped", arr)
			}
		}
		js = waitFinished(t, 60*time.Second, append([]string{ok}, subs...)...)
		for _, id := range append([]string{ok}, subs...) {
			if !js[id].finishedOK() {
				t.Errorf("%v: want Exit_status 0", js[id])
			}
		}
		waitJobs(t, 60*time.Second, "the array should be finished once its subjobs are", []string{arr}, func(j job) bool { return j.State == "F" })
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
		// No vnode lists vmem, so it is not a vnode matter (README): it is
		// not checked and the job starts.
		reset(t)
		v := sleepJob(t, "vmem", 3, "select=1:ncpus=1:vmem=1gb")
		if r := newOptsched(t).applyDefault(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		started(t, v)
		if j := waitFinished(t, 60*time.Second, v)[v]; !j.finishedOK() {
			t.Errorf("%v: want Exit_status 0", j)
		}
	})
}

// TestDefaultApplyOutput: scenario 1. What plan --apply prints is a
// record of what it did, every line a comment: an operator who pipes it
// to sh runs nothing (no job is started twice). The output is run by sh
// with a qrun on PATH that only records its calls.
func TestDefaultApplyOutput(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	ids := []string{sleepJob(t, "out0", 3, "select=1:ncpus=1"), sleepJob(t, "out1", 3, "select=2:ncpus=4", "place=excl")}
	o := newOptsched(t)
	r := o.applyDefault()
	if r.code != 0 {
		t.Fatalf("exit %d, want 0", r.code)
	}
	started(t, ids...)
	if strings.TrimSpace(r.stdout) == "" {
		t.Errorf("plan --apply printed nothing on stdout, want its record")
	}
	for n, line := range strings.Split(r.stdout, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			t.Errorf("stdout of plan --apply, line %d is not a comment: %q", n+1, line)
		}
	}
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
	if sh.code != 0 {
		t.Errorf("sh on the stdout of plan --apply: %v, want exit 0 (a record of comments)", sh)
	}
	if data, err := os.ReadFile(calls); err == nil {
		t.Errorf("the stdout of plan --apply, run by sh, runs qrun again:\n%s", indent(string(data)))
	}
}
