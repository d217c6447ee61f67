package learned

import (
	"context"
	"fmt"
	"strconv"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
)

// A Column runs a learned design on one of bench rlscheduler's
// sequences (rlscheduler.Config.Runners): in bench/sim on placed nodes,
// every allocation through model.Check, the jobs those of the sequence
// (TraceOf); its schedule is the sequence's jobs' last starts.
type Column func(ctx context.Context, seq rlscheduler.Sequence) (*rlscheduler.Schedule, error)

// simSchedule runs cfg on tr, the sequence's jobs, and returns the
// schedule of their (last) starts.
func simSchedule(ctx context.Context, seq rlscheduler.Sequence, tr *trace.Trace, cfg sim.Config) (*rlscheduler.Schedule, error) {
	idx := make(map[string]int, seq.Len)
	for i, j := range seq.Jobs() {
		id := strconv.FormatInt(j.Number, 10)
		if _, dup := idx[id]; dup {
			return nil, fmt.Errorf("learned: job number %s twice in sequence %d", id, seq.Start)
		}
		idx[id] = i
	}
	r, err := sim.Run(ctx, tr, cfg)
	if err != nil {
		return nil, err
	}
	starts := make([]int64, seq.Len)
	seen := make([]bool, seq.Len)
	for _, jr := range r.Jobs {
		i, ok := idx[jr.ID]
		if !ok || seen[i] {
			return nil, fmt.Errorf("learned: the simulation of sequence %d returned job %s unknown or twice", seq.Start, jr.ID)
		}
		seen[i] = true
		starts[i] = jr.Start
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("learned: the simulation of sequence %d did not run job %d", seq.Start, seq.Jobs()[i].Number)
		}
	}
	return seq.ScheduleOf(starts)
}

// JoSHHColumn is the JoSHH design as a column of w's sequences: its job
// selector (argmax, or sampled seeded by the sequence's start) and its
// allocation selector placing on SimConfig's tree.
func JoSHHColumn(p *JoSHH, w *rlscheduler.Workload, sample bool) Column {
	norm := NormOf(w)
	return func(ctx context.Context, seq rlscheduler.Sequence) (*rlscheduler.Schedule, error) {
		c, err := SimConfig(w)
		if err != nil {
			return nil, err
		}
		c.Check = true
		c.Policy, c.Selector = sim.Select, NewJoSHHChooser(p, norm, sample, uint64(seq.Start))
		return simSchedule(ctx, seq, TraceOf(w, seq.Start, seq.Len), c)
	}
}

// SchertColumn is the RLSchert design as a column of w's sequences: its
// picker (argmax, or sampled seeded by the sequence's start) and, with
// kill, its killer; users names each job's user by its job number (the
// protocol's loading keeps none; a job without one is predicted by its
// request). The predictor is primed with the PrimeFrom jobs before the
// sequence, as EvalSchert does.
func SchertColumn(net *RLSchert, w *rlscheduler.Workload, users map[string]string, kill, sample bool) Column {
	nodes := int(w.MaxNodes)
	withUsers := func(tr *trace.Trace) *trace.Trace {
		for i := range tr.Jobs {
			tr.Jobs[i].User = users[tr.Jobs[i].ID]
		}
		return tr
	}
	return func(ctx context.Context, seq rlscheduler.Sequence) (*rlscheduler.Schedule, error) {
		topo, err := SchertTopology(nodes)
		if err != nil {
			return nil, err
		}
		tr := withUsers(TraceOf(w, seq.Start, seq.Len))
		s := NewSchert(net, kill, sample, uint64(seq.Start))
		from := max(0, seq.Start-PrimeFrom)
		s.Pred.Prime(withUsers(TraceOf(w, from, seq.Start-from)).Jobs, tr.Jobs[0].Submit)
		cfg := sim.Config{Topology: topo, Nodes: nodes, Check: true, DiscardNodes: true,
			Policy: sim.Learned, Picker: s, Killer: s}
		return simSchedule(ctx, seq, tr, cfg)
	}
}
