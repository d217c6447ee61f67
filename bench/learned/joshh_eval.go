package learned

import (
	"context"
	"fmt"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
)

// JoSHHPublished is JoSHH's Table 1 (Sun 2022): mean normalised
// turnaround on their laboratory cluster's private workload.
var JoSHHPublished = map[string]float64{"joshh": 3.3, "sjf": 4.5, "drf": 6.5}

// JoSHHRow is one policy's metrics averaged over the test sequences.
type JoSHHRow struct {
	Policy string `json:"policy"`
	// NT is the mean over the sequences of their mean normalised
	// turnaround; PerSeq the sequences' values.
	NT     float64   `json:"mean_normalised_turnaround"`
	PerSeq []float64 `json:"per_sequence"`
	// BSLD the mean bounded slowdown, Wait the mean wait (s), MultiCost
	// the mean CH cost of the multi-node jobs, each averaged over the
	// sequences.
	BSLD      float64 `json:"mean_bounded_slowdown"`
	Wait      float64 `json:"mean_wait_s"`
	MultiCost float64 `json:"mean_multi_cost"`
}

// JoSHHPolicies are EvaluateJoSHH's rows: the learned design (its
// allocation selector placing), the job selector with first-fit
// placement, sjf-greedy (ShortestFitting: the rule the job selector's
// visible set makes easiest to learn) and the heuristics with first-fit.
var JoSHHPolicies = []string{"joshh", "joshh+first-fit", "sjf-greedy", "sjf", "drf", "fcfs", "easy"}

// ShortestFitting is a sim.Selector rule: among the waiting jobs that
// fit now, the one of the shortest request (ties by arrival), placed by
// St; no reservation. With JoSHH's visible set (the oldest fitting job
// and the four shortest others) it is the policy that always picks the
// shortest visible job.
type ShortestFitting struct{ St sim.Strategy }

// Select implements sim.Selector.
func (r ShortestFitting) Select(v *sim.View) (int, sim.Strategy) {
	best := -1
	for k, j := range v.Queue {
		if j.Nodes <= v.Idle && (best < 0 || j.Request < v.Queue[best].Request) {
			best = k
		}
	}
	return best, r.St
}

// EvaluateJoSHH runs the policy (argmax) and the heuristics on the
// sequences [s, s+length) of w for s in starts, on the cluster of
// SimConfig, every allocation checked with model.Check.
func EvaluateJoSHH(ctx context.Context, w *rlscheduler.Workload, p *JoSHH, starts []int, length int) ([]JoSHHRow, error) {
	base, err := SimConfig(w)
	if err != nil {
		return nil, err
	}
	base.Check = true
	norm := NormOf(w)
	rows := make([]JoSHHRow, len(JoSHHPolicies))
	for i, name := range JoSHHPolicies {
		rows[i].Policy = name
		for _, st := range starts {
			if st < 0 || st+length > len(w.Jobs) {
				return nil, fmt.Errorf("learned: sequence [%d, %d) outside the trace's %d jobs", st, st+length, len(w.Jobs))
			}
			c := base
			switch name {
			case "joshh", "joshh+first-fit":
				ch := NewJoSHHChooser(p, norm, false, 1)
				if name != "joshh" {
					ff := sim.FirstFitStrategy
					ch.Force = &ff
				}
				c.Policy, c.Selector = sim.Select, ch
			case "sjf-greedy":
				c.Policy, c.Selector = sim.Select, ShortestFitting{St: sim.FirstFitStrategy}
			default:
				c.Policy = name
			}
			r, err := sim.Run(ctx, TraceOf(w, st, length), c)
			if err != nil {
				return nil, fmt.Errorf("%s on sequence %d: %w", name, st, err)
			}
			s := r.Summarise()
			rows[i].PerSeq = append(rows[i].PerSeq, s.MeanNormTurnaround)
			rows[i].NT += s.MeanNormTurnaround / float64(len(starts))
			rows[i].BSLD += s.MeanBSLD / float64(len(starts))
			rows[i].Wait += s.MeanWait / float64(len(starts))
			rows[i].MultiCost += s.MeanMultiCost / float64(len(starts))
		}
	}
	return rows, nil
}
