package pbsched

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model/pbs"
)

// TestRecheck: the plan is checked again on a state read just before
// qrun; the starts it no longer allows are dropped with the reason, the
// others stay.
func TestRecheck(t *testing.T) {
	jobs := queued("1.s", "1:ncpus=40", "free") + "," + queued("2.s", "1:ncpus=40", "free") + "," + queued("3.s", "1:ncpus=40", "free")
	cl := smallCluster(t, vnodes(3, "", ""), jobs)
	opt := testPlan()
	opt.Partial = PartialFirstFit
	fresh := func(nodes, jobs string) *State {
		ns, err := pbs.ParseNodes([]byte(`{"timestamp":1700000001,"nodes":{` + nodes + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		js, err := pbs.ParseJobs([]byte(`{"timestamp":1700000001,"Jobs":{`+jobs+`}}`), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return &State{Jobs: js, Nodes: ns, Queues: cl.st.Queues, Now: 1700000001}
	}
	for _, c := range []struct {
		name        string
		nodes, jobs string
		keep        int
		why         string
	}{
		{"unchanged", vnodes(3, "", ""), jobs, 3, ""},
		{"a job deleted", vnodes(3, "", ""), queued("1.s", "1:ncpus=40", "free") + "," + queued("3.s", "1:ncpus=40", "free"), 2, "no longer queued"},
		{"a vnode offline", strings.Replace(vnodes(3, "", ""), `"v1":{"state":"free"`, `"v1":{"state":"offline"`, 1), jobs, 2, "no longer free"},
		{"a vnode filled meanwhile", strings.Replace(vnodes(3, "", ""), `"v2":{"state":"free",`, `"v2":{"state":"free","resources_assigned":{"ncpus":60},`, 1), jobs, 2, "capacity: vnode v2"},
	} {
		p, err := plan(context.Background(), cl, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Starts) != 3 {
			t.Fatalf("%s: planned %v", c.name, describeStarts(p.Starts))
		}
		Recheck(fresh(c.nodes, c.jobs), cl.scope, p)
		if len(p.Starts) != c.keep {
			t.Errorf("%s: kept %v", c.name, describeStarts(p.Starts))
		}
		if c.why != "" && (len(p.Deferred) == 0 || !strings.Contains(p.Deferred[len(p.Deferred)-1].Reason, c.why)) {
			t.Errorf("%s: deferred %+v, want a reason with %q", c.name, p.Deferred, c.why)
		}
	}
}

// TestSummaryCountsWhatRan: after an aborted apply the summary counts the
// starts that ran, failed and were not run apart.
func TestSummaryCountsWhatRan(t *testing.T) {
	cl := smallCluster(t, vnodes(3, "", ""), queued("1.s", "1:ncpus=4", "free")+","+queued("2.s", "1:ncpus=4", "free")+","+queued("3.s", "1:ncpus=4", "free"))
	p, err := plan(context.Background(), cl, testPlan())
	if err != nil || len(p.Starts) != 3 {
		t.Fatalf("%v %v", err, describeStarts(p.Starts))
	}
	o := &Outcome{Starts: make([]StartOutcome, len(p.Starts))}
	o.Starts[0].Applied, o.Starts[0].ExitCode = true, -1
	got := p.Summary(true, o)
	if !strings.Contains(got, "started 0 jobs, qrun failed for 1, 2 not run") {
		t.Errorf("summary %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Apply(ctx, p, &fakeRunner{}); err == nil || strings.Contains(err.Error(), "qrun failed") || !strings.Contains(err.Error(), "3 of 3 starts not run") {
		t.Errorf("apply after cancel: %v", err)
	}
}
