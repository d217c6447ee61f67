package main

import (
	"context"
	"github.com/optsched/optsched/pbsched"
	"github.com/optsched/optsched/pbsched/pbstest"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPBSNeverNamesUnavailableVnodes: on 300 random clusters in every
// vnode state, no plan names a vnode that is not free, gives a busy
// vnode to a whole-node job, starts a job that is not queued in a started
// execution queue, or overfills a vnode. (The cycle's own checkPlan must
// pass too: it returns an error otherwise.)
func TestPBSNeverNamesUnavailableVnodes(t *testing.T) {
	for _, mode := range []string{pbsched.PartialFirstFit, pbsched.PartialCP} {
		var whole, partial, deferred int
		for seed := uint64(1); seed <= 300; seed++ {
			rc := pbstest.NewRandomCluster(rand.New(rand.NewPCG(seed, 6)))
			o := fixtureOptions(t)
			o.partial = mode
			o.qstatFile, o.nodesFile, o.queuesFile = rc.Write(t)
			o.timeLimit = 200 * time.Millisecond
			p, _, err := o.cycle(context.Background(), false)
			if err != nil {
				t.Fatalf("%s: seed %d: %v", mode, seed, err)
			}
			d := p.Doc("qrun", true)
			w, pa := rc.Verify(t, seed, verifyStarts(d.Starts))
			whole, partial, deferred = whole+w, partial+pa, deferred+len(d.Deferred)
		}
		t.Logf("--partial %s: starts: %d whole-node, %d partial-node; %d deferred", mode, whole, partial, deferred)
		if whole < 25 || partial < 100 || deferred < 100 {
			t.Errorf("--partial %s: the random clusters exercise too little: %d whole-node, %d partial-node starts, %d deferred", mode, whole, partial, deferred)
		}
	}
}

// TestPBSFakeQrunNeverGetsUnavailableVnodes runs the command end to end
// on random clusters, the state from fake qstat and pbsnodes on PATH, and
// checks what the fake qrun was actually asked.
func TestPBSFakeQrunNeverGetsUnavailableVnodes(t *testing.T) {
	calls := 0
	for seed := uint64(1); seed <= 30; seed++ {
		rc := pbstest.NewRandomCluster(rand.New(rand.NewPCG(seed, 66)))
		q, n, qs := rc.Write(t)
		_, callsFile := pbstest.FakePBS(t, q, n, qs)
		dir := t.TempDir()
		code, _, errs := optsched(t, "", "pbs", "plan", "--apply", "--timezone", "UTC", "--time-limit", "200ms",
			"--lock", filepath.Join(dir, "l"), "--log", filepath.Join(dir, "a.jsonl"))
		if code != exitOK {
			t.Fatalf("seed %d: exit %d: %s", seed, code, errs)
		}
		var starts []pbstest.Start
		for _, c := range pbstest.QrunCalls(t, callsFile) {
			f := strings.Fields(c)
			if len(f) != 4 || f[1] != "-H" {
				t.Fatalf("seed %d: qrun called as %q", seed, c)
			}
			starts = append(starts, pbstest.Start{Job: f[3], ExecVnode: f[2]})
		}
		calls += len(starts)
		rc.Verify(t, seed, starts)
	}
	if calls < 20 {
		t.Errorf("only %d qrun calls on 30 random clusters", calls)
	}
}

// verifyStarts turns a plan's starts into what pbstest.Verify reads.
func verifyStarts(ds []pbsched.StartDoc) []pbstest.Start {
	out := make([]pbstest.Start, len(ds))
	for i, d := range ds {
		out[i] = pbstest.Start{Job: d.Job, ExecVnode: d.ExecVnode, Whole: d.Path == pbsched.PathWhole}
	}
	return out
}
