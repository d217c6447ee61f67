package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/optsched/optsched/bench/cpolicy"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
)

// TestCPCheckedByChecker: the checker checks cp decisions' seed schedules
// (cpolicy.Policy.CallerChecks) in order among the starts, and reports
// the first that fails as Decide would have reported it in place (the
// same text, wrapped as the cp policy's error at its time); feasible ones
// pass.
func TestCPCheckedByChecker(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []trace.Job
	for k := range 200 {
		jobs = append(jobs, trace.Job{ID: strconv.Itoa(k), Submit: 0, Runtime: 5, Walltime: 5, Nodes: 2})
	}
	rng := rand.New(rand.NewPCG(34, 2))
	pol := cpolicy.Policy{NoSearch: true, CallerChecks: true}
	for _, bad := range []int{-1, 0, 13, 199} {
		cfg := Config{Topology: topo, Nodes: topo.NumNodes(), Cost: model.DefaultCostModel, Check: true}
		s := &state{cfg: cfg, res: &Result{}}
		s.Cluster = NewCluster(topo, cfg.Nodes, cfg.Cost, jobs, 0)
		s.startChecks()
		var want error
		decided := 0
		for k := range jobs {
			tm := int64(k)
			s.check(k, []int{2 * (k % 8), 2*(k%8) + 1}, tm)
			// A decision of 8 nodes, 3 free, with some jobs waiting.
			waiting := []cpolicy.Job{{Submit: 0, Request: 100, Nodes: 2}, {Submit: 0, Request: 50, Nodes: 3}, {Submit: 0, Request: 10, Nodes: 1 + rng.IntN(3)}}
			_, st, err := pol.Decide(context.Background(), tm, 8, 3, []cpolicy.Running{{End: tm + 40, Nodes: 5}}, waiting)
			if err != nil || st.Unchecked == nil {
				t.Fatalf("decision %d: %v (handed %v)", k, err, st.Unchecked)
			}
			var u seedCheck = st.Unchecked
			if k == bad {
				// Every job now: above the pseudo-node's capacity.
				sp := spoiltSeed{w: st.Unchecked.Window(), allocs: st.Unchecked.Allocations()}
				for i := range sp.allocs {
					sp.allocs[i].Start = tm
				}
				u = sp
				want = cpError(tm, cpolicy.SeedError(tm, "spoilt", model.Check(sp.w, sp.allocs)))
			}
			if err := s.checkDecision(tm, u); err != nil {
				if !errors.Is(err, errCheckFailed) || bad < 0 || k <= bad {
					t.Fatalf("decision %d: %v", k, err)
				}
				break
			}
			decided++
		}
		got := s.stopChecks()
		if fmt.Sprint(got) != fmt.Sprint(want) || (want != nil && !errors.Is(got, model.ErrInfeasible)) {
			t.Fatalf("bad decision %d: checker says %v, want %v", bad, got, want)
		}
		if bad < 0 && decided != len(jobs) {
			t.Fatalf("all feasible: %d of %d decisions queued", decided, len(jobs))
		}
	}
}

// A spoiltSeed is a seed schedule changed to fail the check.
type spoiltSeed struct {
	w      *model.Window
	allocs []model.Allocation
}

func (s spoiltSeed) Size() int { return len(s.w.Jobs) + len(s.w.Running) }

func (s spoiltSeed) Check() error {
	if err := model.Check(s.w, s.allocs); err != nil {
		return cpolicy.SeedError(s.w.Time, "spoilt", err)
	}
	return nil
}

// TestCPCallerChecksAsInline: the cp policy simulates the same schedule
// whether Decide checks its seeds in place (no checker: Check off) or
// hands them to the checker (Check on).
func TestCPCallerChecksAsInline(t *testing.T) {
	topo, err := model.NewLayout(2, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(34, 3))
	checked := 0
	for trial := range 20 {
		size := 4 + rng.IntN(topo.NumNodes()-3)
		tr := &trace.Trace{Jobs: randomTrace(rng, 30+rng.IntN(60), size)}
		var res [2]*Result
		for i, check := range []bool{false, true} {
			cfg := Config{Topology: topo, Nodes: size, Policy: CP, Check: check, CP: cpolicy.Policy{NoSearch: true}}
			if res[i], err = Run(context.Background(), tr, cfg); err != nil {
				t.Fatalf("trial %d (check %v): %v", trial, check, err)
			}
		}
		for i := range res[0].Jobs {
			a, b := &res[0].Jobs[i], &res[1].Jobs[i]
			if a.ID != b.ID || a.Start != b.Start || !slices.Equal(a.Nodes, b.Nodes) {
				t.Fatalf("trial %d: job %s at %d on %v checked by the checker, %s at %d on %v in place", trial, b.ID, b.Start, b.Nodes, a.ID, a.Start, a.Nodes)
			}
		}
		// The checker checked decisions: the simulation as Run drives it.
		cfg := Config{Topology: topo, Nodes: size, Cost: model.DefaultCostModel, Policy: CP, Check: true, CP: cpolicy.Policy{NoSearch: true}}
		s := &state{cfg: cfg, res: &Result{}}
		s.Cluster = NewCluster(topo, size, cfg.Cost, tr.Jobs, 0)
		s.startChecks()
		c := s.checker
		if err := errors.Join(s.runCP(context.Background()), s.stopChecks()); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checked += c.decisions
	}
	if checked == 0 {
		t.Fatal("the checker checked no decision")
	}
}
