package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/optsched/optsched/pbsched"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model/pbs"
	"github.com/optsched/optsched/solver"
)

// polarisLike writes qstat and pbsnodes documents shaped like ALCF's
// Polaris: racks of 14 vnodes (tier0) in groups of 4 racks (tier1), 64
// CPUs and 4 GPUs each, force_exclhost sharing on a share of the racks
// (whole-node jobs), the rest shared; a quarter of the vnodes busy or
// down; queued jobs of 1-64 whole vnodes and of partial chunks.
func polarisLike(nodes, queued int, seed uint64) (qstat, pbsnodes []byte) {
	r := rand.New(rand.NewPCG(seed, 560))
	ns := map[string]any{}
	js := map[string]any{}
	for i := range nodes {
		rack, group := i/14, i/56
		name := fmt.Sprintf("x%04dc0s%db0n0", 3000+rack, i%14)
		st := "free"
		switch r.IntN(8) {
		case 0:
			st = "job-exclusive"
		case 1:
			st = []string{"down", "offline", "down,offline"}[r.IntN(3)]
		}
		sharing := "force_exclhost"
		if rack%3 == 2 {
			sharing = "default_shared"
		}
		ns[name] = map[string]any{"state": st, "sharing": sharing,
			"resources_available": map[string]any{"ncpus": 64, "ngpus": 4, "mem": "527672492kb",
				"tier0": fmt.Sprintf("x%04d-g%d", 3000+rack, group), "tier1": fmt.Sprintf("g%d", group), "host": name, "vnode": name},
			"resources_assigned": map[string]any{"ncpus": 0, "ngpus": 0, "mem": "0kb"}}
	}
	for i := range queued {
		id := fmt.Sprintf("%d.polaris-pbs-01", 100000+i)
		sel := fmt.Sprintf("%d:ncpus=64:ngpus=4", 1+r.IntN(min(64, nodes/8)))
		place := "scatter"
		if r.IntN(4) == 0 {
			sel, place = fmt.Sprintf("%d:ncpus=%d:ngpus=1", 1+r.IntN(4), []int{4, 8, 16}[r.IntN(3)]), "free:shared"
		}
		js[id] = map[string]any{"job_state": "Q", "queue": "prod-exec",
			"eligible_time": fmt.Sprintf("%d:%02d:00", r.IntN(48), r.IntN(60)),
			"Resource_List": map[string]any{"select": sel, "place": place, "walltime": "03:00:00"}}
	}
	qstat, _ = json.Marshal(map[string]any{"timestamp": 1700000000, "pbs_version": "2022.1.1", "pbs_server": "polaris", "Jobs": js})
	pbsnodes, _ = json.Marshal(map[string]any{"timestamp": 1700000000, "nodes": ns})
	return qstat, pbsnodes
}

// BenchmarkPBSCycle times one decision on a Polaris-sized cluster (560
// vnodes) and on a larger one: parse both documents, build the view,
// plan (window solve by csp within 1 s, or by the Slurm heuristic to show
// the cost of everything else; partial-node jobs by the first fit, or
// by the cp schedule with +cp), check the plan. The window
// solve dominates when it cannot prove optimality quickly.
func BenchmarkPBSCycle(b *testing.B) {
	queues, _ := pbs.ParseQueues([]byte(`{"Queue":{"prod-exec":{"queue_type":"Execution","started":"True"}}}`))
	csp := pbsched.Options{TimeLimit: time.Second, NewSolver: cspSolver}
	solvers := map[string]pbsched.Options{"csp@1s": csp, "slurm": csp}
	sl := solvers["slurm"]
	sl.NewSolver = func() (solver.Solver, error) { return heuristics.Slurm{}, nil }
	solvers["slurm"] = sl
	for _, name := range []string{"csp@1s", "slurm"} {
		o := solvers[name]
		o.Partial = pbsched.PartialCP
		solvers[name+"+cp"] = o
	}
	for _, size := range []struct{ nodes, jobs int }{{560, 200}, {2240, 800}} {
		qstat, pbsnodes := polarisLike(size.nodes, size.jobs, 1)
		for _, name := range []string{"csp@1s", "slurm", "csp@1s+cp", "slurm+cp"} {
			opt := solvers[name]
			b.Run(fmt.Sprintf("vnodes=%d/queued=%d/%s", size.nodes, size.jobs, name), func(b *testing.B) {
				starts := 0
				for b.Loop() {
					js, err := pbs.ParseJobs(qstat, time.UTC)
					if err != nil {
						b.Fatal(err)
					}
					ns, err := pbs.ParseNodes(pbsnodes)
					if err != nil {
						b.Fatal(err)
					}
					st := &pbsched.State{Jobs: js, Nodes: ns, Queues: queues, Now: js.Timestamp, Digest: "bench"}
					sc := &pbsched.Scope{Levels: []string{"tier0", "tier1"}, Period: 60}
					p, err := pbsched.Decide(context.Background(), st, sc, opt)
					if err != nil {
						b.Fatal(err)
					}
					if err := pbsched.Check(st, sc, p); err != nil {
						b.Fatal(err)
					}
					starts = len(p.Starts)
				}
				b.ReportMetric(float64(starts), "starts")
			})
		}
	}
}

// BenchmarkPBSParse times the readers alone on the Polaris-sized documents.
func BenchmarkPBSParse(b *testing.B) {
	qstat, pbsnodes := polarisLike(560, 200, 1)
	b.Run("qstat", func(b *testing.B) {
		b.SetBytes(int64(len(qstat)))
		for b.Loop() {
			if _, err := pbs.ParseJobs(qstat, time.UTC); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pbsnodes", func(b *testing.B) {
		b.SetBytes(int64(len(pbsnodes)))
		for b.Loop() {
			if _, err := pbs.ParseNodes(pbsnodes); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cspSolver is the whole-node window solver of a cycle as the command
// sets it up: csp with SA in the reserve.
func cspSolver() (solver.Solver, error) {
	o := &solveOptions{solver: "csp", formulation: "strong", fallback: "sa", seed: 1}
	o.sa.Tmax, o.sa.Tmin, o.sa.Steps, o.sa.Destroy, o.sa.Q = 2500, 2.5, 500, 2, 100
	return o.newSolver()
}
