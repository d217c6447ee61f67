//go:build pbsitest

package itest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// Scenarios 1 and 2 on the "hosts" complex (testdata/hosts.vnodedef and
// testdata/hosts.qmgr): vnodes cn00..cn07 without brackets, cn00..cn03 on
// host hosta and cn04..cn07 on host hostb (resources_available.host),
// tier0 = t0_<i/2>, tier1 = t1_<i/4>; the natural vnode pbshost (ncpus=0,
// no tiers); queues routeq (routing to workq), parkq (routing, not
// started) and stopq (execution, not started).

// hostsNodes is the hostlist of the hosts complex's child vnodes.
const hostsNodes = "cn[00-07]"

// hostsArgs name optsched's part of the hosts complex: the child vnodes
// through a hostlist, with the topology from tier0/tier1.
var hostsArgs = []string{"--exec-queues", "workq", "--nodes", hostsNodes}

func (o *optsched) applyHosts(extra ...string) result {
	o.t.Helper()
	return o.run(append(append([]string{"pbs", "plan", "--apply"}, hostsArgs...), extra...)...)
}

// hostOf returns the resources_available.host of each vnode.
func hostOf(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for name, v := range vnodes(t) {
		m[name] = v.text("host")
	}
	return m
}

// checkHostsComplex fails the test when the server is not the hosts
// complex (the vnode definition file did not apply as expected).
func checkHostsComplex(t *testing.T) {
	t.Helper()
	h := hostOf(t)
	for i := range 8 {
		v := fmt.Sprintf("cn%02d", i)
		want := "hosta"
		if i >= 4 {
			want = "hostb"
		}
		if h[v] != want {
			t.Fatalf("vnode %s: resources_available.host %q, want %q: is this the hosts complex (PBSNS_VNODEDEF=testdata/hosts.vnodedef)?", v, h[v], want)
		}
	}
}

// TestHostsStarts: scenario 1 on vnodes of a definition file with several
// hosts and names without brackets: --nodes 'cn[00-07]' and the tier
// topology; every job that fits starts and ends with Exit_status 0.
func TestHostsStarts(t *testing.T) {
	need(t, cfgHosts)
	checkHostsComplex(t)
	reset(t)
	ids := []string{
		sleepJob(t, "h1", 3, "select=1:ncpus=1"),
		sleepJob(t, "h2", 3, "select=1:ncpus=2:mem=4gb"),
		sleepJob(t, "hx", 3, "select=2:ncpus=4", "place=excl"),
		sleepJob(t, "ht", 3, "select=1:ncpus=1:tier1=t1_1"),
		sleepJob(t, "h3", 3, "select=3:ncpus=1"),
	}
	o := newOptsched(t)
	if r := o.applyHosts(); r.code != 0 {
		t.Errorf("plan --apply: exit %d, want 0", r.code)
	}
	js := started(t, ids...)
	for _, id := range ids {
		for v := range ranOn(js[id]) {
			if !strings.HasPrefix(v, "cn") {
				t.Errorf("job %s ran on %s, outside %s: %v", id, v, hostsNodes, js[id])
			}
		}
	}
	if h := hostOf(t); h[vnodesOf(js[ids[3]].ExecVnode)[0]] != "hostb" {
		t.Errorf("job %s asks tier1=t1_1 (cn04..cn07 on hostb): %v", ids[3], js[ids[3]])
	}
	checkNoOvercommit(t)
	js = waitFinished(t, 60*time.Second, ids...)
	for _, id := range ids {
		if !js[id].finishedOK() {
			t.Errorf("%v: want Exit_status 0", js[id])
		}
	}

	t.Run("no-nodes-flag", func(t *testing.T) {
		// Without --nodes the natural vnode pbshost (no CPUs, no
		// tier0/tier1) is ignored and the cycle works.
		reset(t)
		id := sleepJob(t, "hn", 3, "select=1:ncpus=1")
		if r := newOptsched(t).run("pbs", "plan", "--apply", "--exec-queues", "workq"); r.code != 0 {
			t.Errorf("plan --apply without --nodes: exit %d, want 0", r.code)
		}
		if j := started(t, id)[id]; ranOn(j)[natural] {
			t.Errorf("job should have started on a cn vnode: %v", j)
		}
	})
}

// TestHostsPlace: scenario 2 on several hosts, PBS's host meaning of
// place (resources_available.host): scatter takes one chunk per host,
// vscatter one per vnode, pack puts every chunk on one host (over its
// vnodes), exclhost holds the whole host and takes no host with a busy
// vnode, group=r puts every chunk on vnodes with one value of r. Some
// subtests first start a job themselves (qrun -H on a vnode the test
// picks) so that a placement that ignores the hosts would differ.
func TestHostsPlace(t *testing.T) {
	need(t, cfgHosts)
	checkHostsComplex(t)

	hostsOfJob := func(t *testing.T, j job) []string {
		h := hostOf(t)
		var out []string
		for _, v := range vnodesOf(j.ExecVnode) {
			out = append(out, h[v])
		}
		return out
	}
	distinct := func(s []string) int {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return len(m)
	}
	// occupy starts a job of ncpus CPUs on vnode v with the test's own
	// qrun -H, as a running job of another scheduler would be.
	occupy := func(t *testing.T, v string, ncpus int) string {
		t.Helper()
		id := sleepJob(t, "occ_"+v, 60, fmt.Sprintf("select=1:ncpus=%d", ncpus))
		pbsRun(t, "qrun", "-H", fmt.Sprintf("(%s:ncpus=%d)", v, ncpus), id)
		started(t, id)
		return id
	}

	t.Run("scatter", func(t *testing.T) {
		reset(t)
		id := sleepJob(t, "sc2", 10, "select=2:ncpus=1", "place=scatter")
		newOptsched(t).applyHosts()
		js := started(t, id)
		if hs := hostsOfJob(t, js[id]); len(hs) != 2 || distinct(hs) != 2 {
			t.Errorf("place=scatter: chunks on hosts %v, want one chunk on each host: %v", hs, js[id])
		}
	})
	t.Run("scatter-excl", func(t *testing.T) {
		reset(t)
		id := sleepJob(t, "scx", 10, "select=2:ncpus=2", "place=scatter:excl")
		newOptsched(t).applyHosts()
		js := started(t, id)
		if hs := hostsOfJob(t, js[id]); len(hs) != 2 || distinct(hs) != 2 {
			t.Errorf("place=scatter:excl: chunks on hosts %v, want one chunk on each host: %v", hs, js[id])
		}
	})
	t.Run("scatter-more-chunks-than-hosts", func(t *testing.T) {
		// 3 scatter chunks on 2 hosts can never run: the job is deferred
		// without stopping the jobs behind it (select=4 comes after it
		// in the selection order: more chunks).
		reset(t)
		id := sleepJob(t, "sc3", 10, "select=3:ncpus=1", "place=scatter")
		ok := sleepJob(t, "sc3ok", 10, "select=4:ncpus=1")
		o := newOptsched(t)
		for range 2 {
			if r := o.applyHosts(); r.code != 0 {
				t.Errorf("exit %d, want 0", r.code)
			}
		}
		started(t, ok)
		time.Sleep(time.Second)
		if j := getJob(t, id); j.ran() {
			t.Errorf("place=scatter with 3 chunks on 2 hosts started (hosts %v): %v", hostsOfJob(t, j), j)
		}
		for n, e := range o.audit() {
			if e.Plan == nil || !listed(e.Plan.Deferred, id) {
				t.Errorf("audit line %d: job %s (3 scatter chunks, 2 hosts) is not deferred", n+1, id)
				continue
			}
			for _, r := range e.Plan.Deferred {
				if r.Job == id {
					t.Logf("audit line %d: %s deferred: %s", n+1, id, r.Reason)
				}
			}
		}
	})
	t.Run("vscatter", func(t *testing.T) {
		// One chunk per vnode, not per host: 5 chunks on 5 vnodes of the
		// 2 hosts.
		reset(t)
		id := sleepJob(t, "vsc5", 10, "select=5:ncpus=1", "place=vscatter")
		newOptsched(t).applyHosts()
		js := started(t, id)
		if vs := vnodesOf(js[id].ExecVnode); len(vs) != 5 || len(ranOn(js[id])) != 5 {
			t.Errorf("place=vscatter: want 5 chunks on 5 distinct vnodes: %v", js[id])
		}
		checkNoOvercommit(t)
	})
	t.Run("pack", func(t *testing.T) {
		// cn03 (hosta) runs a 1-CPU job. Two 3-CPU chunks packed on one
		// host go over two of its vnodes (3 CPUs left on cn03 and 4 on
		// the others): one host, two vnodes.
		reset(t)
		occupy(t, "cn03", 1)
		id := sleepJob(t, "pk", 10, "select=2:ncpus=3", "place=pack")
		if r := newOptsched(t).applyHosts(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		js := started(t, id)
		if hs := hostsOfJob(t, js[id]); distinct(hs) != 1 || len(ranOn(js[id])) != 2 {
			t.Errorf("place=pack, select=2:ncpus=3: chunks on hosts %v, want two vnodes of one host: %v", hs, js[id])
		}
		checkNoOvercommit(t)
	})
	t.Run("exclhost", func(t *testing.T) {
		// The job holds its whole host: 6 one-CPU jobs submitted after it
		// start, all on the other host.
		reset(t)
		id := sleepJob(t, "exh", 30, "select=1:ncpus=1", "place=exclhost")
		o := newOptsched(t)
		o.applyHosts()
		js := started(t, id)
		host := hostsOfJob(t, js[id])[0]
		var fill []string
		for i := range 6 {
			fill = append(fill, sleepJob(t, fmt.Sprintf("exf%d", i), 20, "select=1:ncpus=1"))
		}
		o.applyHosts()
		js = started(t, fill...)
		h := hostOf(t)
		for _, f := range fill {
			for v := range ranOn(js[f]) {
				if h[v] == host {
					t.Errorf("job %s started on %s of host %s, which exclhost job %s holds (%s)", f, v, host, id, js[id].ExecVnode)
				}
			}
		}
		for name, v := range vnodes(t) {
			if h[name] == host {
				for _, j := range v.jobIDs() {
					if j != id {
						t.Errorf("vnode %s of host %s, held by exclhost job %s, runs %s", name, host, id, j)
					}
				}
			}
		}
		checkNoOvercommit(t)
	})
	t.Run("exclhost-busy-host", func(t *testing.T) {
		// cn01 (hosta) runs a 1-CPU job: an exclhost job must take hostb,
		// and a second exclhost job has no host left and waits.
		reset(t)
		occ := occupy(t, "cn01", 1)
		x1 := sleepJob(t, "exb1", 20, "select=1:ncpus=1", "place=exclhost")
		x2 := sleepJob(t, "exb2", 20, "select=1:ncpus=1", "place=exclhost")
		o := newOptsched(t)
		o.applyHosts()
		js := started(t, x1)
		if hs := hostsOfJob(t, js[x1]); distinct(hs) != 1 || hs[0] != "hostb" {
			t.Errorf("exclhost job %s on hosts %v, want hostb (hosta runs %s on cn01): %v", x1, hs, occ, js[x1])
		}
		o.applyHosts()
		time.Sleep(time.Second)
		js = jobs(t)
		notStarted(t, js, x2)
		if !js[occ].ran() || js[occ].State != "R" {
			t.Errorf("the job on cn01: %v, want running", js[occ])
		}
	})
	t.Run("group", func(t *testing.T) {
		// cn01 (tier0 t0_0) is full. Two 3-CPU chunks grouped by tier0
		// must share one tier0 value: t0_1 (cn02, cn03) or a later one,
		// never cn00 with a vnode of another pair.
		reset(t)
		occupy(t, "cn01", 4)
		id := sleepJob(t, "grp", 10, "select=2:ncpus=3", "place=group=tier0")
		if r := newOptsched(t).applyHosts(); r.code != 0 {
			t.Errorf("exit %d, want 0", r.code)
		}
		js := started(t, id)
		vs := vnodes(t)
		tiers := map[string]bool{}
		for v := range ranOn(js[id]) {
			tiers[vs[v].text("tier0")] = true
		}
		if len(tiers) != 1 || len(ranOn(js[id])) != 2 {
			t.Errorf("place=group=tier0, select=2:ncpus=3: want two vnodes with one tier0 value, got tier0 %v: %v", slices.Sorted(maps.Keys(tiers)), js[id])
		}
		checkNoOvercommit(t)
	})
}

// TestHostsQueues: scenario 2's queues. A job of the routing queue routeq
// is routed by the server to workq and then started; a job of parkq (a
// routing queue that is not started) and of stopq (a stopped execution
// queue) never starts. optsched reads the queue list (no --exec-queues).
func TestHostsQueues(t *testing.T) {
	need(t, cfgHosts)
	reset(t)
	queues := pbsRun(t, "qstat", "-Q")
	for _, q := range []string{"routeq", "parkq", "stopq"} {
		if !strings.Contains(queues, q) {
			t.Fatalf("queue %s is missing (PBSNS_QMGR=testdata/hosts.qmgr):\n%s", q, queues)
		}
	}
	routed := qsub(t, "-q", "routeq", "-N", "routed", "-l", "select=1:ncpus=1", "--", "/bin/sleep", "3")
	parked := qsub(t, "-q", "parkq", "-N", "parked", "-l", "select=1:ncpus=1", "--", "/bin/sleep", "3")
	stopped := qsub(t, "-q", "stopq", "-N", "stopped", "-l", "select=1:ncpus=1", "--", "/bin/sleep", "3")
	waitJobs(t, 30*time.Second, "the server should route the routeq job to workq", []string{routed}, func(j job) bool { return j.Queue == "workq" })
	o := newOptsched(t)
	for _, args := range [][]string{
		{"pbs", "plan", "--apply", "--nodes", hostsNodes},
		{"pbs", "plan", "--apply", "--nodes", hostsNodes, "--exec-queues", "workq"},
	} {
		if r := o.run(args...); r.code != 0 {
			t.Errorf("optsched %s: exit %d, want 0", shellQuote(args), r.code)
		}
	}
	started(t, routed)
	time.Sleep(time.Second)
	js := jobs(t)
	notStarted(t, js, parked, stopped)
	if js[parked].Queue != "parkq" || js[stopped].Queue != "stopq" {
		t.Errorf("jobs moved: %v; %v", js[parked], js[stopped])
	}
}
