package pbsched

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/heuristics"
)

// quadCluster: 16 vnodes of 4 CPUs, tier0 = pairs, tier1 = quads (the
// test server's tree). now = 22:13:20. Running, whole-node: R1 on v2, v3
// (quad 0) until now + 30 s unless r1Done; R2 on v5–v7, R3 on v8–v10, R4
// on v12–v14, until now + 10 min. Idle: v0, v1, v4, v11, v15 (and v2, v3
// when r1Done). Queued: J, 4 vnodes, 200 s, submitted waited seconds
// ago; behind it (sjf: longer), S (1 vnode, 1 h) and B (2 vnodes, 1 h).
func quadCluster(t *testing.T, waited int, r1Done bool) *cluster {
	t.Helper()
	const now = 1700000000
	at := func(s int64) string { return time.Unix(s, 0).UTC().Format("Mon Jan _2 15:04:05 2006") }
	busy := map[int]string{5: "R2", 6: "R2", 7: "R2", 8: "R3", 9: "R3", 10: "R3", 12: "R4", 13: "R4", 14: "R4"}
	if !r1Done {
		busy[2], busy[3] = "R1", "R1"
	}
	var nodes []string
	for i := range 16 {
		st, extra := "free", ""
		if j := busy[i]; j != "" {
			st, extra = "job-exclusive", fmt.Sprintf(`,"jobs":["%s.s/0"],"resources_assigned":{"ncpus":4}`, j)
		}
		nodes = append(nodes, fmt.Sprintf(`"v%d":{"state":"%s"%s,"resources_available":{"ncpus":4,"tier0":"p%d","tier1":"q%d"}}`, i, st, extra, i/2, i/4))
	}
	run := func(id string, vs []int, wall string) string {
		var ev []string
		for _, v := range vs {
			ev = append(ev, fmt.Sprintf("(v%d:ncpus=4)", v))
		}
		return fmt.Sprintf(`"%s.s":{"job_state":"R","queue":"workq","stime":"%s","exec_vnode":"%s","Resource_List":{"select":"%d:ncpus=4","place":"excl","walltime":"%s"}}`,
			id, at(now-10), strings.Join(ev, "+"), len(vs), wall)
	}
	queued := func(id string, n int, wall string, ago int) string {
		return fmt.Sprintf(`"%s.s":{"job_state":"Q","queue":"workq","qtime":"%s","Resource_List":{"select":"%d:ncpus=4","place":"excl","walltime":"%s"}}`, id, at(now-int64(ago)), n, wall)
	}
	jobs := []string{run("R2", []int{5, 6, 7}, "00:10:10"), run("R3", []int{8, 9, 10}, "00:10:10"), run("R4", []int{12, 13, 14}, "00:10:10")}
	if !r1Done {
		jobs = append(jobs, run("R1", []int{2, 3}, "00:00:40"))
	}
	jobs = append(jobs, queued("J", 4, "00:03:20", waited), queued("S", 1, "01:00:00", 1), queued("B", 2, "01:00:00", 1))
	return smallCluster(t, strings.Join(nodes, ","), strings.Join(jobs, ","))
}

func compactPlan() Options {
	o := testPlan()
	o.CompactWait = heuristics.CompactWait{Max: time.Hour, Fraction: 0.5} // J's bound: 100 s
	return o
}

func startOf(p *Plan, job string) *Start {
	for _, s := range p.Starts {
		if s.Job == job {
			return s
		}
	}
	return nil
}

// TestPBSCompactWaitHoldsQuad: a 4-vnode job that fits now only across
// quads waits for quad 0, which empties in 30 s, within its bound; the
// idle vnodes of quad 0 are not given to the jobs behind it, which start
// elsewhere; Check accepts the plan and rejects one that gives a vnode of
// the quad to a job behind it. Once R1 has ended, the job starts inside
// quad 0; past its bound, it is spread; with the rule off, it is spread
// at once.
func TestPBSCompactWaitHoldsQuad(t *testing.T) {
	c := quadCluster(t, 5, false)
	p, err := plan(context.Background(), c, compactPlan())
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c.st, c.scope, p); err != nil {
		t.Fatal(err)
	}
	started, reasons := startedAndReasons(p)
	if !slices.Equal(started, []string{"B.s", "S.s"}) {
		t.Fatalf("started %v, want B.s and S.s (deferred %v)", started, reasons)
	}
	if r := reasons["J.s"]; !strings.Contains(r, "waiting up to 1m35s more") || !strings.Contains(r, "for a one-switch placement") || !strings.Contains(r, "reserved from 2023-11-14T22:13:50Z") {
		t.Errorf("J.s: %q", r)
	}
	r := p.Reservation
	if r == nil || r.Job != "J.s" || r.Within != "v0,v1,v2,v3" || r.Start != 1700000030 || r.Vnodes != 4 || r.Extra != 0 || r.Until != "R1.s" {
		t.Fatalf("reservation %+v", r)
	}
	for _, s := range p.Starts {
		for _, v := range s.Nodes() {
			if slices.Contains([]string{"v0", "v1", "v2", "v3"}, v) {
				t.Errorf("%s starts on %s, in the quad J waits for", s.Job, v)
			}
		}
	}
	// A plan that puts S on v0 (1 h, past the shadow; quad 0 has no
	// extra vnode), with a window that lists v0 and v1 as idle and S's
	// allocation there, delays J: rejected by the reservation rule alone.
	bad := *p
	bad.Starts = nil
	for _, s := range p.Starts {
		s2 := *s
		if s.Job == "S.s" {
			s2.Chunks = []VChunk{{Vnode: "v0", Amounts: s.Chunks[0].Amounts}}
		}
		bad.Starts = append(bad.Starts, &s2)
	}
	w := *p.Window
	v0, _ := w.Topology.Lookup("v0")
	v1, _ := w.Topology.Lookup("v1")
	w.Idle = append(slices.Clone(w.Idle), v0, v1)
	slices.Sort(w.Idle)
	bad.Window = &w
	bad.Allocs = slices.Clone(p.Allocs)
	for i, a := range bad.Allocs {
		if w.Jobs[a.Job].ID == "S.s" {
			bad.Allocs[i].Nodes = []int{v0}
		}
	}
	err = Check(c.st, c.scope, &bad)
	if !errors.Is(err, ErrUnsafePlan) || !strings.Contains(err.Error(), "reservation: job S.s starts behind reserved job J.s") {
		t.Errorf("Check of a plan giving v0 to S: %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("Check of a plan giving v0 to S: more than the reservation rule objects: %v", err)
	}
	// Without the reservation, the same plan passes: it is the
	// reservation on quad 0 that forbids it.
	bad.Reservation = nil
	if err := Check(c.st, c.scope, &bad); err != nil {
		t.Errorf("Check of the plan without its reservation: %v", err)
	}

	// R1 ended: J starts inside quad 0.
	c = quadCluster(t, 25, true)
	if p, err = plan(context.Background(), c, compactPlan()); err != nil {
		t.Fatal(err)
	}
	if err := Check(c.st, c.scope, p); err != nil {
		t.Fatal(err)
	}
	if s := startOf(p, "J.s"); s == nil || !slices.Equal(s.Nodes(), []string{"v0", "v1", "v2", "v3"}) {
		_, reasons := startedAndReasons(p)
		t.Errorf("after R1: J %+v (deferred %v)", s, reasons)
	}

	// Waited its bound (100 s): spread now.
	for _, opt := range []Options{testPlan(), compactPlan()} {
		waited := 100
		if !opt.CompactWait.On() {
			waited = 5
		}
		c = quadCluster(t, waited, false)
		if p, err = plan(context.Background(), c, opt); err != nil {
			t.Fatal(err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatal(err)
		}
		s := startOf(p, "J.s")
		if s == nil || len(s.Nodes()) != 4 {
			_, reasons := startedAndReasons(p)
			t.Fatalf("rule on %v, waited %d s: J %+v (deferred %v)", opt.CompactWait.On(), waited, s, reasons)
		}
		quads := map[byte]bool{}
		for _, v := range s.Nodes() {
			var i int
			fmt.Sscanf(v, "v%d", &i)
			quads[byte(i/4)] = true
		}
		if len(quads) < 2 || p.Reservation != nil && p.Reservation.Within != "" {
			t.Errorf("rule on %v, waited %d s: J on %v, reservation %+v", opt.CompactWait.On(), waited, s.Nodes(), p.Reservation)
		}
	}
}

// TestPBSCompactWaitRandom: on random clusters, every plan made with the
// rule on (with Elapsed or SwitchNodes on some) passes Check.
func TestPBSCompactWaitRandom(t *testing.T) {
	waits := 0
	for seed := range uint64(200) {
		c := randomClusterView(t, seed)
		opt := Options{TimeLimit: time.Second, Solver: catalog.DefaultWindow(), Fallbacks: catalog.WindowFallbacks(), Schedulers: catalog.PartialSchedulers(), Partial: PartialCP,
			CompactWait: heuristics.CompactWait{Max: 24 * time.Hour, Fraction: 1, MinNodes: 2}}
		// A third of the seeds predict ends from elapsed times, a third
		// wait for switches of 4 vnodes at least.
		switch seed % 3 {
		case 1:
			opt.CompactWait.Elapsed = 1
		case 2:
			opt.CompactWait.SwitchNodes = 4
		}
		// Every other seed holds back every job the rule would
		// (--compact-wait-many).
		opt.CompactWait.Many = seed%2 == 1
		p, err := plan(context.Background(), c, opt)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if p.Reservation != nil && p.Reservation.Within != "" {
			waits++
		}
	}
	if waits == 0 {
		t.Errorf("no plan of 200 held a job for one switch: the test exercises nothing")
	}
}

// TestPBSCompactWaitElapsed: J's bound is 0.1 × 200 s = 20 s since its
// submission 5 s ago; R1's walltime ends in 30 s, past it, so by
// walltimes J is spread. Every running job has run 10 s: with Elapsed 1
// each is predicted to end in 10 s, within the bound, and J waits for
// quad 0; Check accepts both plans.
func TestPBSCompactWaitElapsed(t *testing.T) {
	for _, el := range []float64{0, 1} {
		c := quadCluster(t, 5, false)
		o := testPlan()
		o.CompactWait = heuristics.CompactWait{Max: time.Hour, Fraction: 0.1, Elapsed: el}
		p, err := plan(context.Background(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatalf("elapsed %g: %v", el, err)
		}
		_, reasons := startedAndReasons(p)
		waits := strings.Contains(reasons["J.s"], "for a one-switch placement")
		if waits != (el > 0) || (startOf(p, "J.s") == nil) != (el > 0) {
			t.Errorf("elapsed %g: J waits %v, started %v (%q)", el, waits, startOf(p, "J.s") != nil, reasons["J.s"])
		}
		if el > 0 && (p.Reservation == nil || p.Reservation.Within != "v0,v1,v2,v3") {
			t.Errorf("elapsed %g: reservation %+v", el, p.Reservation)
		}
	}
}

// TestPBSCompactWaitMany: J (4 vnodes) waits for quad 0 and holds its
// idle vnodes v0, v1. B (2 vnodes, MinNodes 2) then fits now only across
// pairs (v4, v11, v15 are idle, each beside a busy one): without Many it
// is spread; with Many it waits too, for pair p2 (v4, v5), and holds v4,
// so S (1 vnode) starts on neither v0, v1 nor v4. Check accepts both
// plans; the reservation stays J's.
func TestPBSCompactWaitMany(t *testing.T) {
	for _, many := range []bool{false, true} {
		c := quadCluster(t, 5, false)
		o := testPlan()
		o.CompactWait = heuristics.CompactWait{Max: time.Hour, Fraction: 0.5, MinNodes: 2, Many: many}
		p, err := plan(context.Background(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatalf("many %v: %v", many, err)
		}
		_, reasons := startedAndReasons(p)
		if startOf(p, "J.s") != nil || p.Reservation == nil || p.Reservation.Job != "J.s" || p.Reservation.Within != "v0,v1,v2,v3" {
			t.Fatalf("many %v: J %v, reservation %+v", many, startOf(p, "J.s"), p.Reservation)
		}
		b := startOf(p, "B.s")
		if many != (b == nil) || many && !strings.Contains(reasons["B.s"], "--compact-wait-many") {
			t.Errorf("many %v: B started %v (%q)", many, b, reasons["B.s"])
		}
		s := startOf(p, "S.s")
		if s == nil {
			t.Fatalf("many %v: S did not start (%q)", many, reasons["S.s"])
		}
		held := []string{"v0", "v1"}
		if many {
			held = append(held, "v4")
		}
		for _, v := range s.Nodes() {
			if slices.Contains(held, v) {
				t.Errorf("many %v: S on %v, held for a waiting job", many, s.Nodes())
			}
		}
	}
}
