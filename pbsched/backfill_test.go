package pbsched

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/catalog"
)

// bigHeadCluster: 8 vnodes, v4–v7 run job R.s (excl) until now + 1 h, v0–v3
// are idle. H.s (6 vnodes, 2 h) has waited two hours, so it heads the
// queue; behind it, newer: S.s (1 vnode, 30 min), L1.s (2 vnodes, 3 h)
// and L2.s (1 vnode, 3 h), taken in that order (fewer vnodes first
// within a waiting period: S, L2, L1). By hand: H cannot start now (4
// idle); its shadow time is now + 1 h, when R.s ends and 8 vnodes are
// empty, 2 more than it needs. S ends by then; L2 takes one extra vnode;
// L1 would end after the shadow and needs 2 extra vnodes, 1 is left, so
// it waits.
func bigHeadCluster(t *testing.T) *cluster { return bigHeadOf(t, true) }

// bigHeadOf is bigHeadCluster, with R.s in qstat or, when running is
// false, gone from it while pbsnodes still lists it on v4–v7.
func bigHeadOf(t *testing.T, running bool) *cluster {
	const old, recent = "Tue Nov 14 20:13:20 2023", "Tue Nov 14 22:13:00 2023"
	job := func(id, qtime string, n int, wall string) string {
		return fmt.Sprintf(`"%s":{"job_state":"Q","queue":"workq","qtime":"%s","Resource_List":{"select":"%d:ncpus=64","place":"excl","walltime":"%s"}}`, id, qtime, n, wall)
	}
	var nodes []string
	for i := range 8 {
		st, jobs, asg := "free", "", ""
		if i >= 4 {
			st, jobs, asg = "job-exclusive", `,"jobs":["R.s/0"]`, `,"resources_assigned":{"ncpus":64}`
		}
		nodes = append(nodes, fmt.Sprintf(`"v%d":{"state":"%s"%s,"resources_available":{"ncpus":64,"mem":"256gb","tier0":"t0_%d","tier1":"t1_%d"}%s}`, i, st, jobs, i/2, i/4, asg))
	}
	jobs := []string{job("H.s", old, 6, "02:00:00"), job("S.s", recent, 1, "00:30:00"), job("L1.s", recent, 2, "03:00:00"), job("L2.s", recent, 1, "03:00:00")}
	if running {
		jobs = append([]string{`"R.s":{"job_state":"R","queue":"workq","stime":"Tue Nov 14 22:13:20 2023","exec_vnode":"(v4:ncpus=64)+(v5:ncpus=64)+(v6:ncpus=64)+(v7:ncpus=64)","Resource_List":{"select":"4:ncpus=64","place":"excl","walltime":"01:00:00"}}`}, jobs...)
	}
	return smallCluster(t, strings.Join(nodes, ","), strings.Join(jobs, ","))
}

func startedAndReasons(p *Plan) ([]string, map[string]string) {
	var started []string
	for _, s := range p.Starts {
		started = append(started, s.Job)
	}
	slices.Sort(started)
	reasons := map[string]string{}
	for _, d := range p.Deferred {
		reasons[d.Job] = d.Reason
	}
	return started, reasons
}

// TestPBSBackfillBehindBigHead: the default selection starts the jobs
// behind a head that does not fit when they do not delay it, and says why
// the others wait; lan2023 starts nothing behind the head.
func TestPBSBackfillBehindBigHead(t *testing.T) {
	c := bigHeadCluster(t)
	fifo := testPlan()
	fifo.Order = OrderFIFO // H, the oldest, first
	p, err := plan(context.Background(), c, fifo)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c.st, c.scope, p); err != nil {
		t.Fatal(err)
	}
	started, reasons := startedAndReasons(p)
	if want := []string{"L2.s", "S.s"}; !slices.Equal(started, want) {
		t.Errorf("started %v, want %v (deferred %v)", started, want, reasons)
	}
	if r := reasons["H.s"]; !strings.Contains(r, "needs 6 whole vnodes, 4 idle vnodes left") ||
		!strings.Contains(r, "reserved to start at 2023-11-14T23:13:20Z (in 1h0m0s) when job R.s ends") {
		t.Errorf("H.s: %q", r)
	}
	if r := reasons["L1.s"]; !strings.Contains(r, "would end after the reservation of job H.s at 2023-11-14T23:13:20Z and needs more than the 1 extra vnode") {
		t.Errorf("L1.s: %q", r)
	}
	want := Reservation{Job: "H.s", Start: 1700003600, Vnodes: 6, Extra: 2, Until: "R.s"}
	if p.Reservation == nil || *p.Reservation != want {
		t.Errorf("reservation %+v, want %+v", p.Reservation, want)
	}

	// Check re-derives the reservation: reserving all 8 vnodes for H
	// leaves no extra one, so L2 (3 h on a vnode empty by the shadow)
	// would delay it.
	bad := *p
	r := *p.Reservation
	r.AllVnodes = true
	bad.Reservation = &r
	if err := Check(c.st, c.scope, &bad); !errors.Is(err, ErrUnsafePlan) || !strings.Contains(err.Error(), "reservation: job L2.s starts behind reserved job H.s") {
		t.Errorf("Check of a plan that delays H: %v", err)
	}
	bad.Selection = SelectionLan2023
	if err := Check(c.st, c.scope, &bad); err == nil || !strings.Contains(err.Error(), "selection lan2023 reserves nothing") {
		t.Errorf("Check of a lan2023 plan with a reservation: %v", err)
	}

	// The paper's selection stops at H.
	c = bigHeadCluster(t)
	opt := testPlan()
	opt.Selection = SelectionLan2023
	if p, err = plan(context.Background(), c, opt); err != nil {
		t.Fatal(err)
	}
	if err := Check(c.st, c.scope, p); err != nil {
		t.Fatal(err)
	}
	started, reasons = startedAndReasons(p)
	if len(started) != 0 || p.Reservation != nil || !strings.Contains(reasons["S.s"], "queued behind job H.s") {
		t.Errorf("lan2023: started %v, reservation %+v, S.s %q", started, p.Reservation, reasons["S.s"])
	}
}

// TestPBSBackfillNeverDelaysTheHead, on random clusters: every plan of the
// default selection passes Check, and the reserved job's shadow time,
// computed here as the n-th earliest time a vnode is empty (Check's view
// of the documents, not Decide's), is the same with the backfilled starts
// held until their walltime ends as without them: backfilled jobs end by
// the shadow, or hold only vnodes beyond the n the reserved job needs.
func TestPBSBackfillNeverDelaysTheHead(t *testing.T) {
	reserved, backfilled := 0, 0
	for seed := range uint64(400) {
		c := randomClusterView(t, seed)
		p, err := plan(context.Background(), c, Options{TimeLimit: time.Second, Solver: catalog.DefaultWindow(), Fallbacks: catalog.WindowFallbacks(), Schedulers: catalog.PartialSchedulers(), Partial: PartialCP})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		r := p.Reservation
		if r == nil {
			continue
		}
		reserved++
		in := newCheckInput(c.st, c.scope, p)
		rank := in.queueRank(p.Order == OrderSJF)
		now := c.st.Now
		wall := func(id string) int64 {
			if w := in.jobs[id].Walltime; w > 0 {
				return w
			}
			return 365 * 24 * 3600
		}
		need := max(r.Vnodes, len(in.units(in.jobs[r.Job])))
		nth := func(behind bool) int64 {
			when := in.emptyWhen()
			if r.AllVnodes {
				need = len(when)
			}
			for _, s := range p.Starts {
				if rank[s.Job] > rank[r.Job] && !behind {
					continue
				}
				for _, ch := range s.Chunks {
					if t0, ok := when[ch.Vnode]; ok {
						when[ch.Vnode] = max(t0, now+wall(s.Job))
					}
				}
			}
			var ts []int64
			for _, t0 := range when {
				ts = append(ts, t0)
			}
			slices.Sort(ts)
			if need > len(ts) {
				return never
			}
			if need == 0 {
				return now
			}
			return ts[need-1]
		}
		without, with := nth(false), nth(true)
		for _, s := range p.Starts {
			if rank[s.Job] > rank[r.Job] {
				backfilled++
			}
		}
		if with != without {
			t.Errorf("seed %d: the backfilled starts move job %s's shadow time from %d to %d", seed, r.Job, without, with)
		}
	}
	t.Logf("400 random clusters: %d reservations, %d backfilled starts", reserved, backfilled)
	if reserved < 20 || backfilled < 10 {
		t.Errorf("too few reservations (%d) or backfilled starts (%d) for the property to mean much", reserved, backfilled)
	}
}

// TestPBSReserveAfter: H has waited as long as its walltime (bounded
// slowdown so far 2.00). Below that threshold it gets no reservation and
// every job behind it that fits starts, L1 too; at the threshold the
// plan is EASY's.
func TestPBSReserveAfter(t *testing.T) {
	for _, tc := range []struct {
		after   float64
		started []string
		reserve bool
	}{{2.5, []string{"L1.s", "L2.s", "S.s"}, false}, {2, []string{"L2.s", "S.s"}, true}} {
		c := bigHeadCluster(t)
		opt := testPlan()
		opt.ReserveAfter = tc.after
		p, err := plan(context.Background(), c, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatalf("after %v: %v", tc.after, err)
		}
		started, reasons := startedAndReasons(p)
		if !slices.Equal(started, tc.started) || (p.Reservation != nil) != tc.reserve {
			t.Errorf("after %v: started %v, reservation %+v; want %v, %v", tc.after, started, p.Reservation, tc.started, tc.reserve)
		}
		if !tc.reserve && !strings.Contains(reasons["H.s"], "no reservation yet (reservations at a bounded slowdown of 2.50 (now 2.00)): jobs behind it start when they fit") {
			t.Errorf("H.s: %q", reasons["H.s"])
		}
	}
}

// TestPBSStarveAfter: with reservations by slowdown off, H (waited 2 h)
// gets one after a wait of 1 h (PBS's max_starve), not after 3 h.
func TestPBSStarveAfter(t *testing.T) {
	for _, tc := range []struct {
		starve  time.Duration
		reserve bool
	}{{time.Hour, true}, {3 * time.Hour, false}} {
		c := bigHeadCluster(t)
		opt := testPlan()
		opt.ReserveAfter, opt.StarveAfter = math.Inf(1), tc.starve
		p, err := plan(context.Background(), c, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatal(err)
		}
		_, reasons := startedAndReasons(p)
		if (p.Reservation != nil) != tc.reserve {
			t.Errorf("starve after %v: reservation %+v", tc.starve, p.Reservation)
		}
		if !tc.reserve && !strings.Contains(reasons["H.s"], "reservations after a wait of 3h0m0s (now 2h0m0s)") {
			t.Errorf("H.s: %q", reasons["H.s"])
		}
	}
}

// TestPBSBackfillEndedJobVnodes: qstat no longer lists job R.s (it has
// ended) while pbsnodes still shows it on v4–v7 (their release lags a
// moment behind, as the real server showed under load). Those vnodes are
// empty in a second, so the head H.s (6 vnodes, 4 idle) is reserved at
// now + 1 until R.s's vnodes are free, not "never", and the 3-hour L1.s
// does not start behind it on the vnodes H.s needs; Check re-derives the
// same and passes the plan. With R.s's vnodes left without a time (the
// rule before), H.s had no reservation and every job behind it started.
func TestPBSBackfillEndedJobVnodes(t *testing.T) {
	c := bigHeadOf(t, false)
	fifo := testPlan()
	fifo.Order = OrderFIFO
	p, err := plan(context.Background(), c, fifo)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c.st, c.scope, p); err != nil {
		t.Fatal(err)
	}
	if p.Reservation == nil || p.Reservation.Job != "H.s" || p.Reservation.Start != 1700000001 || p.Reservation.Until != "R.s" {
		t.Fatalf("reservation %+v, want H.s at now + 1 until R.s's vnodes are released", p.Reservation)
	}
	started, reasons := startedAndReasons(p)
	if slices.Contains(started, "L1.s") || !strings.Contains(reasons["L1.s"], "would end after the reservation of job H.s") {
		t.Errorf("started %v; L1.s: %q", started, reasons["L1.s"])
	}
	// Check holds the plan to the same times: a start of L1.s on the
	// vnodes H.s needs is refused.
	bad := *p
	bad.Reservation = &Reservation{Job: "H.s", Start: 1700000001, Vnodes: 8, Extra: 0, Until: "R.s", AllVnodes: true}
	if len(p.Starts) > 0 {
		if err := Check(c.st, c.scope, &bad); !errors.Is(err, ErrUnsafePlan) {
			t.Errorf("Check of a plan whose backfilled starts delay H.s on all vnodes: %v", err)
		}
	}
}
