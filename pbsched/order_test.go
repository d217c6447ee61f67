package pbsched

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// orderCluster: 4 vnodes, 2 idle (v2, v3) and 2 running job R until its
// walltime; queued in this order: L (1 vnode, 2 h), W (3 vnodes, 1 h),
// S1 and S2 (1 vnode, 10 min each), all exclusive.
func orderCluster(t *testing.T) *cluster {
	var nodes []string
	for i := range 4 {
		st, jobs, asg := "free", "", ""
		if i < 2 {
			st, jobs, asg = "job-exclusive", `,"jobs":["R.s/0"]`, `,"resources_assigned":{"ncpus":8}`
		}
		nodes = append(nodes, fmt.Sprintf(`"v%d":{"state":"%s"%s,"resources_available":{"ncpus":8,"mem":"16gb","tier0":"t0_%d","tier1":"t1_0"}%s}`, i, st, jobs, i/2, asg))
	}
	running := `"R.s":{"job_state":"R","queue":"workq","stime":"Tue Nov 14 22:13:20 2023","exec_vnode":"(v0:ncpus=8)+(v1:ncpus=8)","Resource_List":{"select":"2:ncpus=8","place":"excl","walltime":"00:30:00"}}`
	q := func(id, sel, wall string) string {
		return fmt.Sprintf(`"%s":{"job_state":"Q","queue":"workq","Resource_List":{"select":"%s","place":"excl","walltime":"%s"}}`, id, sel, wall)
	}
	jobs := []string{running, q("L.s", "1:ncpus=8", "02:00:00"), q("W.s", "3:ncpus=8", "01:00:00"),
		q("S1.s", "1:ncpus=8", "00:10:00"), q("S2.s", "1:ncpus=8", "00:10:00")}
	return smallCluster(t, strings.Join(nodes, ","), strings.Join(jobs, ","))
}

// TestPBSOrder: in fifo order L takes one idle vnode and one short job
// the other; in sjf order (the default) the two 10-minute jobs take
// both. Every plan
// passes Check, whose reservation rule ranks the queue in the plan's
// order.
func TestPBSOrder(t *testing.T) {
	cases := []struct {
		order        string
		reserveAfter float64
		want         []string
	}{
		{"", 1e18, []string{"S1.s", "S2.s"}}, // sjf by default
		{OrderFIFO, 1e18, []string{"L.s", "S1.s"}},
		{OrderSJF, 1e18, []string{"S1.s", "S2.s"}},
		// With reservations at once: in fifo order (fewer chunks first at
		// equal waiting periods) L and S1 start and S2, which does not fit,
		// holds the reservation; in sjf order the short jobs start and W,
		// which does not fit, holds it: L (2 h) would delay W's start when
		// R ends (30 min), so it waits.
		{OrderFIFO, 1, []string{"L.s", "S1.s"}},
		{OrderSJF, 1, []string{"S1.s", "S2.s"}},
	}
	for _, tc := range cases {
		c := orderCluster(t)
		opt := testPlan()
		opt.Order, opt.ReserveAfter = tc.order, tc.reserveAfter
		p, err := plan(context.Background(), c, opt)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range p.Starts {
			got = append(got, s.Job)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("order %q, reserve-after %g: starts %v, want %v (deferred %v)", tc.order, tc.reserveAfter, got, tc.want, p.Deferred)
		}
		if want := tc.order; (want == "" && p.Order != OrderSJF) || (want != "" && p.Order != want) {
			t.Errorf("plan order %q for %q", p.Order, tc.order)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Errorf("order %q, reserve-after %g: %v", tc.order, tc.reserveAfter, err)
		}
	}
}

// TestPBSOrderReservationRank: the plan check ranks the queue in the
// plan's order. H (3 vnodes, 2 h, queued an hour ago) does not fit; X (2
// vnodes, 1 h, just queued) does. In sjf order X comes first and starts,
// and H's reservation is at X's end; ranked in fifo order X would be
// behind H and delay it, which Check would refuse.
func TestPBSOrderReservationRank(t *testing.T) {
	var nodes []string
	for i := range 4 {
		st, jobs, asg := "free", "", ""
		if i < 2 {
			st, jobs, asg = "job-exclusive", `,"jobs":["R.s/0"]`, `,"resources_assigned":{"ncpus":8}`
		}
		nodes = append(nodes, fmt.Sprintf(`"v%d":{"state":"%s"%s,"resources_available":{"ncpus":8,"tier0":"t0_%d","tier1":"t1_0"}%s}`, i, st, jobs, i/2, asg))
	}
	jobs := `"R.s":{"job_state":"R","queue":"workq","stime":"Tue Nov 14 22:13:20 2023","exec_vnode":"(v0:ncpus=8)+(v1:ncpus=8)","Resource_List":{"select":"2:ncpus=8","place":"excl","walltime":"00:30:00"}},` +
		`"H.s":{"job_state":"Q","queue":"workq","etime":"Tue Nov 14 21:13:20 2023","Resource_List":{"select":"3:ncpus=8","place":"excl","walltime":"02:00:00"}},` +
		`"X.s":{"job_state":"Q","queue":"workq","Resource_List":{"select":"2:ncpus=8","place":"excl","walltime":"01:00:00"}}`
	c := smallCluster(t, strings.Join(nodes, ","), jobs)
	opt := testPlan()
	opt.Order, opt.ReserveAfter = OrderSJF, 1
	p, err := plan(context.Background(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Starts) != 1 || p.Starts[0].Job != "X.s" || p.Reservation == nil || p.Reservation.Job != "H.s" {
		t.Fatalf("starts %v, reservation %+v, deferred %v", p.Starts, p.Reservation, p.Deferred)
	}
	if err := Check(c.st, c.scope, p); err != nil {
		t.Errorf("sjf plan: %v", err)
	}
	p.Order = OrderFIFO
	if err := Check(c.st, c.scope, p); err == nil || !strings.Contains(err.Error(), "starts behind reserved job H.s") {
		t.Errorf("the same plan ranked in fifo order: %v, want X delaying H", err)
	}
}
