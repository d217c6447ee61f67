package sched

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// twoNodes is a small view: n1 half used, n2 idle, n3 down, n4 not the
// scope's, all in pool p, n5 in pool q; job a needs 2 chunks of 2 CPUs,
// b one whole node, c is blocked, d may not run on n2, e has a defect, h
// needs one CPU.
func twoNodes() *View {
	cap8 := func() Resources { return Resources{"cpus": 8, "mem": 100} }
	return &View{
		Nodes: []Node{
			{Name: "n1", Capacity: cap8(), InUse: Resources{"cpus": 4, "mem": 50}, Busy: true, Pools: []string{"p"}},
			{Name: "n2", Capacity: cap8(), InUse: Resources{}, Pools: []string{"p"}},
			{Name: "n3", Capacity: cap8(), Down: "down", Pools: []string{"p"}},
			{Name: "n4", Capacity: cap8(), Foreign: true, Pools: []string{"p"}},
			{Name: "n5", Capacity: cap8(), Pools: []string{"q"}},
		},
		Jobs: []Job{
			{ID: "a", Chunks: []Resources{{"cpus": 2, "mem": 10}, {"cpus": 2, "mem": 10}}, Pool: "p"},
			{ID: "b", Chunks: []Resources{{"cpus": 1}}, Whole: true, Pool: "p"},
			{ID: "c", Chunks: []Resources{{"cpus": 1}}, Blocked: "held", Pool: "p"},
			{ID: "d", Chunks: []Resources{{"cpus": 1}}, Pool: "p", Excluded: map[string]bool{"n2": true}},
			{ID: "e", Chunks: []Resources{{"cpus": 5}}, Pool: "p", Defect: "bad list"},
			{ID: "h", Chunks: []Resources{{"cpus": 1}}, Pool: "p"},
		},
	}
}

func kinds(vs []Violation) []Kind {
	out := make([]Kind, len(vs))
	for i, v := range vs {
		out[i] = v.Kind
	}
	return out
}

// TestCheckRules: each rule, alone, on a start that breaks only it.
func TestCheckRules(t *testing.T) {
	for _, c := range []struct {
		name   string
		starts []Start
		want   []Kind
	}{
		{"fits", []Start{{Job: "a", Nodes: []string{"n1", "n2"}}, {Job: "d", Nodes: []string{"n1"}}}, nil},
		{"no job", []Start{{Job: "x", Nodes: []string{"n2"}}}, []Kind{NoJob}},
		{"twice", []Start{{Job: "d", Nodes: []string{"n1"}}, {Job: "d", Nodes: []string{"n1"}}}, []Kind{Twice}},
		{"blocked", []Start{{Job: "c", Nodes: []string{"n2"}}}, []Kind{Blocked}},
		{"chunk count", []Start{{Job: "a", Nodes: []string{"n2"}}}, []Kind{ChunkCount}},
		{"start defect", []Start{{Job: "d", Nodes: []string{"n1"}, Defect: "spec"}}, []Kind{StartDefect}},
		{"job defect", []Start{{Job: "e", Nodes: []string{"n2"}}}, []Kind{JobDefect}},
		{"no node", []Start{{Job: "d", Nodes: []string{"n9"}}}, []Kind{NoNode}},
		{"node twice", []Start{{Job: "a", Nodes: []string{"n2", "n2"}}}, []Kind{NodeTwice}},
		{"foreign", []Start{{Job: "d", Nodes: []string{"n4"}}}, []Kind{Foreign}},
		{"pool", []Start{{Job: "d", Nodes: []string{"n5"}}}, []Kind{NotInPool}},
		{"excluded", []Start{{Job: "d", Nodes: []string{"n2"}}}, []Kind{Excluded}},
		{"down", []Start{{Job: "d", Nodes: []string{"n3"}}}, []Kind{Down}},
		{"whole on busy", []Start{{Job: "b", Nodes: []string{"n1"}}}, []Kind{Over, Over, NotWhole}},
		{"whole then shared", []Start{{Job: "b", Nodes: []string{"n2"}}, {Job: "h", Nodes: []string{"n2"}}}, []Kind{Over, NotWhole}},
		// A job started twice is reported once, its second start not
		// counted.
		{"twice, not counted", []Start{{Job: "a", Nodes: []string{"n1", "n2"}}, {Job: "a", Nodes: []string{"n1", "n2"}}}, []Kind{Twice}},
	} {
		got := kinds(Check(twoNodes(), Plan{Starts: c.starts}))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: violations %v, want %v", c.name, got, c.want)
		}
	}
	// The amounts of an excess, and the start it arises at.
	v := twoNodes()
	v.Jobs = append(v.Jobs, Job{ID: "f", Chunks: []Resources{{"cpus": 3}}, Pool: "p"}, Job{ID: "g", Chunks: []Resources{{"cpus": 2, "mem": 60}}, Pool: "p"})
	got := Check(v, Plan{Starts: []Start{{Job: "f", Nodes: []string{"n1"}}, {Job: "g", Nodes: []string{"n1"}}}})
	want := []Violation{{Kind: Over, Job: "g", Node: "n1", Resource: "cpus", Got: 9, Want: 8}, {Kind: Over, Job: "g", Node: "n1", Resource: "mem", Got: 110, Want: 100}}
	if !slices.Equal(got, want) {
		t.Errorf("excess: %+v, want %+v", got, want)
	}
}

// TestInFlight: an allocation in flight counts as a start made.
func TestInFlight(t *testing.T) {
	v := twoNodes()
	v.InFlight = []Alloc{{Job: "z", Node: "n2", Whole: true}, {Job: "y", Node: "gone", Amounts: Resources{"cpus": 99}}}
	if got := kinds(Check(v, Plan{Starts: []Start{{Job: "d", Nodes: []string{"n2"}}}})); !slices.Equal(got, []Kind{Excluded, Over, NotWhole}) {
		t.Errorf("start beside a whole node in flight: %v", got)
	}
	v.InFlight = []Alloc{{Job: "z", Node: "n1", Amounts: Resources{"cpus": 3}}}
	if got := kinds(Check(v, Plan{Starts: []Start{{Job: "a", Nodes: []string{"n1", "n2"}}}})); !slices.Equal(got, []Kind{Over}) {
		t.Errorf("start over a partial allocation in flight: %v", got)
	}
}

// TestCheckAgainstSums draws random views and plans and compares Check's
// capacity verdict with a plain sum over the whole plan: a plan of
// distinct jobs on up nodes passes exactly when no node's in-use plus
// the planned amounts exceeds its capacity (whole nodes aside).
func TestCheckAgainstSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		v := &View{}
		for i := range 1 + rng.IntN(4) {
			capc := int64(1 + rng.IntN(8))
			v.Nodes = append(v.Nodes, Node{Name: string(rune('a' + i)), Capacity: Resources{"cpus": capc}, InUse: Resources{"cpus": rng.Int64N(capc + 1)}, AnyPool: true})
		}
		var p Plan
		sum := map[string]int64{}
		for j := range 1 + rng.IntN(4) {
			id := string(rune('A' + j))
			k := 1 + rng.IntN(len(v.Nodes))
			perm := rng.Perm(len(v.Nodes))[:k]
			job := Job{ID: id}
			s := Start{Job: id}
			for _, ni := range perm {
				n := int64(1 + rng.IntN(4))
				job.Chunks = append(job.Chunks, Resources{"cpus": n})
				s.Nodes = append(s.Nodes, v.Nodes[ni].Name)
				sum[v.Nodes[ni].Name] += n
			}
			v.Jobs = append(v.Jobs, job)
			p.Starts = append(p.Starts, s)
		}
		fits := true
		for _, n := range v.Nodes {
			fits = fits && n.InUse["cpus"]+sum[n.Name] <= n.Capacity["cpus"]
		}
		vs := Check(v, p)
		if (len(vs) == 0) != fits {
			t.Fatalf("trial %d: Check %+v, sums say fits=%v", trial, vs, fits)
		}
		for _, x := range vs {
			if x.Kind != Over {
				t.Fatalf("trial %d: unexpected violation %+v", trial, x)
			}
		}
		// Recheck keeps a prefix-closed subset that Check accepts.
		kept, dropped := Recheck(v, p)
		if len(kept.Starts)+len(dropped) != len(p.Starts) || len(Check(v, kept)) != 0 || fits != (len(dropped) == 0) {
			t.Fatalf("trial %d: Recheck kept %d, dropped %d of %d (fits %v)", trial, len(kept.Starts), len(dropped), len(p.Starts), fits)
		}
	}
}

// TestRecheckDropsInOrder: a start that no longer fits is dropped, the
// ones after it are judged without it.
func TestRecheckDropsInOrder(t *testing.T) {
	v := twoNodes()
	v.Jobs = append(v.Jobs, Job{ID: "f", Chunks: []Resources{{"cpus": 4}}, Pool: "p"}, Job{ID: "g", Chunks: []Resources{{"cpus": 4}}, Pool: "p"})
	p := Plan{Starts: []Start{{Job: "f", Nodes: []string{"n1"}}, {Job: "c", Nodes: []string{"n2"}}, {Job: "g", Nodes: []string{"n1"}}, {Job: "g", Nodes: []string{"n2"}}}}
	kept, dropped := Recheck(v, p)
	if want := []Start{p.Starts[0], p.Starts[3]}; !slices.EqualFunc(kept.Starts, want, func(a, b Start) bool { return a.Job == b.Job && slices.Equal(a.Nodes, b.Nodes) }) {
		t.Errorf("kept %+v", kept.Starts)
	}
	if len(dropped) != 2 || dropped[0].Index != 1 || dropped[1].Index != 2 || dropped[1].Violations[0].Kind != Over {
		t.Errorf("dropped %+v", dropped)
	}
}

// fakeRunner fails the jobs in fail, records what it ran and commits
// when it is a committer.
type fakeRunner struct {
	fail      map[string]bool
	ran       []string
	committed []string
	commitErr error
	cancel    func()
}

func (f *fakeRunner) Start(_ context.Context, s Start) Result {
	f.ran = append(f.ran, s.Job)
	if f.cancel != nil && len(f.ran) == 2 {
		f.cancel()
	}
	if f.fail[s.Job] {
		return Result{Code: 1, Err: errors.New("no")}
	}
	return Result{Args: []string{s.Spec}}
}

type fakeCommitter struct{ *fakeRunner }

func (f fakeCommitter) Commit(_ context.Context, starts []Start) error {
	for _, s := range starts {
		f.committed = append(f.committed, s.Job)
	}
	return f.commitErr
}

func threeStarts() Plan {
	return Plan{Starts: []Start{{Job: "a", Spec: "sa"}, {Job: "b", Spec: "sb"}, {Job: "c", Spec: "sc"}}}
}

func TestApply(t *testing.T) {
	f := &fakeRunner{fail: map[string]bool{"b": true}}
	o := Apply(context.Background(), threeStarts(), f)
	if !slices.Equal(f.ran, []string{"a", "b", "c"}) || o.Staged != 0 || o.CommitErr != nil {
		t.Fatalf("ran %v, outcome %+v", f.ran, o)
	}
	if r := o.Results; !r[0].Ran || r[0].Err != nil || r[1].Err == nil || r[1].Code != 1 || r[2].Args[0] != "sc" || r[0].Committed {
		t.Errorf("results %+v", r)
	}
	// A committer commits the starts that succeeded, in one call.
	f = &fakeRunner{fail: map[string]bool{"b": true}}
	o = Apply(context.Background(), threeStarts(), fakeCommitter{f})
	if !slices.Equal(f.committed, []string{"a", "c"}) || o.Staged != 2 || !o.Results[0].Committed || o.Results[1].Committed || !o.Results[2].Committed {
		t.Errorf("committed %v, outcome %+v", f.committed, o)
	}
	f = &fakeRunner{commitErr: errors.New("release failed")}
	if o = Apply(context.Background(), threeStarts(), fakeCommitter{f}); o.CommitErr == nil || o.Results[0].Committed {
		t.Errorf("failed commit: %+v", o)
	}
}

// TestApplyContextEnds: once the context ends, no start runs and nothing
// is committed; the cause is each start's error.
func TestApplyContextEnds(t *testing.T) {
	cause := errors.New("signal")
	ctx, cancel := context.WithCancelCause(context.Background())
	f := &fakeRunner{cancel: func() { cancel(cause) }}
	o := Apply(ctx, threeStarts(), fakeCommitter{f})
	if !slices.Equal(f.ran, []string{"a", "b"}) || len(f.committed) != 0 {
		t.Fatalf("ran %v, committed %v", f.ran, f.committed)
	}
	if r := o.Results[2]; r.Ran || !errors.Is(r.Err, cause) || !errors.Is(o.CommitErr, cause) || o.Staged != 2 {
		t.Errorf("outcome %+v", o)
	}
}
