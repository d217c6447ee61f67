//go:build pbsitest

package itest

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestDefaultRunLoop: scenario 3. `optsched pbs run --apply --interval 2s
// --cycles N` while jobs are submitted in waves and finish: every job
// that fits runs and ends F with Exit_status 0; pbsnodes, polled all
// along, never shows a vnode with more ncpus or mem assigned than
// available; nothing starts on the offline vnode pbshost[3] (set with qmgr) or on the
// natural vnode; the audit log agrees with the server's job history.
func TestDefaultRunLoop(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	const off = "pbshost[3]"
	setOffline(t, off)
	t.Cleanup(func() { runCmd(30*time.Second, "qmgr", "-c", "set node "+off+" state -= offline") })

	const cycles = 20
	o := newOptsched(t)
	bg := o.start(append([]string{"pbs", "run", "--apply", "--interval", "2s", "--cycles", strconv.Itoa(cycles), "--time-limit", "1s"}, defaultArgs...)...)

	// Poll pbsnodes while the cycles run.
	var (
		mu         sync.Mutex
		violations []string
		samples    int
	)
	stop, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			vs, err := readVnodes()
			mu.Lock()
			if err == nil {
				samples++
				for _, b := range overcommitted(vs) {
					violations = append(violations, time.Now().Format("15:04:05.000 ")+b)
				}
				if j := vs[off].jobIDs(); len(j) > 0 {
					violations = append(violations, fmt.Sprintf("%s offline vnode %s runs %v", time.Now().Format("15:04:05.000"), off, j))
				}
				if j := vs[natural].jobIDs(); len(j) > 0 {
					violations = append(violations, fmt.Sprintf("%s natural vnode %s runs %v", time.Now().Format("15:04:05.000"), natural, j))
				}
			}
			mu.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
	}()

	// 7 usable vnodes of 4 CPUs and 8 GB; each wave asks for 21 CPUs.
	shapes := [][]string{
		{"select=1:ncpus=1"},
		{"select=1:ncpus=2:mem=3gb"},
		{"select=1:ncpus=4"},
		{"select=2:ncpus=4", "place=excl"},
		{"select=2:ncpus=1:mem=1gb"},
		{"select=1:ncpus=3:mem=6gb"},
		{"select=1:ncpus=1:mem=7gb"},
	}
	var ids []string
	for wave := range 3 {
		for i, sh := range shapes {
			ids = append(ids, sleepJob(t, fmt.Sprintf("loop%d_%d", wave, i), 2+(i+wave)%3, sh...))
		}
		time.Sleep(5 * time.Second)
	}
	code := bg.wait(cycles*2*time.Second + 90*time.Second)
	close(stop)
	<-polled
	if code != 0 {
		t.Errorf("run --apply --cycles %d: exit %d, want 0", cycles, code)
	}

	// Every job ran and ended with Exit_status 0 (the last cycle is
	// long after the last wave; give the jobs that run still time to end).
	js := waitJobs(t, 30*time.Second, "every job should have started before the last cycle and then finished", ids, func(j job) bool {
		return j.State == "F" || !j.ran() && j.State == "Q"
	})
	for _, id := range ids {
		j := js[id]
		switch {
		case !j.ran():
			t.Errorf("job %s never started in %d cycles: %v", id, cycles, j)
		case !j.finishedOK():
			t.Errorf("job %s did not end with Exit_status 0: %v", id, j)
		case ranOn(j)[off]:
			t.Errorf("job %s ran on the offline vnode %s: %v", id, off, j)
		case ranOn(j)[natural]:
			t.Errorf("job %s ran on the natural vnode %s: %v", id, natural, j)
		}
	}
	mu.Lock()
	if samples < cycles {
		t.Errorf("only %d pbsnodes samples during %d cycles", samples, cycles)
	}
	for _, v := range violations {
		t.Error(v)
	}
	mu.Unlock()

	// The audit log: one line per cycle; a start it records as applied
	// with exit code 0 is a job the server ran on those vnodes, and every
	// job that ran was started by a logged cycle.
	entries := o.audit()
	if len(entries) != cycles {
		t.Errorf("audit log has %d lines, want one per cycle (%d)", len(entries), cycles)
	}
	lastStart := map[string]string{} // job -> exec_vnode of its last successful qrun
	for n, e := range entries {
		if e.Command != "run" || !e.Apply {
			t.Errorf("audit line %d: command %q apply %v, want run, true", n+1, e.Command, e.Apply)
		}
		if e.Error != "" {
			t.Errorf("audit line %d: cycle failed: %s", n+1, e.Error)
		}
		if e.Plan == nil {
			continue
		}
		for _, s := range e.Plan.Starts {
			if s.ExitCode == nil {
				t.Errorf("audit line %d: start of %s has no exit code although the cycle applied", n+1, s.Job)
				continue
			}
			if *s.ExitCode == 0 {
				lastStart[s.Job] = s.ExecVnode
			}
		}
	}
	for job, ev := range lastStart {
		j, ok := js[job]
		if !ok {
			t.Errorf("the audit log starts %s, which the test did not submit", job)
			continue
		}
		if !slices.Equal(vnodesOf(j.ExecVnode), vnodesOf(ev)) {
			t.Errorf("the audit log starts %s on %s, the server ran it on %q", job, ev, j.ExecVnode)
		}
	}
	for _, id := range ids {
		if js[id].ran() && lastStart[id] == "" {
			t.Errorf("job %s ran (%s) but no audit line records a successful qrun for it", id, js[id].ExecVnode)
		}
	}
}
