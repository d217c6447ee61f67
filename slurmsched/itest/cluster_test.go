//go:build slurmitest

package itest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/optsched/optsched/model/hostlist"
)

// TestWholeAndShared: exclusive, whole-node and shared jobs all run and
// complete; the exclusive and whole-node jobs of two nodes each land
// under one leaf switch; no node goes over its CPUs or memory.
func TestWholeAndShared(t *testing.T) {
	need(t)
	reset(t)
	excl := submit(t, "--exclusive -N2 --wrap 'sleep 3'")
	whole := submit(t, "-N2 -n8 --wrap 'sleep 3'")
	ids := []string{excl, whole}
	for range 3 {
		ids = append(ids, submit(t, "-n2 --mem=1000 --wrap 'sleep 3'"))
	}
	ids = append(ids, submit(t, "-n1 --mem-per-cpu=500 --wrap 'sleep 2'"), submit(t, "-N3 -n3 --wrap 'sleep 2'"))
	js := cycleUntilDone(t, ids, 90*time.Second)
	checkRecords(t, js, ids, nil)
	for _, id := range []string{excl, whole} {
		names, _ := hostlist.Expand(js[id].Nodes)
		if len(names) != 2 || leaf(names[0]) != leaf(names[1]) {
			t.Errorf("job %s ran on %v: not two nodes under one leaf switch", id, names)
		}
	}
}

// TestDrainedAndDown: nothing starts on drained or down nodes; the jobs
// run on the others.
func TestDrainedAndDown(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	must(t, "scontrol", "update", "NodeName=n[01-04]", "State=DRAIN", "Reason=itest")
	must(t, "scontrol", "update", "NodeName=n05", "State=DOWN", "Reason=itest")
	var ids []string
	for range 6 {
		ids = append(ids, submit(t, "-n4 --wrap 'sleep 2'"))
	}
	ids = append(ids, submit(t, "--exclusive -N2 --wrap 'sleep 2'"), submit(t, "-n1 --wrap 'sleep 1'"), submit(t, "-N2 -n2 --wrap 'sleep 1'"))
	js := cycleUntilDone(t, ids, 90*time.Second)
	checkRecords(t, js, ids, []string{"n01", "n02", "n03", "n04", "n05"})
}

// TestRecheck: a job cancelled, and a node drained, between the reading
// of the plan and the act: the start is dropped and nothing runs there.
func TestRecheck(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	dir := t.TempDir()
	lock, log := stateFiles(t)
	capture := func() (string, string) {
		q, s := dir+"/squeue.json", dir+"/sinfo.json"
		if err := os.WriteFile(q, []byte(must(t, "squeue", "--json")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s, []byte(must(t, "sinfo", "--json")), 0o644); err != nil {
			t.Fatal(err)
		}
		return q, s
	}
	// A job cancelled after the reading.
	keep := submit(t, "-n1 --wrap 'sleep 1'")
	gone := submit(t, "-n1 --wrap 'sleep 1'")
	q, s := capture()
	must(t, "scancel", gone)
	if out, errs, rc := optsched(t, "slurm", "plan", "--apply", "--squeue", q, "--sinfo", s, "--lock", lock, "--log", log); rc != 0 {
		t.Fatalf("plan --apply: exit %d\n%s%s", rc, out, errs)
	}
	js := cycleUntilDone(t, []string{keep}, 60*time.Second)
	if js[keep].State != "COMPLETED" {
		t.Errorf("job %s: %s", keep, js[keep].State)
	}
	if j := js[gone]; j.State != "CANCELLED" || j.Nodes != "" {
		t.Errorf("cancelled job %s: %s on %q", gone, j.State, j.Nodes)
	}
	// A node drained after the reading: only n16 is up when the state is
	// read, and it is drained before the act.
	must(t, "scontrol", "update", "NodeName=n[01-15]", "State=DRAIN", "Reason=itest")
	late := submit(t, "-n1 --wrap 'sleep 1'")
	q, s = capture()
	must(t, "scontrol", "update", "NodeName=n16", "State=DRAIN", "Reason=itest")
	if out, errs, rc := optsched(t, "slurm", "plan", "--apply", "--squeue", q, "--sinfo", s, "--lock", lock, "--log", log); rc != 0 {
		t.Fatalf("plan --apply: exit %d\n%s%s", rc, out, errs)
	}
	time.Sleep(3 * time.Second)
	if j := jobs(t)[late]; j.State != "PENDING" || j.Priority != 0 || j.Nodes != "" {
		t.Errorf("job %s planned on a node drained before the act: %s priority %d on %q", late, j.State, j.Priority, j.Nodes)
	}
	_, dropped := released(audit(t, log))
	if !dropped[gone] || !dropped[late] {
		t.Errorf("audit log: dropped %v, want %s and %s", dropped, gone, late)
	}
}

// TestUserCannotRelease: the hold guard refuses the owner's release,
// priority and nice changes, and the job stays held.
func TestUserCannotRelease(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	id := submit(t, "-n1 --wrap 'sleep 1'")
	for _, line := range []string{"scontrol release " + id, "scontrol update JobId=" + id + " Nice=10", "scontrol update JobId=" + id + " Priority=100"} {
		if out, err := asUser(line); err == nil {
			t.Errorf("%s by the owner: accepted\n%s", line, out)
		}
	}
	time.Sleep(2 * time.Second)
	if j := jobs(t)[id]; j.State != "PENDING" || j.Priority != 0 || j.Reason != "JobHeldUser" {
		t.Errorf("job %s after the owner's attempts: %s priority %d reason %s", id, j.State, j.Priority, j.Reason)
	}
	// The owner may still cancel it.
	if out, err := asUser("scancel " + id); err != nil {
		t.Errorf("scancel by the owner: %v\n%s", err, out)
	}
}

// TestManyCycles: optsched slurm run while jobs of every kind arrive and
// finish, with one node drained: every job runs and ends COMPLETED,
// nothing on the drained node, no node over its CPUs or memory, and the
// audit log released every job exactly once. SIGTERM then stops the
// daemon with exit 0.
func TestManyCycles(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	must(t, "scontrol", "update", "NodeName=n16", "State=DRAIN", "Reason=itest")
	lock, log := stateFiles(t)
	d := exec.Command(optschedBin, "slurm", "run", "--apply", "--interval", "1s", "--lock", lock, "--log", log)
	var out, errs bytes.Buffer
	d.Stdout, d.Stderr = &out, &errs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Wait() }()
	defer func() {
		if d.ProcessState == nil {
			d.Process.Kill()
		}
	}()
	r := rand.New(rand.NewPCG(37, 1))
	var ids []string
	for i := range 40 {
		var args string
		sleep := 1 + r.IntN(3)
		switch r.IntN(5) {
		case 0:
			args = fmt.Sprintf("--exclusive -N%d", 1+r.IntN(3))
		case 1:
			args = "-N2 -n8"
		default:
			n := 1 + r.IntN(2)
			args = fmt.Sprintf("-N%d -n%d --mem-per-cpu=%d", n, n*(1+r.IntN(3)), 500*(1+r.IntN(3)))
		}
		ids = append(ids, submit(t, fmt.Sprintf("%s --wrap 'sleep %d'", args, sleep)))
		if i%4 == 3 {
			time.Sleep(time.Second)
		}
	}
	deadline := time.Now().Add(4 * time.Minute)
	var js map[string]sjob
	for {
		js = jobs(t)
		left := 0
		for _, id := range ids {
			if !terminal(js[id].State) {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs not done after 4 minutes: %+v\nstderr: %s", left, pick(js, ids), errs.String())
		}
		select {
		case err := <-done:
			t.Fatalf("daemon exited early: %v\n%s", err, errs.String())
		case <-time.After(time.Second):
		}
	}
	checkRecords(t, js, ids, []string{"n16"})
	signal(t, d, syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("daemon after SIGTERM: %v\n%s", err, errs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon still running 30 s after SIGTERM")
	}
	rel, _ := released(audit(t, log))
	for _, id := range ids {
		if rel[id] != 1 {
			t.Errorf("audit log: job %s released %d times, want once", id, rel[id])
		}
	}
	if strings.Contains(errs.String(), "panic") {
		t.Errorf("daemon stderr: %s", errs.String())
	}
}

// TestSIGTERMStops: SIGTERM stops a running daemon with exit 0 after its
// cycle, and no job submitted afterwards starts.
func TestSIGTERMStops(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	lock, log := stateFiles(t)
	first := submit(t, "-n1 --wrap 'sleep 1'")
	d := exec.Command(optschedBin, "slurm", "run", "--apply", "--interval", "1s", "--lock", lock, "--log", log)
	var errs bytes.Buffer
	d.Stderr = &errs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for jobs(t)[first].State == "PENDING" {
		if time.Now().After(deadline) {
			d.Process.Kill()
			t.Fatalf("job %s not started by the daemon in 30 s: %s", first, errs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	signal(t, d, syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() { waited <- d.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("daemon after SIGTERM: %v\n%s", err, errs.String())
		}
	case <-time.After(30 * time.Second):
		d.Process.Kill()
		t.Fatal("daemon still running 30 s after SIGTERM")
	}
	late := submit(t, "-n1 --wrap 'sleep 1'")
	time.Sleep(3 * time.Second)
	if j := jobs(t)[late]; j.State != "PENDING" || j.Priority != 0 {
		t.Errorf("job %s submitted after the daemon stopped: %s priority %d", late, j.State, j.Priority)
	}
	entries := audit(t, log)
	if len(entries) == 0 {
		t.Fatal("no audit entry")
	}
	if e := entries[len(entries)-1]; e["command"] != "run" || e["error"] != nil {
		t.Errorf("last audit entry: %v", e)
	}
}

// TestArrayAndMemory: the tasks of a job array run, each split off and
// placed by optsched; memory, not CPUs, limits them to one a node
// (5000 of 8000 MB), and --nodes keeps them on n[01-04].
func TestArrayAndMemory(t *testing.T) {
	need(t)
	reset(t)
	arr := submit(t, "--array=0-7 -n1 --mem=5000 --wrap 'sleep 2'")
	tasks, js := cycleUntilArrayDone(t, arr, 8, 2*time.Minute, "--nodes", "n[01-04]")
	var avoid []string
	for i := 5; i <= 16; i++ {
		avoid = append(avoid, fmt.Sprintf("n%02d", i))
	}
	checkRecords(t, js, tasks, avoid)
	// One task a node at a time: 8 tasks on 4 nodes took two rounds.
	starts := map[int64]int{}
	for _, id := range tasks {
		starts[js[id].Start]++
	}
	for at, n := range starts {
		if n > 4 {
			t.Errorf("%d tasks started at %d on 4 nodes", n, at)
		}
	}
}

// TestAbortMidApply: a second SIGTERM while the daemon is placing jobs
// (scontrol update made slow by a wrapper) aborts the cycle: nothing is
// released and every job stays held. The next cycle, with the real
// scontrol, places the half-placed jobs again and they complete.
func TestAbortMidApply(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	dir := t.TempDir()
	real, err := exec.LookPath("scontrol")
	if err != nil {
		t.Fatal(err)
	}
	started := dir + "/update-started"
	wrapper := dir + "/scontrol"
	// The update itself runs, then the wrapper lingers: the abort comes
	// after the first job is placed and before it is released.
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = update ]; then %s \"$@\"; rc=$?; touch %s; sleep 2; exit $rc; fi\nexec %s \"$@\"\n", real, started, real)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 4 {
		ids = append(ids, submit(t, "-n1 --wrap 'sleep 1'"))
	}
	lock, log := stateFiles(t)
	d := exec.Command(optschedBin, "slurm", "run", "--apply", "--interval", "1s", "--scontrol", wrapper, "--lock", lock, "--log", log)
	var errs bytes.Buffer
	d.Stderr = &errs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			d.Process.Kill()
			t.Fatalf("no scontrol update within 30 s: %s", errs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	signal(t, d, syscall.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	signal(t, d, syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() { waited <- d.Wait() }()
	select {
	case <-waited:
	case <-time.After(20 * time.Second):
		d.Process.Kill()
		t.Fatal("daemon still running 20 s after the second SIGTERM")
	}
	time.Sleep(2 * time.Second)
	js := jobs(t)
	placed := 0
	for _, id := range ids {
		if j := js[id]; j.State != "PENDING" || j.Priority != 0 {
			t.Errorf("job %s after the aborted cycle: %s priority %d", id, j.State, j.Priority)
		}
		if js[id].Required != "" {
			placed++
		}
	}
	if placed == 0 {
		t.Error("no job was placed before the abort: the test did not abort mid-apply")
	}
	entries := audit(t, log)
	if e := entries[len(entries)-1]; e["error"] == nil {
		t.Errorf("aborted cycle logged without an error: %v", e)
	}
	js = cycleUntilDone(t, ids, 60*time.Second)
	checkRecords(t, js, ids, nil)
}

// TestSlurmctldStopped: with slurmctld stopped (SIGSTOP) a cycle fails
// with exit 1 and changes nothing; once it runs again (SIGCONT), the next
// cycle starts the jobs.
func TestSlurmctldStopped(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	id := submit(t, "-n1 --wrap 'sleep 1'")
	pid := strings.TrimSpace(must(t, "pgrep", "-x", "slurmctld"))
	must(t, "kill", "-STOP", pid)
	cont := func() { sh("kill", "-CONT", pid) }
	defer cont()
	lock, log := stateFiles(t)
	start := time.Now()
	_, errs, rc := optsched(t, "slurm", "plan", "--apply", "--lock", lock, "--log", log)
	took := time.Since(start)
	cont()
	if rc != 1 {
		t.Errorf("cycle with slurmctld stopped: exit %d, want 1\n%s", rc, errs)
	}
	t.Logf("the failing cycle took %v", took)
	if e := audit(t, log); len(e) != 1 || e[0]["error"] == nil {
		t.Errorf("audit log: %v", e)
	}
	if j := jobs(t)[id]; j.State != "PENDING" || j.Priority != 0 {
		t.Errorf("job %s: %s priority %d", id, j.State, j.Priority)
	}
	js := cycleUntilDone(t, []string{id}, 60*time.Second)
	checkRecords(t, js, []string{id}, nil)
}

// TestWake: with an interval of an hour, SIGUSR1 to the pid in
// --pid-file starts a cycle, and the held job runs.
func TestWake(t *testing.T) {
	need(t)
	reset(t)
	defer reset(t)
	lock, log := stateFiles(t)
	pidFile := filepath.Join(t.TempDir(), "slurm.pid")
	d := exec.Command(optschedBin, "slurm", "run", "--apply", "--interval", "1h", "--pid-file", pidFile, "--lock", lock, "--log", log)
	var errs bytes.Buffer
	d.Stderr = &errs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	defer d.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, err := os.ReadFile(pidFile); err == nil && strings.TrimSpace(string(data)) == fmt.Sprint(d.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid file after 30 s: %s", errs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The first cycle ran at once; this job waits for a wake-up.
	time.Sleep(time.Second)
	id := submit(t, "-n1 --wrap 'sleep 1'")
	time.Sleep(2 * time.Second)
	if j := jobs(t)[id]; j.State != "PENDING" {
		t.Fatalf("job %s %s before any wake-up (the interval is an hour)", id, j.State)
	}
	signal(t, d, syscall.SIGUSR1)
	deadline = time.Now().Add(30 * time.Second)
	for jobs(t)[id].State == "PENDING" {
		if time.Now().After(deadline) {
			t.Fatalf("job %s still pending 30 s after SIGUSR1: %s", id, errs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	signal(t, d, syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Errorf("daemon after SIGTERM: %v", err)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
}
