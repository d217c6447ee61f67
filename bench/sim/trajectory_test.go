package sim_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver/csp"
)

// trajectoryDigests pin every policy's and allocator's trajectory — each
// job's start and node list, in start order — on two small logs, as the
// simulator computed them before its data structures were made to scale
// (commit 2052354): the first 3,000 jobs of KTH SP2 on its 100 nodes, and
// its first 2,000 jobs scaled by trace.ScaleSWF to 2,048 nodes. A change
// that makes the simulator faster must leave them all as they are.
var trajectoryDigests = map[string]string{
	"kth/window":                  "018c4b9e34e4e4c1", // 3000 jobs
	"kth/drf":                     "d7fa9fdb041ea9ac", // 3000 jobs
	"kth/easy":                    "5db5ae3d550744fe", // 3000 jobs
	"kth/fcfs":                    "b065406ebafaead4", // 3000 jobs
	"kth/pbs-fifo":                "99568446bc7985a7", // 3000 jobs
	"kth/pbs-walltime":            "71aa456f82c63f64", // 3000 jobs
	"kth/saf":                     "b3d6ce02e098f2ad", // 3000 jobs
	"kth/sjf":                     "71aa456f82c63f64", // 3000 jobs
	"kth/tetris":                  "30c2888fcaab79d6", // 3000 jobs
	"kth/easy/mishra-adaptive":    "addf1ea5ebfbaf07", // 3000 jobs
	"kth/sjf/mishra-adaptive":     "017249e6353c105a", // 3000 jobs
	"kth/easy/mishra-balanced":    "a022bb34de3282f7", // 3000 jobs
	"kth/sjf/mishra-balanced":     "c421f73a857b1f91", // 3000 jobs
	"kth/easy/mishra-greedy":      "e1eccad6ca274c12", // 3000 jobs
	"kth/sjf/mishra-greedy":       "2a62b051b0c2e380", // 3000 jobs
	"kth/easy/slurm":              "d5464746f51b962d", // 3000 jobs
	"kth/sjf/slurm":               "2e648d6b7536bd80", // 3000 jobs
	"scaled/window":               "24562f7d76226a07", // 2000 jobs
	"scaled/drf":                  "cd22143292287c74", // 2000 jobs
	"scaled/easy":                 "e23d8991946fbd9e", // 2000 jobs
	"scaled/fcfs":                 "cfafb1410df3b390", // 2000 jobs
	"scaled/pbs-fifo":             "eedaa95d959a0316", // 2000 jobs
	"scaled/pbs-walltime":         "694f009f9fd43d33", // 2000 jobs
	"scaled/saf":                  "b0403d43d7bf8bdf", // 2000 jobs
	"scaled/sjf":                  "694f009f9fd43d33", // 2000 jobs
	"scaled/tetris":               "f0dabe0387290156", // 2000 jobs
	"scaled/easy/mishra-adaptive": "a9e372254d347ae8", // 2000 jobs
	"scaled/sjf/mishra-adaptive":  "735222050472cbd0", // 2000 jobs
	"scaled/easy/mishra-balanced": "433043d840643785", // 2000 jobs
	"scaled/sjf/mishra-balanced":  "4c0c9394dcedd806", // 2000 jobs
	"scaled/easy/mishra-greedy":   "d0220d72637a24d5", // 2000 jobs
	"scaled/sjf/mishra-greedy":    "db044c1fefea35ce", // 2000 jobs
	"scaled/easy/slurm":           "390b9ae5ab135a03", // 2000 jobs
	"scaled/sjf/slurm":            "be656159d63c82a3", // 2000 jobs
}

// digest hashes r's jobs: id, start and nodes, in order.
func digest(r *sim.Result) string {
	h := sha256.New()
	for _, j := range r.Jobs {
		fmt.Fprintln(h, j.ID, j.Start, j.End, j.Nodes)
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

func TestTrajectoriesAsBefore(t *testing.T) {
	type log struct {
		name string
		tr   *trace.Trace
		topo *model.Topology
		spec model.LayoutSpec
	}
	kth, err := trace.Open(kthTrace, "", trace.Options{MaxJobs: 3000})
	if err != nil {
		t.Fatal(err)
	}
	kthTopo, err := model.NewLayout(3, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	scaled, scaledTopo, scaledSpec := scaledKTH(t, 2048, 2000)
	logs := []log{{"kth", kth, kthTopo, model.LayoutSpec{Pods: 3, LeavesPerPod: 4, NodesPerLeaf: 10}},
		{"scaled", scaled, scaledTopo, scaledSpec}}
	for _, l := range logs {
		var runs [][2]string
		for _, p := range append([]string{"window"}, sim.PolicyNames()...) {
			if p == sim.CP {
				continue // its decisions are time-limited searches, not a function of the log alone
			}
			runs = append(runs, [2]string{p, ""})
		}
		for _, a := range sim.AllocatorNames() {
			if a != sim.FirstFit {
				runs = append(runs, [2]string{"easy", a}, [2]string{"sjf", a})
			}
		}
		for _, r := range runs {
			name := l.name + "/" + r[0]
			if r[1] != "" {
				name += "/" + r[1]
			}
			cfg := sim.Config{Topology: l.topo, TopologySpec: model.TopologySpec{Layout: &l.spec}, Nodes: l.tr.Nodes,
				Policy: r[0], Allocator: r[1], Tau: 60, Solver: csp.Solver{}, MaxJobs: 5, Check: true}
			res, err := sim.Run(context.Background(), l.tr, cfg)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := digest(res)
			if want, ok := trajectoryDigests[name]; !ok {
				t.Errorf("%q: %q, // %d jobs: not pinned", name, got, len(res.Jobs))
			} else if got != want {
				t.Errorf("%s: trajectory %s, before %s", name, got, want)
			}
		}
	}
}

// TestDiscardNodes: without the node lists, the results have the same
// sizes and the same metrics.
func TestDiscardNodes(t *testing.T) {
	tr, topo := lanPrefix(t)
	for _, policy := range []string{"easy", "window"} {
		cfg := sim.Config{Topology: topo, Policy: policy, Tau: 60, Solver: csp.Solver{}, MaxJobs: 5, Check: true}
		full, err := sim.Run(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DiscardNodes = true
		lean, err := sim.Run(context.Background(), tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range lean.Jobs {
			if lean.Jobs[i].Nodes != nil || lean.Jobs[i].NodeCount() != len(full.Jobs[i].Nodes) {
				t.Fatalf("%s: job %s: nodes %v, %d of them; want none, %d", policy, lean.Jobs[i].ID, lean.Jobs[i].Nodes,
					lean.Jobs[i].NodeCount(), len(full.Jobs[i].Nodes))
			}
		}
		fs, ls := full.Summarise(), lean.Summarise()
		fs.SolveMedianMS, fs.SolveP99MS, ls.SolveMedianMS, ls.SolveP99MS = 0, 0, 0, 0
		if fs != ls {
			t.Errorf("%s: summary %+v, with the node lists %+v", policy, ls, fs)
		}
	}
}
