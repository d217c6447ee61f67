package compactsim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// The competitors' models: what the servers' own schedulers do, on the
// same simulated 16-node server, so that a setting of optsched's planner
// can be compared with them offline (Options.Server "pbs_sched-psets"
// and "slurm-backfill"). They are models from the schedulers' source and
// documentation, not the schedulers: see the doc comments of each for
// what is kept and what is simplified.
const (
	// ServerPsets is pbs_sched with placement sets on tier1 (quads).
	ServerPsets = "pbs_sched-psets"
	// ServerPBSSched is pbs_sched as installed (no placement sets).
	ServerPBSSched = "pbs_sched"
	// ServerSlurmBackfill is Slurm's sched/backfill with topology/tree.
	ServerSlurmBackfill = "slurm-backfill"
)

// SlurmBackfillInterval is Slurm's default bf_interval, 30 s, in ticks.
const SlurmBackfillInterval = 30 * TicksPerSecond

// psetsDecide models OpenPBS 23.06's pbs_sched as the servers ran it
// with `node_group_enable=true, node_group_key=tier1` and its default
// sched_config (strict_ordering false, no job_sort_key, so jobs in queue
// order; do_not_span_psets false):
//
//   - the queued jobs are considered in submission order, and each one
//     that can run now runs; one that cannot does not stop the jobs
//     behind it (no strict ordering, so no reservation: backfilling
//     only applies to starving jobs, after max_starve of 24 h);
//   - placement sets are the quads (tier1), sorted by total ncpus (all
//     equal) and then by available ncpus, fewest first
//     (cmp_placement_sets in sort.cpp, re-sorted after every start by
//     update_all_nodepart): a job goes to the first quad, in that order,
//     with enough free vnodes — best fit;
//   - a job that fits no quad now but would fit a quad's total (4
//     vnodes or fewer) does not run (check_normal_node_path →
//     eval_selspec in node_info.cpp: can_fit by COMPARE_TOTAL); only a
//     job larger than every quad spans, over all vnodes (SPAN_PSETS);
//   - within the chosen set (a quad, or all vnodes), the first free
//     vnodes in the server's order (node_sort_key's default: all
//     priorities equal, so v0, v1, …).
//
// It ignores the server's latency (qrun, the job's start, the
// scheduler's cycle after an event), as the optsched model does.
//
// Without placement sets (ServerPBSSched, psets false) the same, with
// every job on the first free vnodes in order.
func psetsDecide(psets bool) decideFunc {
	return func(_ context.Context, _ int64, busy map[string]*simJob, queued, _ []*simJob) (map[string][]string, bool, error) {
		free := make([]bool, Vnodes)
		for i := range Vnodes {
			free[i] = busy[fmt.Sprintf("v%d", i)] == nil
		}
		out := map[string][]string{}
		for _, j := range fifo(queued) {
			ids := firstFree(free, 0, Vnodes, j.j.Chunks)
			if psets {
				ids = psetsPlace(free, j.j.Chunks)
			}
			if ids != nil {
				out[j.id] = names(ids)
				for _, id := range ids {
					free[id] = false
				}
			}
		}
		return out, false, nil
	}
}

// psetsPlace is the placement-set rule for a job of k whole vnodes on the
// free map (4-vnode quads): nil when it does not run now.
func psetsPlace(free []bool, k int) []int {
	const quad = 4
	if k > quad {
		return firstFree(free, 0, len(free), k)
	}
	best, bestFree := -1, 0
	for q := 0; q < len(free)/quad; q++ {
		n := countFree(free, q*quad, q*quad+quad)
		if n >= k && (best < 0 || n < bestFree) {
			best, bestFree = q, n
		}
	}
	if best < 0 {
		return nil
	}
	return firstFree(free, best*quad, best*quad+quad, k)
}

// slurmModel models Slurm 22.05's sched/backfill with topology/tree as
// the servers ran it (priority/basic: FIFO; Slurm's defaults for
// backfill: bf_interval 30 s):
//
//   - the main scheduler, on every submission and end: the pending jobs
//     in priority (submission) order, each started while it fits now,
//     stopping at the first that does not (the partition is then
//     blocked to the main scheduler);
//   - the backfill pass, every 30 s: the pending jobs in priority order,
//     each planned at the earliest time at which enough nodes are free
//     for its whole time limit (running jobs end at their start + time
//     limit, the limits in whole minutes; the earlier pending jobs'
//     plans are held as reservations on their nodes), started when that
//     time is now, else its nodes reserved for the later jobs of the
//     pass (conservative backfill on nodes);
//   - node selection by topology/tree's best fit on leaves of 4 under
//     one root: the leaf with the fewest free nodes that holds the job,
//     else across leaves: the leaf that holds the rest with the fewest
//     free nodes, else the largest, the lowest node ids within a leaf
//     (heuristics.Slurm on this tree).
//
// Simplified: bf_resolution (60 s) and bf_max_job_test are not
// modelled, nor the main scheduler's periodic run (it changes nothing
// between events), nor slurmctld's latency.
func slurmModel() decideFunc {
	topo, topoErr := SlurmTopology()
	lastBF := int64(-SlurmBackfillInterval)
	minutes := func(w int64) int64 {
		return (w + 60*TicksPerSecond - 1) / (60 * TicksPerSecond) * (60 * TicksPerSecond)
	}
	return func(_ context.Context, now int64, busy map[string]*simJob, queued, running []*simJob) (map[string][]string, bool, error) {
		if topoErr != nil {
			return nil, false, topoErr
		}
		free := make([]bool, Vnodes)
		for i := range Vnodes {
			free[i] = busy[fmt.Sprintf("v%d", i)] == nil
		}
		out := map[string][]string{}
		pending := fifo(queued)
		// Main scheduler: FIFO, stop at the first that does not fit.
		for len(pending) > 0 {
			j := pending[0]
			ids, err := slurmPlace(topo, free, j.j.Chunks)
			if err != nil {
				return nil, false, err
			}
			if ids == nil {
				break
			}
			out[j.id] = names(ids)
			for _, id := range ids {
				free[id] = false
			}
			pending = pending[1:]
		}
		if len(pending) == 0 || now < lastBF+SlurmBackfillInterval {
			return out, false, nil
		}
		lastBF = now
		// Backfill: busy intervals per node by time limits.
		type iv struct{ from, to int64 }
		booked := make([][]iv, Vnodes)
		for _, j := range running {
			for _, v := range j.vnodes {
				id := nodeID(v)
				booked[id] = append(booked[id], iv{j.start, j.start + minutes(j.wall)})
			}
		}
		for id, starts := range out { // started by the main scheduler this cycle

			for _, v := range starts {
				n := nodeID(v)
				booked[n] = []iv{{now, now + minutes(jobWall(queued, id))}}
			}
		}
		freeOver := func(id int, from, to int64) bool {
			for _, b := range booked[id] {
				if b.from < to && from < b.to {
					return false
				}
			}
			return true
		}
		for _, j := range pending {
			lim := minutes(j.wall)
			times := []int64{now}
			for _, bs := range booked {
				for _, b := range bs {
					if b.to > now {
						times = append(times, b.to)
					}
				}
			}
			slices.Sort(times)
			times = slices.Compact(times)
			for _, t := range times {
				avail := make([]bool, Vnodes)
				for id := range Vnodes {
					avail[id] = freeOver(id, t, t+lim) && (t > now || free[id])
				}
				ids, err := slurmPlace(topo, avail, j.j.Chunks)
				if err != nil {
					return nil, false, err
				}
				if ids == nil {
					continue
				}
				for _, id := range ids {
					booked[id] = append(booked[id], iv{t, t + lim})
				}
				if t == now {
					out[j.id] = names(ids)
					for _, id := range ids {
						free[id] = false
					}
				}
				break
			}
		}
		return out, false, nil
	}
}

// slurmPlace is topology/tree's best fit (heuristics.Slurm) on topo,
// the Slurm cluster's leaves of 4 under one root, for a job of k whole
// nodes on the free map (indexed by vnode number): nil when fewer than k
// are free.
func slurmPlace(topo *model.Topology, free []bool, k int) ([]int, error) {
	var idle []int
	for i, f := range free {
		if f {
			id, ok := topo.Lookup(fmt.Sprintf("v%d", i))
			if !ok {
				return nil, fmt.Errorf("compactsim: no node v%d in the Slurm topology", i)
			}
			idle = append(idle, id)
		}
	}
	if len(idle) < k {
		return nil, nil
	}
	slices.Sort(idle)
	w := &model.Window{Topology: topo, Idle: idle, Jobs: []model.Job{{ID: "j", Nodes: k}}}
	res, err := heuristics.Slurm{}.Solve(context.Background(), &solver.Problem{Window: w, Jobs: []int{0}})
	if err != nil {
		return nil, err
	}
	out := make([]int, k)
	for i, id := range res.Allocations[0].Nodes {
		out[i] = nodeID(topo.Name(id))
	}
	sort.Ints(out)
	return out, nil
}

func fifo(queued []*simJob) []*simJob {
	out := slices.Clone(queued)
	slices.SortStableFunc(out, func(a, b *simJob) int {
		if a.submit != b.submit {
			return int(a.submit - b.submit)
		}
		return a.j.K - b.j.K
	})
	return out
}

func countFree(free []bool, from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		if free[i] {
			n++
		}
	}
	return n
}

// firstFree returns the first k free ids in [from, to), nil when fewer.
func firstFree(free []bool, from, to, k int) []int {
	var out []int
	for i := from; i < to && len(out) < k; i++ {
		if free[i] {
			out = append(out, i)
		}
	}
	if len(out) < k {
		return nil
	}
	return out
}

func names(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("v%d", id)
	}
	return out
}

func nodeID(v string) int {
	var n int
	fmt.Sscanf(v, "v%d", &n)
	return n
}

func jobWall(queued []*simJob, id string) int64 {
	for _, j := range queued {
		if j.id == id {
			return j.wall
		}
	}
	return 0
}

// Score counts, over slices, how a setting's summaries compare with the
// competitor's: the CH cost of the multi-vnode jobs against the
// topology-aware scheduler (placement sets, Slurm's backfill), the
// mean bounded slowdown against the scheduler of the goal (pbs_sched as
// installed, Slurm's backfill). Slices without multi-vnode jobs count for
// bsld only.
type Score struct {
	// Slices with multi-vnode jobs; CHBelow of them with a lower mean CH
	// cost than the reference's, Both with that and a bsld no higher.
	Slices, CHBelow, Both int
	// All slices; BSLDOK of them with a bsld no higher than the
	// reference's (at two decimals, as the docs report it).
	All, BSLDOK int
	// Geometric means of the ratios to the references.
	logCH, logBSLD float64
	// WorstBSLD is the largest bsld ratio.
	WorstBSLD float64
}

// Add scores one slice: s the setting's summary, ch the CH reference's,
// bsld the bsld reference's.
func (r *Score) Add(s, ch, bsld Summary) {
	ok := math.Round(s.MeanBSLD*100) <= math.Round(bsld.MeanBSLD*100)
	r.All++
	if ok {
		r.BSLDOK++
	}
	ratio := s.MeanBSLD / bsld.MeanBSLD
	r.logBSLD += math.Log(ratio)
	r.WorstBSLD = max(r.WorstBSLD, ratio)
	if s.MultiNode == 0 || ch.MeanCH == 0 {
		return
	}
	r.Slices++
	r.logCH += math.Log(s.MeanCH / ch.MeanCH)
	if s.MeanCH < ch.MeanCH {
		r.CHBelow++
		if ok {
			r.Both++
		}
	}
}

// String reports the score.
func (r Score) String() string {
	ch, b := 1.0, 1.0
	if r.Slices > 0 {
		ch = math.Exp(r.logCH / float64(r.Slices))
	}
	if r.All > 0 {
		b = math.Exp(r.logBSLD / float64(r.All))
	}
	return fmt.Sprintf("CH below %d/%d, both %d/%d, bsld ok %d/%d; CH geo-mean ratio %.4f, bsld %.4f (worst %.3f)",
		r.CHBelow, r.Slices, r.Both, r.Slices, r.BSLDOK, r.All, ch, b, r.WorstBSLD)
}
