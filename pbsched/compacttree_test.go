package pbsched

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/heuristics"
)

// TestPBSCompactWaitTreeRandom (--compact-wait-leaves tree|top): on
// random states of the test server's tree (16 vnodes, pairs in quads),
// with running whole-node jobs of random ends and queued jobs of 1–12
// vnodes, every plan passes Check, no start takes a vnode of the
// cycle's reservation, and jobs of more than 4 vnodes wait for their
// shape on some plans (the test exercises the lever).
func TestPBSCompactWaitTreeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 3))
	const now = 1700000000
	at := func(s int64) string { return time.Unix(s, 0).UTC().Format("Mon Jan _2 15:04:05 2006") }
	waits := 0
	for iter := range 120 {
		var nodes, jobs []string
		for i := range 16 {
			st, extra := "free", ""
			if r.IntN(5) < 3 {
				id := fmt.Sprintf("R%d", i)
				st, extra = "job-exclusive", fmt.Sprintf(`,"jobs":["%s.s/0"],"resources_assigned":{"ncpus":4}`, id)
				jobs = append(jobs, fmt.Sprintf(`"%s.s":{"job_state":"R","queue":"workq","stime":"%s","exec_vnode":"(v%d:ncpus=4)","Resource_List":{"select":"1:ncpus=4","place":"excl","walltime":"00:%02d:%02d"}}`,
					id, at(now-10), i, r.IntN(15), 11+r.IntN(48)))
			}
			nodes = append(nodes, fmt.Sprintf(`"v%d":{"state":"%s"%s,"resources_available":{"ncpus":4,"tier0":"p%d","tier1":"q%d"}}`, i, st, extra, i/2, i/4))
		}
		for k := range 1 + r.IntN(5) {
			n := 1 + r.IntN(12)
			if k == 0 {
				n = 5 + r.IntN(8)
			}
			jobs = append(jobs, fmt.Sprintf(`"Q%d.s":{"job_state":"Q","queue":"workq","qtime":"%s","Resource_List":{"select":"%d:ncpus=4","place":"excl","walltime":"00:%02d:00"}}`,
				k, at(now-int64(r.IntN(300))), n, 1+r.IntN(30)))
		}
		c := smallCluster(t, strings.Join(nodes, ","), strings.Join(jobs, ","))
		opt := testPlan()
		opt.CompactWait = heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: iter%3 > 0,
			Leaves: []heuristics.LeafShape{heuristics.LeavesTree, heuristics.LeavesTop}[iter%2], Elapsed: float64(iter % 2)}
		p, err := plan(context.Background(), c, opt)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if err := Check(c.st, c.scope, p); err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if res := p.Reservation; res != nil && res.Within != "" {
			held := map[string]bool{}
			for _, v := range strings.Split(res.Within, ",") {
				held[v] = true
			}
			for _, s := range p.Starts {
				for _, ch := range s.Chunks {
					if held[ch.Vnode] {
						t.Fatalf("iteration %d: %s starts on %s, held for %s (%s)", iter, s.Job, ch.Vnode, res.Job, res.Within)
					}
				}
			}
		}
		for _, d := range p.Deferred {
			if strings.HasPrefix(d.Reason, "waiting up to") && strings.Contains(d.Reason, opt.CompactWait.Leaves.String()+" shape") {
				waits++
			}
		}
	}
	t.Logf("%d of 120 plans held a job for its shape on the tree", waits)
	if waits < 5 {
		t.Fatalf("%d plans held a job for its shape on the tree: the test exercises nothing", waits)
	}
}
