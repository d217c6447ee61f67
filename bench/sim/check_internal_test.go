package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// TestCheckerReportsFirstFailure: the checker checks allocations in the
// order they were made, against the cluster's state when each was made,
// and reports the first that fails with the text model.Check gives it
// on that state, the whole cluster's window (its idle nodes and running
// jobs) holding the job;
// checkFailed turns true once it has, and stopChecks returns nil when
// every allocation is feasible.
func TestCheckerReportsFirstFailure(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []trace.Job
	for k := range 400 {
		jobs = append(jobs, trace.Job{ID: strconv.Itoa(k), Submit: 0, Runtime: 5, Walltime: 5, Nodes: 2})
	}
	for _, bad := range []int{-1, 0, 7, 150, 399} {
		cfg := Config{Topology: topo, Nodes: topo.NumNodes(), Cost: model.DefaultCostModel, Check: true}
		s := &state{cfg: cfg, res: &Result{}}
		s.Cluster = NewCluster(topo, cfg.Nodes, cfg.Cost, jobs, 0)
		s.startChecks()
		var want error
		for k := range jobs {
			tm := int64(k)
			nodes := []int{2 * (k % 8), 2*(k%8) + 1}
			if k == bad {
				// A busy node, then one out of the topology.
				s.occupy(0, []int{nodes[1]}, tm)
				nodes = []int{nodes[0], nodes[1], 99}
				w := &model.Window{Time: tm, Topology: topo, Cost: cfg.Cost, Jobs: []model.Job{s.modelJob(&s.jobs[k], 0)},
					Idle: s.idle(), Running: s.runningJobs()}
				want = fmt.Errorf("t=%d: %w", tm, model.Check(w, []model.Allocation{{Job: 0, Nodes: nodes, Start: tm}}))
			}
			s.check(k, nodes, tm)
			if k == bad {
				s.Release(1 << 40) // the busy node idle again
			}
		}
		c := s.checker
		got := s.stopChecks()
		if fmt.Sprint(got) != fmt.Sprint(want) || (want != nil && !errors.Is(got, model.ErrInfeasible)) {
			t.Fatalf("bad allocation %d: checker says %v, want %v", bad, got, want)
		}
		if s.checker != nil || (bad >= 0) != (got != nil) || c.failed.Load() != (got != nil) || s.checkFailed() {
			t.Fatalf("bad allocation %d: checker left %v, error %v, failed %v", bad, s.checker, got, c.failed.Load())
		}
		if got != nil && !strings.Contains(got.Error(), fmt.Sprintf("busy until %d", bad+5)) && !strings.Contains(got.Error(), "not in the topology") {
			t.Fatalf("bad allocation %d: %v", bad, got)
		}
	}
}
