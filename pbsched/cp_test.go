package pbsched

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/solver"
)

// TestPBSPartialCPFixture: with --partial cp (the default) the fixture's
// partial-node jobs are scheduled by sat, every qrun names only free
// vnodes, and the cycle's independent Check passes (cycle runs it).
func TestPBSPartialCPFixture(t *testing.T) {
	st, sc := fixtureState(t)
	opt := testPlan()
	opt.Partial = PartialCP
	p, err := Decide(context.Background(), st, sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(st, sc, p); err != nil {
		t.Fatal(err)
	}
	// Check (above) holds every named vnode to state free.
	got := map[string]*Start{}
	for _, s := range p.Starts {
		got[s.Job] = s
	}
	for _, j := range []string{"101.pbs01", "102.pbs01", "103.pbs01", "106.pbs01"} {
		if got[j] == nil {
			t.Errorf("job %s does not start", j)
		}
	}
	for _, j := range []string{"103.pbs01", "106.pbs01"} {
		if s := got[j]; s != nil && (s.Path != PathPartial || s.Placement != "sat") {
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

// The first fit is pinned under the paper's selection (lan2023), which
// stops at A; the default selection backfills B there too (it ends by A's
// reservation at now + 1 h, when 9.s ends).
func TestPBSPartialCPBeatsFirstFit(t *testing.T) {
	starts := map[string][]string{}
	for _, mode := range []string{PartialFirstFit, PartialCP, "first-fit backfill"} {
		c := backfillCluster(t)
		opt := testPlan()
		opt.TimeLimit, opt.Partial, opt.Selection = 2*time.Second, mode, SelectionLan2023
		if mode == "first-fit backfill" {
			opt.Partial, opt.Selection = PartialFirstFit, SelectionBackfill
		}
		p, err := plan(context.Background(), c, opt)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, s := range p.Starts {
			starts[mode] = append(starts[mode], s.Job+" "+s.ExecVnode())
		}
		if mode == PartialCP {
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
	if want := "B.s (v0:ncpus=16)"; strings.Join(starts["first-fit backfill"], ";") != want {
		t.Errorf("first fit with backfilling started %v, want %v", starts["first-fit backfill"], want)
	}
	if len(starts[PartialFirstFit]) != 0 {
		t.Errorf("first fit started %v, want nothing", starts[PartialFirstFit])
	}
	if want := []string{"B.s (v0:ncpus=16)"}; strings.Join(starts[PartialCP], ";") != strings.Join(want, ";") {
		t.Errorf("cp started %v, want %v", starts[PartialCP], want)
	}
}

// brokenScheduler fails (err) or finds nothing.
type brokenScheduler struct{ err bool }

func (brokenScheduler) Name() string { return "broken-cp" }
func (b brokenScheduler) Solve(context.Context, *solver.ScheduleProblem) (*solver.Schedule, error) {
	if b.err {
		return nil, errors.New("broken on purpose")
	}
	return &solver.Schedule{Status: solver.Unknown}, nil
}

// TestPBSPartialCPFallsBackToFirstFit: when every partial-node scheduler
// fails, the first fit places the jobs and the plan says so.
func TestPBSPartialCPFallsBackToFirstFit(t *testing.T) {
	st, sc := fixtureState(t)
	opt := testPlan()
	opt.Partial = PartialCP
	opt.Schedulers = []solver.Scheduler{brokenScheduler{err: true}, brokenScheduler{}}
	p, err := Decide(context.Background(), st, sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range p.Starts {
		if s.Path == PathPartial {
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
	opt.Schedulers = []solver.Scheduler{brokenScheduler{err: true}, catalog.PartialSchedulers()[1]}
	p, err = Decide(context.Background(), st, sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	if p.CP == nil || p.CP.Solver != "pbs-fifo" || !strings.Contains(p.CP.Fallback, "broken on purpose") {
		t.Errorf("cp doc %+v", p.CP)
	}
}

var _ = pbs.Vnodes

// TestPBSPartialCPKeepsQueueOrder: with --partial cp, a whole-node job
// does not overtake older partial-node jobs that fit now, and a job that
// waits is told the true reason.
func TestPBSPartialCPKeepsQueueOrder(t *testing.T) {
	job := func(id, qtime, sel, place, wall string) string {
		return fmt.Sprintf(`"%s":{"job_state":"Q","queue":"workq","qtime":"%s","Resource_List":{"select":"%s","place":"%s","walltime":"%s"}}`, id, qtime, sel, place, wall)
	}
	const older, newer = "Tue Nov 14 20:00:00 2023", "Tue Nov 14 22:00:00 2023"
	for _, c := range []struct {
		name        string
		jobs        []string
		start, wait []string
		why         string
	}{
		{"older 4-CPU job before a newer exclusive one",
			[]string{job("1.s", older, "1:ncpus=4", "free", "01:00:00"), job("2.s", newer, "2:ncpus=64", "excl", "10:00:00")},
			[]string{"1.s"}, []string{"2.s"}, "1 idle vnode left after higher-priority jobs"},
		{"many older small jobs before a newer exclusive one",
			[]string{job("1.s", older, "1:ncpus=2", "free", "01:00:00"), job("2.s", older, "1:ncpus=2", "free", "01:00:00"),
				job("3.s", older, "1:ncpus=2", "free", "01:00:00"), job("4.s", newer, "2:ncpus=64", "excl", "10:00:00")},
			[]string{"1.s", "2.s", "3.s"}, []string{"4.s"}, "left after higher-priority jobs"},
		{"an older exclusive job before newer small ones",
			[]string{job("1.s", older, "1:ncpus=64", "excl", "01:00:00"), job("2.s", newer, "1:ncpus=2", "free", "01:00:00"),
				job("3.s", newer, "1:ncpus=2", "free", "01:00:00")},
			[]string{"1.s", "2.s", "3.s"}, nil, ""},
		{"an older partial job that does not fit stops a newer exclusive one",
			[]string{job("1.s", older, "2:ncpus=40", "free", "01:00:00"), job("2.s", newer, "1:ncpus=64", "excl", "01:00:00")},
			nil, []string{"1.s", "2.s"}, "queued behind job 1.s, which does not fit now"},
		{"backfill: an older partial job that does not fit lets a newer exclusive one end before it could start",
			[]string{job("1.s", older, "2:ncpus=40", "free", "01:00:00"), job("2.s", newer, "1:ncpus=64", "excl", "01:00:00")},
			[]string{"2.s"}, []string{"1.s"}, ""},
		{"backfill: an older partial job that does not fit holds a newer exclusive one that would end after",
			[]string{job("1.s", older, "2:ncpus=40", "free", "01:00:00"), job("2.s", newer, "1:ncpus=64", "excl", "03:00:00")},
			nil, []string{"1.s", "2.s"}, "would end after the reservation of job 1.s"},
	} {
		nodes, jobs := vnodes(2, "", ""), strings.Join(c.jobs, ",")
		if strings.Contains(c.name, "does not fit") {
			// u0 has 16 of its 64 CPUs left, v0 is idle: two 40-CPU
			// chunks fit the vnodes empty, not now.
			nodes = `"u0":{"state":"free","jobs":["9.s/0"],"resources_available":{"ncpus":64,"mem":"256gb"},"resources_assigned":{"ncpus":48}},` + vnodes(1, "", "")
			jobs += `,"9.s":{"job_state":"R","queue":"workq","exec_vnode":"(u0:ncpus=48)","Resource_List":{"select":"1:ncpus=48","walltime":"02:00:00"}}`
		}
		cl := smallCluster(t, nodes, jobs)
		opt := testPlan()
		opt.Partial = PartialCP
		if !strings.HasPrefix(c.name, "backfill") {
			// Pinned under the paper's selection; the default backfills
			// the "does not fit" case (the two cases that follow).
			opt.Selection = SelectionLan2023
		}
		p, err := plan(context.Background(), cl, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := Check(cl.st, cl.scope, p); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		var started, waiting []string
		for _, s := range p.Starts {
			started = append(started, s.Job)
		}
		reasons := map[string]string{}
		for _, d := range p.Deferred {
			waiting = append(waiting, d.Job)
			reasons[d.Job] = d.Reason
		}
		slices.Sort(started)
		slices.Sort(waiting)
		if !slices.Equal(started, c.start) || !slices.Equal(waiting, c.wait) {
			t.Errorf("%s: started %v, waiting %v (%v); want %v, %v", c.name, started, waiting, reasons, c.start, c.wait)
			continue
		}
		if c.why != "" && !strings.Contains(reasons[c.wait[len(c.wait)-1]], c.why) {
			t.Errorf("%s: reason %q, want it to say %q", c.name, reasons[c.wait[len(c.wait)-1]], c.why)
		}
		for j, r := range reasons {
			if strings.Contains(r, "never fit") {
				t.Errorf("%s: %s deferred as %q", c.name, j, r)
			}
		}
	}
}

// fixtureState reads the PBS 2022-shaped test documents of model/pbs
// (times in UTC) with the scope the command's defaults give.
func fixtureState(t testing.TB) (*State, *Scope) {
	t.Helper()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "model", "pbs", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	js, err := pbs.ParseJobs(read("qstat.json"), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := pbs.ParseNodes(read("pbsnodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := pbs.ParseQueues(read("queues.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &State{Jobs: js, Nodes: ns, Queues: qs, Now: js.Timestamp, Digest: "fixture"}, &Scope{Levels: []string{"tier0", "tier1"}, Period: 60}
}
