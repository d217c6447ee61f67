package learned

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
)

// WindowGreedy is RLSchert's (and DeepRM's) SJF or SAF baseline: among
// the SchertVisible oldest waiting jobs, start while any fits the one of
// the shortest request (SJF) or smallest request × nodes (SAF); the
// others wait in the backlog. It implements sim.JobPicker.
type WindowGreedy struct {
	// Area ranks by request × nodes (SAF) instead of request (SJF).
	Area bool
}

// Pick implements sim.JobPicker.
func (w WindowGreedy) Pick(_ int64, idle, _ int, queue []sim.QueuedJob, _ []sim.RunningJob) int {
	best := -1
	key := func(q sim.QueuedJob) float64 {
		if w.Area {
			return float64(q.Request) * float64(q.Nodes)
		}
		return float64(q.Request)
	}
	for i := range min(SchertVisible, len(queue)) {
		if q := queue[i]; q.Nodes <= idle && (best < 0 || key(q) < key(queue[best])) {
			best = i
		}
	}
	return best
}

// SchertPolicies are the rows EvalSchert can measure:
//
//	sjf, saf           bench/sim's policies: the whole queue by request
//	                   (or area), EASY backfilling
//	sjf-5, saf-5       WindowGreedy: RLSchert's baselines, 5 visible jobs
//	rule, rule-kill    the rules the design imitates (shortest predicted
//	                   length among the 5 visible; with KillRule)
//	rlschert           the trained picker, no kill
//	rlschert-kill      the trained picker and killer
var SchertPolicies = []string{"sjf", "saf", "sjf-5", "saf-5", "rule", "rule-kill", "rlschert", "rlschert-kill"}

// SchertRow is one policy's results over the sequences.
type SchertRow struct {
	Policy string `json:"policy"`
	// Slowdown holds each sequence's mean unbounded slowdown, Mean their
	// mean; Kills and LostNodeSeconds are summed over the sequences.
	Slowdown        []float64 `json:"slowdown"`
	Mean            float64   `json:"mean_slowdown"`
	Turnaround      float64   `json:"mean_turnaround_s"`
	Kills           int       `json:"kills"`
	LostNodeSeconds int64     `json:"lost_node_seconds"`
}

// EvalSchert runs each policy on each sequence of jobs (the sequences'
// first job indexes into jobs, length n each) on a cluster of nodes, every
// start through model.Check, the design's predictor primed with the
// PrimeFrom jobs before each sequence. sample draws the design's actions
// (seeded by the sequence's start).
func EvalSchert(ctx context.Context, jobs []trace.Job, nodes int, starts []int, n int, policies []string, net *RLSchert, sample bool) ([]SchertRow, error) {
	topo, err := SchertTopology(nodes)
	if err != nil {
		return nil, err
	}
	var rows []SchertRow
	for _, pol := range policies {
		if !slices.Contains(SchertPolicies, pol) {
			return nil, fmt.Errorf("learned: no rlschert policy %q (have %v)", pol, SchertPolicies)
		}
		row := SchertRow{Policy: pol}
		for _, st := range starts {
			if st < 0 || st+n > len(jobs) {
				return nil, fmt.Errorf("learned: sequence [%d, %d) outside the %d jobs", st, st+n, len(jobs))
			}
			seq := jobs[st : st+n]
			cfg := sim.Config{Topology: topo, Nodes: nodes, Check: true, DiscardNodes: true, Policy: pol}
			switch pol {
			case "sjf-5", "saf-5":
				cfg.Policy, cfg.Picker = sim.Learned, WindowGreedy{Area: pol == "saf-5"}
			case "rule", "rule-kill", "rlschert", "rlschert-kill":
				if net == nil {
					return nil, fmt.Errorf("learned: policy %s needs weights", pol)
				}
				s := NewSchert(net, pol == "rule-kill" || pol == "rlschert-kill", sample, uint64(st))
				s.Rule = pol == "rule" || pol == "rule-kill"
				s.Pred.Prime(jobs[max(0, st-PrimeFrom):st], seq[0].Submit)
				cfg.Policy, cfg.Picker, cfg.Killer = sim.Learned, s, s
			}
			r, err := sim.Run(ctx, &trace.Trace{Jobs: seq}, cfg)
			if err != nil {
				return nil, fmt.Errorf("%s on [%d, %d): %w", pol, st, st+n, err)
			}
			sd := MeanSlowdown(r)
			row.Slowdown = append(row.Slowdown, sd)
			row.Mean += sd / float64(len(starts))
			row.Turnaround += r.Summarise().MeanTurnaround / float64(len(starts))
			row.Kills += r.Kills
			row.LostNodeSeconds += r.LostNodeSeconds
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// SyntheticSchert generates RLSchert's synthetic workload (its Table 2,
// in DeepRM's manner; the distributions the paper leaves open are
// chosen here, see docs/learned.md): chunks of chunkLen jobs, each with
// its own job rate drawn uniformly from [0.3, 0.95]; one time step is
// one second; at each step a job arrives with the chunk's probability;
// 80 % of jobs are short (1–20 steps), 20 % long (50–100 steps); each
// asks for 1–12 of the SyntheticCores cores; the request is the exact
// length, as DeepRM's simulator knows it; no user (the predictor then
// returns the request). Chunk k's jobs are [k·chunkLen, (k+1)·chunkLen).
func SyntheticSchert(seed uint64, chunks, chunkLen int) []trace.Job {
	rng := rand.New(rand.NewPCG(seed, 0x73796e))
	out := make([]trace.Job, 0, chunks*chunkLen)
	var t int64
	for range chunks {
		rate := 0.3 + 0.65*rng.Float64()
		for n := 0; n < chunkLen; t++ {
			if rng.Float64() >= rate {
				continue
			}
			l := int64(1 + rng.IntN(20))
			if rng.IntN(5) == 0 {
				l = int64(50 + rng.IntN(51))
			}
			out = append(out, trace.Job{ID: fmt.Sprint(len(out)), Submit: t, Runtime: l, Walltime: l, Nodes: 1 + rng.IntN(12)})
			n++
		}
		t += 200 // a gap: the chunk's backlog mostly drains
	}
	return out
}

// SyntheticCores is the synthetic cluster's size (RLSchert's Table 2
// gives 12–24 cores: jobs of 1–12 cores on 24).
const SyntheticCores = 24
