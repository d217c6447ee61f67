//go:build pbsitest

package itest

import (
	"strings"
	"testing"
	"time"
)

// TestDefaultBackfill: issue 34. A running job holds 5 of the 8 vnodes
// until its walltime (15 s); the head of the queue, W (8 vnodes), has
// waited longest (--period 1s makes its 2 s head start two waiting
// periods) and does not fit. Behind it, N0 and N1 (1 vnode, 5 s walltime)
// end before the running job's walltime does; L (1 vnode, 5 min) would
// not, and although it fits now (3 vnodes are idle), no vnode is spare
// when W starts.
//
//   - --selection lan2023 (the paper's rule) starts nothing behind W;
//   - the backfill selection with reservations at once (--reserve-after
//     1, EASY) starts N0 and N1 in the same cycle, leaves L and W
//     waiting, and reserves W's start at the running job's stime +
//     walltime (the default reserves only for a job that starves, after
//     --starve-after 24h, as pbs_sched does: it would start L too);
//   - cycles every second then start W no later than that reservation
//     (plus a cycle), and before L.
func TestDefaultBackfill(t *testing.T) {
	need(t, cfgDefault)
	reset(t)
	o := newOptsched(t)
	period := []string{"--period", "1s"}
	run := sleepJob(t, "bfrun", 10, "select=5:ncpus=4", "place=excl", "walltime=00:00:15")
	if r := o.applyDefault(period...); r.code != 0 {
		t.Fatalf("plan --apply: exit %d, want 0", r.code)
	}
	started(t, run)
	wide := sleepJob(t, "bfwide", 2, "select=8:ncpus=4", "place=excl", "walltime=00:00:10")
	time.Sleep(2100 * time.Millisecond)
	narrow := []string{
		sleepJob(t, "bfn0", 2, "select=1:ncpus=4", "place=excl", "walltime=00:00:05"),
		sleepJob(t, "bfn1", 2, "select=1:ncpus=4", "place=excl", "walltime=00:00:05"),
	}
	long := sleepJob(t, "bflong", 2, "select=1:ncpus=4", "place=excl", "walltime=00:05:00")

	if r := o.applyDefault(append(period, "--selection", "lan2023")...); r.code != 0 {
		t.Fatalf("plan --apply --selection lan2023: exit %d, want 0", r.code)
	}
	time.Sleep(time.Second)
	notStarted(t, jobs(t), append(narrow, wide, long)...)

	easy := append(period, "--reserve-after", "1")
	if r := o.applyDefault(easy...); r.code != 0 {
		t.Fatalf("plan --apply (backfill, EASY): exit %d, want 0", r.code)
	}
	started(t, narrow...)
	time.Sleep(time.Second)
	notStarted(t, jobs(t), wide, long)
	checkNoOvercommit(t)
	e := o.audit()
	last := e[len(e)-1]
	if last.Plan == nil || last.Plan.Selection != "backfill" || last.Plan.Reservation == nil || last.Plan.Reservation.Job != wide {
		t.Fatalf("the backfill cycle's plan should reserve for %s: %+v", wide, last.Plan)
	}
	res := last.Plan.Reservation
	for _, d := range last.Plan.Deferred {
		if d.Job == wide && !strings.Contains(d.Reason, "reserved to start at") ||
			d.Job == long && !strings.Contains(d.Reason, "would end after the reservation of job "+wide) {
			t.Errorf("job %s: reason %q", d.Job, d.Reason)
		}
	}
	t.Logf("reservation: %+v", *res)

	// Cycles every second until W starts.
	var wideAt time.Time
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if r := o.applyDefault(easy...); r.code != 0 {
			t.Fatalf("plan --apply: exit %d", r.code)
		}
		js := jobs(t)
		if js[wide].ran() {
			wideAt = time.Now()
			if js[long].ran() {
				t.Errorf("job %s started before or with the reserved job %s: %v", long, wide, js[long])
			}
			break
		}
	}
	if wideAt.IsZero() {
		t.Fatalf("job %s did not start within 40 s", wide)
	}
	if late := wideAt.Unix() - res.Start; late > 2 {
		t.Errorf("job %s started at %v, %d s after its reservation at %v", wide, wideAt, late, time.Unix(res.Start, 0))
	}
	pbsRun(t, "qdel", long)
	js := waitFinished(t, 60*time.Second, append([]string{run, wide}, narrow...)...)
	for _, id := range append([]string{run, wide}, narrow...) {
		if !js[id].finishedOK() {
			t.Errorf("job %s did not end with Exit_status 0: %v", id, js[id])
		}
	}
}
