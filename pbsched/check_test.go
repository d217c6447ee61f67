package pbsched

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
)

// TestPBSCheckPlanCatchesUnsafePlans tampers with a valid plan: each
// change must be refused before any qrun.
func TestPBSCheckPlanCatchesUnsafePlans(t *testing.T) {
	fresh := func() (*Plan, *State) {
		st, sc := fixtureState(t)
		p, err := Decide(context.Background(), st, sc, testPlan())
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(st, sc, p); err != nil {
			t.Fatalf("valid plan refused: %v", err)
		}
		return p, st
	}
	start := func(p *Plan, job string) *Start {
		for _, s := range p.Starts {
			if s.Job == job {
				return s
			}
		}
		t.Fatalf("no start for %s", job)
		return nil
	}
	cases := []struct {
		name string
		edit func(p *Plan)
		want string
	}{
		{"down vnode", func(p *Plan) { start(p, "103.pbs01").Chunks[0].Vnode = "n006" }, "vnode n006 is down, not free"},
		{"offline vnode", func(p *Plan) { start(p, "103.pbs01").Chunks[0].Vnode = "n007" }, "vnode n007 is offline"},
		{"busy vnode", func(p *Plan) { start(p, "103.pbs01").Chunks[0].Vnode = "n015" }, "vnode n015 is job-busy"},
		{"unknown vnode", func(p *Plan) { start(p, "103.pbs01").Chunks[0].Vnode = "zz9" }, "not in pbsnodes"},
		{"twice", func(p *Plan) { p.Starts = append(p.Starts, start(p, "103.pbs01")) }, "started twice"},
		{"held job", func(p *Plan) {
			s := *start(p, "103.pbs01")
			s.Job = "105.pbs01"
			p.Starts = append(p.Starts, &s)
		}, "state H"},
		{"routing queue", func(p *Plan) {
			s := *start(p, "103.pbs01")
			s.Job = "104.pbs01"
			p.Starts = append(p.Starts, &s)
		}, "not a started execution queue"},
		{"too many cpus", func(p *Plan) {
			s := *start(p, "103.pbs01")
			s.Job = "112.pbs01" // a queued job; its queue is stopped too
			s.Chunks = []VChunk{{Vnode: "n005", Amounts: model.Resources{"ncpus": 1}}}
			p.Starts = append(p.Starts, &s)
			start(p, "103.pbs01").Chunks[0].Amounts = model.Resources{"ncpus": 60, "mem": 16 << 30}
		}, "the select asks 8"},
		{"over capacity", func(p *Plan) {
			// Move the GPU job onto n010 twice over with another GPU chunk.
			s := start(p, "106.pbs01")
			s.Chunks[1].Vnode = "n005"
		}, "vnode n005: ngpus"},
		{"whole vnode shared", func(p *Plan) {
			w := start(p, "101.pbs01")
			start(p, "103.pbs01").Chunks[0].Vnode = w.Chunks[0].Vnode
		}, "held whole by job 101.pbs01"},
		{"whole-node start off the checked allocation", func(p *Plan) {
			start(p, "102.pbs01").Chunks[0].Vnode = "n010"
		}, "not the checked allocation"},
		{"missing chunk", func(p *Plan) { s := start(p, "106.pbs01"); s.Chunks = s.Chunks[:1] }, "1 vnode chunks for 2 select units"},
	}
	for _, c := range cases {
		p, st := fresh()
		_, sc := fixtureState(t)
		c.edit(p)
		err := Check(st, sc, p)
		rule := map[string]string{"vnode n006 is down, not free": "vnode", "vnode n007 is offline": "vnode", "vnode n015 is job-busy": "vnode",
			"not in pbsnodes": "vnode", "started twice": "job", "state H": "job", "not a started execution queue": "job",
			"the select asks 8": "chunks", "vnode n005: ngpus": "capacity", "held whole by job 101.pbs01": "whole",
			"not the checked allocation": "window", "1 vnode chunks for 2 select units": "chunks"}[c.want]
		if err == nil || !errors.Is(err, ErrUnsafePlan) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), rule+": ") {
			t.Errorf("%s: checkPlan = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestDecideAfterItsDeadline: a cycle whose reading took its whole time
// limit (a loaded machine) still considers the head of the queue, and
// starts what it would start with time to spare, checked as any plan.
func TestDecideAfterItsDeadline(t *testing.T) {
	st, sc := fixtureState(t)
	relaxed, err := Decide(context.Background(), st, sc, testPlan())
	if err != nil {
		t.Fatal(err)
	}
	late := testPlan()
	late.Start = time.Now().Add(-time.Minute) // the deadline passed long ago
	p, err := Decide(context.Background(), st, sc, late)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(st, sc, p); err != nil {
		t.Fatalf("late plan refused: %v", err)
	}
	if len(relaxed.Starts) == 0 || len(p.Starts) == 0 {
		t.Errorf("starts: %d with time, %d after the deadline", len(relaxed.Starts), len(p.Starts))
	}
}
