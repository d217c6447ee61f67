package instances

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/slurm"
)

// This file generates windows of the time-and-resource model of
// [Bridi16] on a cluster shaped like CINECA's Eurora, and tiny random
// windows of the same model for the exact solvers' tests.

// The Eurora-like cluster: 65 nodes n0…n64, each with two 8-core CPUs
// (ncpus=16) and 16 GB of memory (mem=16gb); n0–n31 carry two GPUs
// (ngpus=2), n32–n63 two Xeon Phi MICs (nmics=2), and n64 is a 65th,
// CPU-only node (16 cores, 16 GB, no accelerator) — Bridi et al. count 65
// nodes on Eurora; which role its 65th node played is not in their paper,
// so here it is one more compute node. The switch tree (eight chassis of
// eight nodes, n64 alone, one root) only matters to the CH cost, which
// the time-and-resource model does not use.
const (
	EuroraNodes      = 65
	EuroraCores      = 16
	EuroraMemGB      = 16
	EuroraGPUNodes   = 32 // n0–n31, 2 GPUs each
	EuroraMICNodes   = 32 // n32–n63, 2 MICs each
	euroraAccelPerNd = 2
)

// EuroraQueues are the queues of the Eurora-like workload, with their
// longest walltime and expected waiting time (the ewt_q of [Bridi16]
// Eq. (2)): debug ≤ 30 min, ewt 30 min; parallel ≤ 6 h, ewt 6 h; longpar
// ≤ 24 h, ewt 24 h. The expected waits are this generator's choice (the
// paper does not list Eurora's); they make the weights 48 : 4 : 1.
var EuroraQueues = []struct {
	Name                  string
	MaxWalltime, Expected int64
}{
	{"debug", 1800, 1800},
	{"parallel", 6 * 3600, 6 * 3600},
	{"longpar", 24 * 3600, 24 * 3600},
}

// EuroraTopology is the switch tree of the Eurora-like cluster, as a Slurm
// topology.conf.
func EuroraTopology() string {
	var b strings.Builder
	for c := range 8 {
		fmt.Fprintf(&b, "SwitchName=chassis%d Nodes=n[%d-%d]\n", c, 8*c, 8*c+7)
	}
	b.WriteString("SwitchName=extra Nodes=n64\n")
	b.WriteString("SwitchName=root Switches=chassis[0-7],extra\n")
	return b.String()
}

// EuroraWindow returns an empty window at time t on the Eurora-like
// cluster: every node idle, no job, the Eurora queues.
func EuroraWindow(t int64) (*model.Window, error) {
	text := EuroraTopology()
	topo, err := slurm.ParseTopology(text)
	if err != nil {
		return nil, err
	}
	w := &model.Window{Time: t, Topology: topo, TopologySpec: model.TopologySpec{Slurm: text}, Cost: model.DefaultCostModel,
		Queues: map[string]model.Queue{}, Resources: make([]model.Resources, EuroraNodes)}
	for _, q := range EuroraQueues {
		w.Queues[q.Name] = model.Queue{ExpectedWait: q.Expected}
	}
	for k := range EuroraNodes {
		id, ok := topo.Lookup("n" + strconv.Itoa(k))
		if !ok {
			return nil, fmt.Errorf("eurora: node n%d missing from the topology", k)
		}
		r := model.Resources{"ncpus": EuroraCores, "mem": EuroraMemGB << 30}
		switch {
		case k < EuroraGPUNodes:
			r["ngpus"] = euroraAccelPerNd
		case k < EuroraGPUNodes+EuroraMICNodes:
			r["nmics"] = euroraAccelPerNd
		}
		w.Resources[id] = r
		w.Idle = append(w.Idle, id)
	}
	slices.Sort(w.Idle)
	return w, nil
}

// EuroraJob draws one job of the synthetic Eurora-like workload, submitted
// at submit, with walltimes a multiple of grid seconds (≥ 1):
//
//   - queue debug (30 %), parallel (50 %) or longpar (20 %); walltime
//     uniform in 5–30 min, 30 min–6 h or 6–24 h;
//   - 1 unit (60 %), 2 (20 %), 4 (12 %) or 8 (8 %);
//   - per unit 1, 2, 4, 8 or 16 cores (15/20/25/25/15 %) and 1 GB of
//     memory per core;
//   - an accelerator per unit for 35 % of the jobs: 1 or 2 GPUs (25 %) or
//     1 or 2 MICs (10 %), with at most 8 cores per accelerator unit;
//   - place=excl for 5 %, pack for 5 % of the multi-unit jobs that fit on
//     one node.
func EuroraJob(rng *rand.Rand, id string, submit, grid int64) model.Job {
	grid = max(grid, 1)
	var q int
	switch r := rng.Float64(); {
	case r < 0.30:
		q = 0
	case r < 0.80:
		q = 1
	default:
		q = 2
	}
	lo := []int64{300, 1800, 6 * 3600}[q]
	hi := EuroraQueues[q].MaxWalltime
	wall := lo + rng.Int64N(hi-lo+1)
	wall = max(grid, wall/grid*grid)
	var units int
	if r := rng.Float64(); r < 0.12 {
		units = 4
	} else if r < 0.20 {
		units = 8
	} else if r < 0.40 {
		units = 2
	} else {
		units = 1
	}
	cores := pick(rng, []int64{1, 2, 4, 8, 16}, []float64{0.15, 0.20, 0.25, 0.25, 0.15})
	chunk := model.Chunk{Count: units, Amounts: model.Resources{}}
	switch r := rng.Float64(); {
	case r < 0.25:
		chunk.Amounts["ngpus"] = 1 + rng.Int64N(2)
		cores = min(cores, 8)
	case r < 0.35:
		chunk.Amounts["nmics"] = 1 + rng.Int64N(2)
		cores = min(cores, 8)
	}
	chunk.Amounts["ncpus"] = cores
	chunk.Amounts["mem"] = cores << 30
	j := model.Job{ID: id, Nodes: units, Walltime: wall, Submit: submit, Queue: EuroraQueues[q].Name,
		Select: model.Select{chunk}, Comm: true, Pattern: model.PatternRD}
	switch r := rng.Float64(); {
	case r < 0.05:
		j.Place.Exclusive = true
	case r < 0.10 && units > 1 && int64(units)*cores <= EuroraCores &&
		int64(units)*max(chunk.Amounts["ngpus"], chunk.Amounts["nmics"]) <= euroraAccelPerNd:
		j.Place.Arrangement = model.ArrangePack // only when one node holds the job
	}
	return j
}

func pick(rng *rand.Rand, vals []int64, p []float64) int64 {
	r := rng.Float64()
	for i, v := range vals {
		if r < p[i] {
			return v
		}
		r -= p[i]
	}
	return vals[len(vals)-1]
}

// EuroraConfig describes a random window on the Eurora-like cluster.
type EuroraConfig struct {
	Seed uint64
	// Time is the decision time (default 100000).
	Time int64
	// Jobs is the number of waiting jobs (EuroraJob), submitted within
	// the last four hours.
	Jobs int
	// Load is the share of the cluster's cores the running jobs hold
	// (default 0.85); they are drawn from the same workload, placed
	// first-fit, and end uniformly within their walltime.
	Load float64
	// Grid makes walltimes, running jobs' ends and the time multiples of
	// it (seconds; default 60), so that a schedule on that grid can be
	// optimal over all start times.
	Grid int64
}

// Eurora generates a window on the Eurora-like cluster, deterministically
// for a seed.
func Eurora(cfg EuroraConfig) (*model.Window, error) {
	if cfg.Time == 0 {
		cfg.Time = 100000
	}
	if cfg.Load == 0 {
		cfg.Load = 0.85
	}
	if cfg.Grid <= 0 {
		cfg.Grid = 60
	}
	if cfg.Jobs < 0 || cfg.Load < 0 || cfg.Load > 1 || cfg.Time < 0 {
		return nil, fmt.Errorf("eurora: need jobs >= 0, 0 <= load <= 1, time >= 0")
	}
	cfg.Time = cfg.Time / cfg.Grid * cfg.Grid
	w, err := EuroraWindow(cfg.Time)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed_e0b0_1a))
	used := make([]model.Resources, EuroraNodes)
	for k := range used {
		used[k] = model.Resources{}
	}
	busy := make([]bool, EuroraNodes)
	var usedCores, misses int64
	total := int64(EuroraNodes * EuroraCores)
	for r := 0; float64(usedCores) < cfg.Load*float64(total) && misses < 50; r++ {
		j := EuroraJob(rng, "r"+strconv.Itoa(r), 0, cfg.Grid)
		c := j.Select[0]
		units := map[int]int{}
		rem := c.Count
		for _, k := range rng.Perm(EuroraNodes) {
			for rem > 0 && fitsUnit(w.Resources[k], used[k], c.Amounts) && !(j.Place.Arrangement == model.ArrangePack && len(units) > 0 && units[k] == 0) {
				units[k]++
				rem--
				for res, v := range c.Amounts {
					used[k][res] += v
				}
			}
			if rem == 0 {
				break
			}
		}
		if rem > 0 {
			// Undo and try another job.
			for k, u := range units {
				for res, v := range c.Amounts {
					used[k][res] -= v * int64(u)
				}
			}
			misses++
			continue
		}
		rj := model.RunningJob{ID: j.ID, Select: j.Select, Units: units,
			End: cfg.Time + max(cfg.Grid, (1+rng.Int64N(j.Walltime))/cfg.Grid*cfg.Grid)}
		for k := range units {
			rj.Nodes = append(rj.Nodes, k)
			busy[k] = true
		}
		slices.Sort(rj.Nodes)
		usedCores += c.Amounts["ncpus"] * int64(c.Count)
		w.Running = append(w.Running, rj)
	}
	w.Idle = w.Idle[:0]
	for k := range EuroraNodes {
		if !busy[k] {
			w.Idle = append(w.Idle, k)
		}
	}
	for i := range cfg.Jobs {
		w.Jobs = append(w.Jobs, EuroraJob(rng, "j"+strconv.Itoa(i), cfg.Time-rng.Int64N(4*3600+1), cfg.Grid))
	}
	slices.SortStableFunc(w.Jobs, func(a, b model.Job) int { return int(a.Submit - b.Submit) })
	return w, nil
}

func fitsUnit(capacity, used, need model.Resources) bool {
	for res, v := range need {
		if used[res]+v > capacity[res] {
			return false
		}
	}
	return true
}

// RandomCPWindow draws a tiny window of the time-and-resource model for
// the exact solvers' tests: nodes nodes with 2 or 4 cores and sometimes a
// GPU, some running jobs (per-unit or whole-node), now and then a down
// node, a
// reservation now and then, and jobs waiting jobs of 1–2 units (or 1–2
// whole nodes) with varied place statements, in two queues with expected
// waits 1 and 3 grid steps. Every time is a multiple of grid, so that the
// optimum on the grid is the optimum over all start times.
func RandomCPWindow(rng *rand.Rand, nodes, jobs int, grid int64) (*model.Window, error) {
	t := grid * (10 + rng.Int64N(10))
	topo, err := model.NewLayout(1, 1, nodes)
	if err != nil {
		return nil, err
	}
	w := &model.Window{Time: t, Topology: topo, TopologySpec: model.TopologySpec{Layout: &model.LayoutSpec{Pods: 1, LeavesPerPod: 1, NodesPerLeaf: nodes}},
		Cost: model.DefaultCostModel, Queues: map[string]model.Queue{"fast": {ExpectedWait: grid}, "slow": {ExpectedWait: 3 * grid}},
		Resources: make([]model.Resources, nodes)}
	for k := range nodes {
		w.Resources[k] = model.Resources{"ncpus": 2 + 2*rng.Int64N(2)}
		if rng.IntN(3) == 0 {
			w.Resources[k]["ngpus"] = 1
		}
		switch rng.IntN(6) {
		case 0, 1:
			w.Running = append(w.Running, model.RunningJob{ID: "r" + strconv.Itoa(k), Nodes: []int{k},
				End: t + grid*(1+rng.Int64N(3)), Select: model.Select{{Count: 1, Amounts: model.Resources{"ncpus": 1 + rng.Int64N(2)}}},
				Units: map[int]int{k: 1}})
		case 2:
			w.Running = append(w.Running, model.RunningJob{ID: "r" + strconv.Itoa(k), Nodes: []int{k}, End: t + grid*(1+rng.Int64N(2))})
		default:
			w.Idle = append(w.Idle, k)
		}
	}
	if len(w.Idle) > 1 && rng.IntN(8) == 0 {
		i := rng.IntN(len(w.Idle))
		w.Idle = slices.Delete(w.Idle, i, i+1) // that node is down
	}
	slices.Sort(w.Idle)
	if rng.IntN(4) == 0 {
		a := t + grid*rng.Int64N(4)
		w.Reservations = append(w.Reservations, model.Reservation{ID: "maint", Nodes: []int{rng.IntN(nodes)}, Start: a, End: a + grid*(1+rng.Int64N(2))})
	}
	for i := range jobs {
		j := model.Job{ID: "j" + strconv.Itoa(i), Walltime: grid * (1 + rng.Int64N(3)), Submit: t - rng.Int64N(3*grid),
			Queue: []string{"fast", "slow"}[rng.IntN(2)], Comm: true, Pattern: model.PatternRD}
		if rng.IntN(8) == 0 {
			j.Nodes = 1 + rng.IntN(min(2, nodes))
		} else {
			c := model.Chunk{Count: 1 + rng.IntN(2), Amounts: model.Resources{"ncpus": 1 + rng.Int64N(2)}}
			if rng.IntN(4) == 0 {
				c.Amounts["ngpus"] = 1
			}
			j.Nodes = c.Count
			j.Select = model.Select{c}
		}
		switch rng.IntN(10) {
		case 0:
			j.Place.Exclusive = true
		case 1:
			j.Place.Arrangement = model.ArrangePack
		case 2:
			j.Place.Arrangement = model.ArrangeScatter
		}
		w.Jobs = append(w.Jobs, j)
	}
	return w, nil
}
