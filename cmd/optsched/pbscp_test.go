package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/solver"
)

// TestPBSPartialCPFixture: with --partial cp (the default) the fixture's
// partial-node jobs are scheduled by sat, every qrun names only free
// vnodes, and the cycle's independent checkPlan passes (cycle runs it).
func TestPBSPartialCPFixture(t *testing.T) {
	o := fixtureOptions(t)
	o.partial = partialCP
	p, st, err := o.cycle(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkPlan(st, &pbsScope{levels: o.levels, period: 60}, p); err != nil {
		t.Fatal(err)
	}
	states := fixtureNodeStates(t)
	got := map[string]*pbsStart{}
	for _, s := range p.Starts {
		got[s.Job] = s
		for _, v := range s.Nodes() {
			if s := states[v]; s != "free" && s != "free+jobs" {
				t.Errorf("job %s named vnode %s, which is %s", s, v, s)
			}
		}
	}
	for _, j := range []string{"101.pbs01", "102.pbs01", "103.pbs01", "106.pbs01"} {
		if got[j] == nil {
			t.Errorf("job %s does not start", j)
		}
	}
	for _, j := range []string{"103.pbs01", "106.pbs01"} {
		if s := got[j]; s != nil && (s.Path != pathPartial || s.Placement != "sat") {
			t.Errorf("job %s: path %s placed by %s, want partial-node by sat", j, s.Path, s.Placement)
		}
	}
	if p.CP == nil || p.CP.Jobs != 2 || p.CPWindow == nil {
		t.Fatalf("cp doc %+v", p.CP)
	}
	if err := model.Check(p.CPWindow, p.CPAllocs); err != nil {
		t.Errorf("cp schedule after compaction: %v", err)
	}
	// 103 goes to the partly used n005, keeping idle vnodes whole.
	if s := got["103.pbs01"]; s != nil && s.ExecVnode() != "(n005:mem=16gb:ncpus=8)" {
		t.Errorf("103 placed %s", s.ExecVnode())
	}
}

// backfillCluster: one vnode of 64 CPUs, 48 of them used by running job
// 9.s until now + 1 h; A (32 CPUs, 1 h) is first in the queue, B (16
// CPUs, 1 h) second. By hand: the first fit cannot start A (16 CPUs free)
// and stops there, so nothing starts; the cp schedule starts B now in the
// 16 free CPUs and A at now + 3600 when 9.s and B end, total queue time
// 3600 s, and A starts no later than it could have anyway.
func backfillCluster(t *testing.T) *cluster {
	return smallCluster(t,
		`"v0":{"state":"free","jobs":["9.s"],"resources_available":{"ncpus":64,"mem":"256gb"},"resources_assigned":{"ncpus":48}}`,
		`"9.s":{"job_state":"R","queue":"workq","exec_vnode":"(v0:ncpus=48)","stime":"Tue Nov 14 22:13:20 2023","Resource_List":{"select":"1:ncpus=48","walltime":"01:00:00"}},`+
			queued("A.s", "1:ncpus=32", "free")+","+queued("B.s", "1:ncpus=16", "free"))
}

func TestPBSPartialCPBeatsFirstFit(t *testing.T) {
	starts := map[string][]string{}
	for _, mode := range []string{partialFirstFit, partialCP} {
		c := backfillCluster(t)
		p, err := plan(context.Background(), c, planOptions{timeLimit: 2 * time.Second, partial: mode})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if err := checkPlan(c.st, c.scope, p); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, s := range p.Starts {
			starts[mode] = append(starts[mode], s.Job+" "+s.ExecVnode())
		}
		if mode == partialCP {
			if p.CP == nil || p.CP.Objective == nil || *p.CP.Objective != 3600 {
				t.Errorf("cp objective %+v, want 3600", p.CP)
			}
			found := false
			for _, d := range p.Deferred {
				found = found || d.Job == "A.s" && strings.Contains(d.Reason, "planned start 2023-11-14T23:13:20Z")
			}
			if !found {
				t.Errorf("A.s not deferred with its planned start: %v", p.Deferred)
			}
		}
	}
	if len(starts[partialFirstFit]) != 0 {
		t.Errorf("first fit started %v, want nothing", starts[partialFirstFit])
	}
	if want := []string{"B.s (v0:ncpus=16)"}; strings.Join(starts[partialCP], ";") != strings.Join(want, ";") {
		t.Errorf("cp started %v, want %v", starts[partialCP], want)
	}
}

// brokenScheduler fails (err) or finds nothing.
type brokenScheduler struct{ err bool }

func (brokenScheduler) Name() string { return "broken-cp" }
func (b brokenScheduler) Schedule(context.Context, *model.Window, solver.ScheduleOptions) (*solver.Schedule, error) {
	if b.err {
		return nil, errors.New("broken on purpose")
	}
	return &solver.Schedule{Status: solver.Unknown}, nil
}

// TestPBSPartialCPFallsBackToFirstFit: when every partial-node scheduler
// fails, the first fit places the jobs and the plan says so.
func TestPBSPartialCPFallsBackToFirstFit(t *testing.T) {
	o := fixtureOptions(t)
	o.partial = partialCP
	o.newSchedulers = func() []solver.Scheduler { return []solver.Scheduler{brokenScheduler{err: true}, brokenScheduler{}} }
	p, _, err := o.cycle(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range p.Starts {
		if s.Path == pathPartial {
			n++
			if s.Placement != "first-fit" {
				t.Errorf("%s placed by %s after the schedulers failed", s.Job, s.Placement)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d partial-node starts after the fallback, want 2", n)
	}
	note := strings.Join(p.Notes, "\n")
	if !strings.Contains(note, "broken on purpose") || !strings.Contains(note, "first fit placed") {
		t.Errorf("notes %q", note)
	}
	// One scheduler failing and the next answering uses the next.
	o = fixtureOptions(t)
	o.partial = partialCP
	o.newSchedulers = func() []solver.Scheduler {
		return []solver.Scheduler{brokenScheduler{err: true}, defaultCPSchedulers()[1]}
	}
	p, _, err = o.cycle(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	if p.CP == nil || p.CP.Solver != "pbs-fifo" || !strings.Contains(p.CP.Fallback, "broken on purpose") {
		t.Errorf("cp doc %+v", p.CP)
	}
}

var _ = pbs.Vnodes
