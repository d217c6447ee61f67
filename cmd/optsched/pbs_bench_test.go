package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/optsched/optsched/pbsched"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model/pbs"
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
			sel, place = fmt.Sprintf("%d:ncpus=%d:ngpus=%d", 1+r.IntN(8), []int{8, 16, 32}[r.IntN(3)], 1+r.IntN(2)), "free:shared"
		}
		js[id] = map[string]any{"job_state": "Q", "queue": "prod-exec",
			"eligible_time": fmt.Sprintf("%d:%02d:00", r.IntN(48), r.IntN(60)),
			"Resource_List": map[string]any{"select": sel, "place": place, "walltime": "03:00:00"}}
	}
	qstat, _ = json.Marshal(map[string]any{"timestamp": 1700000000, "pbs_version": "2022.1.1", "pbs_server": "polaris", "Jobs": js})
	pbsnodes, _ = json.Marshal(map[string]any{"timestamp": 1700000000, "nodes": ns})
	return qstat, pbsnodes
}

// The job mixes of the scale benchmark and test: every queued job
// whole-node, every one partial-node, or half and half.
const (
	mixWhole   = "whole"
	mixPartial = "partial"
	mixHalf    = "half"
)

// scaleDocs writes qstat, pbsnodes and queue documents of a Polaris-like
// cluster of the given size for the scale benchmark: racks of 14 vnodes
// in groups of 4 racks, 64 CPUs and 4 GPUs each; two racks in three
// default_excl, the third default_shared (so that place=free:shared jobs
// may share any vnode and go to the cp schedule, and whole-node jobs are
// exclusive or take every CPU); an eighth of the vnodes run a whole-node
// job, an eighth are down or offline, and a quarter of the free shared
// ones run a 16-CPU, 1-GPU job. The queued jobs (queued of them) are
// whole-node (1 to min(64, nodes/8) vnodes, scatter), partial-node (1–8
// chunks of 8, 16 or 32 CPUs and 1 or 2 GPUs, free:shared, a tenth pack:
// about a fifth more GPUs than the free vnodes have, so that some wait),
// or both in equal parts, by mix; walltimes of 1–6 hours.
func scaleDocs(nodes, queued int, mix string, seed uint64) (qstat, pbsnodes, queues []byte) {
	r := rand.New(rand.NewPCG(seed, 0x5ca1e))
	const now = 1700000000
	stime := time.Unix(now-3600, 0).UTC().Format("Mon Jan _2 15:04:05 2006")
	ns := map[string]any{}
	js := map[string]any{}
	running := 0
	runJob := func(vn string, ncpus, ngpus int, place string) string {
		id := fmt.Sprintf("%d.polaris-pbs-01", 10000+running)
		running++
		js[id] = map[string]any{"job_state": "R", "queue": "prod-exec", "stime": stime, "qtime": stime,
			"exec_vnode":    fmt.Sprintf("(%s:ncpus=%d:ngpus=%d)", vn, ncpus, ngpus),
			"Resource_List": map[string]any{"select": fmt.Sprintf("1:ncpus=%d:ngpus=%d", ncpus, ngpus), "place": place, "walltime": fmt.Sprintf("%02d:00:00", 2+r.IntN(6))}}
		return id
	}
	for i := range nodes {
		rack, group := i/14, i/56
		name := fmt.Sprintf("x%04dc0s%db0n0", 3000+rack, i%14)
		sharing := "default_excl"
		if rack%3 == 2 {
			sharing = "default_shared"
		}
		st := "free"
		var jobs []string
		assigned := map[string]any{"ncpus": 0, "ngpus": 0, "mem": "0kb"}
		switch r.IntN(8) {
		case 0:
			st = "job-exclusive"
			jobs = []string{runJob(name, 64, 4, "scatter:excl")}
			assigned = map[string]any{"ncpus": 64, "ngpus": 4, "mem": "0kb"}
		case 1:
			st = []string{"down", "offline", "down,offline"}[r.IntN(3)]
		default:
			if sharing == "default_shared" && r.IntN(4) == 0 {
				jobs = []string{runJob(name, 16, 1, "free:shared")}
				assigned = map[string]any{"ncpus": 16, "ngpus": 1, "mem": "0kb"}
			}
		}
		nd := map[string]any{"state": st, "sharing": sharing,
			"resources_available": map[string]any{"ncpus": 64, "ngpus": 4, "mem": "527672492kb",
				"tier0": fmt.Sprintf("x%04d-g%d", 3000+rack, group), "tier1": fmt.Sprintf("g%d", group), "host": name, "vnode": name},
			"resources_assigned": assigned}
		if len(jobs) > 0 {
			nd["jobs"] = jobs
		}
		ns[name] = nd
	}
	for i := range queued {
		id := fmt.Sprintf("%d.polaris-pbs-01", 100000+i)
		partial := mix == mixPartial || mix == mixHalf && i%2 == 1
		sel := fmt.Sprintf("%d:ncpus=64:ngpus=4", 1+r.IntN(max(1, min(64, nodes/8))))
		place := "scatter"
		if partial {
			sel, place = fmt.Sprintf("%d:ncpus=%d:ngpus=%d", 1+r.IntN(8), []int{8, 16, 32}[r.IntN(3)], 1+r.IntN(2)), "free:shared"
			if r.IntN(10) == 0 {
				place = "pack:shared"
			}
		}
		js[id] = map[string]any{"job_state": "Q", "queue": "prod-exec",
			"eligible_time": fmt.Sprintf("%d:%02d:00", r.IntN(48), r.IntN(60)),
			"Resource_List": map[string]any{"select": sel, "place": place, "walltime": fmt.Sprintf("%02d:00:00", 1+r.IntN(6))}}
	}
	qstat, _ = json.Marshal(map[string]any{"timestamp": now, "pbs_version": "2022.1.1", "pbs_server": "polaris", "Jobs": js})
	pbsnodes, _ = json.Marshal(map[string]any{"timestamp": now, "nodes": ns})
	queues = []byte(`{"Queue":{"prod-exec":{"queue_type":"Execution","started":"True","enabled":"True"}}}`)
	return qstat, pbsnodes, queues
}

// scaleSizes are the cluster sizes of the scale benchmark (vnodes; the
// queue holds half as many jobs).
var scaleSizes = []int{100, 1000, 2500, 5000, 10000}

// writeScaleDocs writes the scale documents to dir and returns the plan
// arguments that read them.
func writeScaleDocs(tb testing.TB, dir string, nodes, queued int, mix string) []string {
	tb.Helper()
	qstat, pbsnodes, queues := scaleDocs(nodes, queued, mix, 1)
	args := []string{"pbs", "plan", "--timezone", "UTC", "--time-limit", "1s"}
	for _, f := range []struct {
		flag, name string
		data       []byte
	}{{"--qstat", "qstat.json", qstat}, {"--pbsnodes", "pbsnodes.json", pbsnodes}, {"--queues", "queues.json", queues}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.data, 0o600); err != nil {
			tb.Fatal(err)
		}
		args = append(args, f.flag, p)
	}
	return args
}

// BenchmarkPBSCycle times whole cycles of `optsched pbs plan --time-limit
// 1s` as the command runs them (the default csp window solve and cp
// partial-node schedule): read and parse the three documents, build the
// view, plan, checkPlan, write the script. Sizes from 100 to 10,000
// vnodes, half as many queued jobs, in three mixes (scaleDocs).
func BenchmarkPBSCycle(b *testing.B) {
	for _, nodes := range scaleSizes {
		for _, mix := range []string{mixWhole, mixPartial, mixHalf} {
			b.Run(fmt.Sprintf("vnodes=%d/queued=%d/mix=%s", nodes, nodes/2, mix), func(b *testing.B) {
				args := writeScaleDocs(b, b.TempDir(), nodes, nodes/2, mix)
				var out strings.Builder
				for b.Loop() {
					out.Reset()
					var errb strings.Builder
					if code := run(args, strings.NewReader(""), &out, &errb); code != exitOK {
						b.Fatalf("exit %d: %s", code, errb.String())
					}
				}
				b.ReportMetric(float64(strings.Count(out.String(), " || rc=1\n")), "starts")
			})
		}
	}
}

// BenchmarkPBSPlanSolvers times one decision on a Polaris-sized cluster (560
// vnodes) and on a larger one: parse both documents, build the view,
// plan (window solve by csp within 1 s, or by the Slurm heuristic to show
// the cost of everything else; partial-node jobs by the first fit, or
// by the cp schedule with +cp), check the plan. The window
// solve dominates when it cannot prove optimality quickly.
func BenchmarkPBSPlanSolvers(b *testing.B) {
	queues, _ := pbs.ParseQueues([]byte(`{"Queue":{"prod-exec":{"queue_type":"Execution","started":"True"}}}`))
	pf, err := cycleSolver("csp", "sa", nil) // as pbs plan builds it
	if err != nil {
		b.Fatal(err)
	}
	csp := pbsched.Options{TimeLimit: time.Second, Solver: pf}
	solvers := map[string]pbsched.Options{"csp@1s": csp, "slurm": csp}
	sl := solvers["slurm"]
	sl.Solver = heuristics.Slurm{}
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
