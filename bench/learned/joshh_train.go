package learned

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/heuristics/learn"
	"github.com/optsched/optsched/model"
)

// JoSHHTrainConfig configures TrainJoSHH. Zero fields take
// DefaultJoSHHTrainConfig's values, except Workload.
type JoSHHTrainConfig struct {
	Workload *rlscheduler.Workload
	// Seed seeds the weights, the episodes' starts, the sampled actions
	// and the minibatches.
	Seed uint64
	// Updates is the PPO updates; EpisodesPerUpdate the episodes each
	// collects; EpisodeLen the jobs of an episode.
	Updates, EpisodesPerUpdate, EpisodeLen int
	// TestStarts and TestLen are the sequences training never touches
	// (the test sequences, and any validation sequences).
	TestStarts []int
	TestLen    int
	// Arrival trains the arrival-window variant (JoSHH.Arrival);
	// Reserve a reservation variant (JoSHH.Reserve).
	Arrival bool
	Reserve Reserve
	// PPOEpochs, Minibatch, Clip, the Adam rates, Gamma (the local
	// reward's discount per decision), Entropy and MaxGradNorm as in
	// TrainConfig.
	PPOEpochs, Minibatch                                 int
	Clip, LRActor, LRCritic, Gamma, Entropy, MaxGradNorm float64
	// Progress, when set, is called after every update.
	Progress func(JoSHHUpdate)
}

// DefaultJoSHHTrainConfig returns the settings of the shipped weights
// but for Workload, Reserve and TestStarts: the shipped weights are of
// ReserveArea (Lublin-1) and ReserveAreaStrict (HPC2N), each trained
// with its trace's validation sequences excluded; optsched train sched's
// default window is ReserveShortestStrict; the zero Reserve is the
// fitting window.
func DefaultJoSHHTrainConfig() JoSHHTrainConfig {
	return JoSHHTrainConfig{Seed: 1, Updates: 300, EpisodesPerUpdate: 8, EpisodeLen: 1024,
		TestStarts: rlscheduler.Starts, TestLen: rlscheduler.SequenceLength, PPOEpochs: 4, Minibatch: 256,
		Clip: 0.2, LRActor: 3e-4, LRCritic: 1e-3, Gamma: 0.99, Entropy: 0.01, MaxGradNorm: 0.5}
}

// JoSHHUpdate reports one PPO update.
type JoSHHUpdate struct {
	Update, Updates, Episodes int
	// Steps is the batch's job-selection decisions with a choice,
	// AllocSteps its multi-node placements.
	Steps, AllocSteps int
	// MeanNT is the mean over the batch's episodes of their mean
	// normalised turnaround under the sampled policy; MeanSJF under SJF
	// (EASY backfilling) on the same episodes.
	MeanNT, MeanSJF float64
	// CostRatio is the batch's CH cost of the multi-node placements over
	// first-fit's on the same idle nodes; DepthShare the share of them
	// placed depth-first.
	CostRatio, DepthShare float64
	Elapsed               time.Duration `json:"elapsed_ns"`
}

// JoSHHTrainResult is TrainJoSHH's outcome.
type JoSHHTrainResult struct {
	Policy *JoSHH
	Curve  []JoSHHUpdate
	Starts []int
}

func (c *JoSHHTrainConfig) fill() error {
	learn.FillZero(c, DefaultJoSHHTrainConfig())
	if c.Workload == nil || len(c.Workload.Jobs) == 0 {
		return fmt.Errorf("%w: no workload", ErrTrainConfig)
	}
	return ppoSettings{c.EpisodesPerUpdate, c.EpisodeLen, c.PPOEpochs, c.Minibatch, c.Clip, c.LRActor, c.LRCritic, c.Gamma, c.Entropy}.
		check(c.Updates < 1, false)
}

// jstep is one job-selection decision: Action is a position in valid,
// N its length.
type jstep struct {
	x     []float64
	valid []int // queue indexes of the visible slots, in slot order
	k     int   // the decision's index in the episode's times
	learn.Decision
}

// astep is one multi-node placement decision (N 2: depth-first, then
// breadth-first; Adv its bandit reward until normalised).
type astep struct {
	a [AllocIn]float64
	learn.Decision
}

// joshhRecorder samples both actors and records their decisions.
type joshhRecorder struct {
	net    *JoSHH
	norm   Norm
	rng    *rand.Rand
	topo   *model.Topology
	cost   model.CostModel
	z, p   []float64
	js     []jstep
	as     []astep
	costCh float64 // Σ CH cost of the chosen multi-node placements
	costFF float64 // Σ first-fit's on the same idle nodes
	depth  int
	// times are the episode's decision times (with or without a choice).
	times []int64
	ends  []sim.RunningView // jobState's scratch
}

func (r *joshhRecorder) Select(v *sim.View) (int, sim.Strategy) {
	x := make([]float64, SelectorIn)
	valid := jobState(x, nil, v, r.norm, r.net.Arrival, r.net.Reserve, &r.ends)
	if len(valid) == 0 {
		return -1, sim.DepthFirst
	}
	r.times = append(r.times, v.Now)
	i, lse := pickJob(r.net.Selector, x, r.z, r.p, valid, true, r.rng)
	if len(valid) > 1 {
		val := r.net.Critic.Forward(x, 1)[0]
		r.js = append(r.js, jstep{x: x, valid: valid, k: len(r.times) - 1,
			Decision: learn.Decision{N: len(valid), Action: i, LogP: r.z[i] - lse, Value: val}})
	}
	q := valid[i]
	j := v.Queue[q]
	s := astep{Decision: learn.Decision{N: 2}}
	allocFeatures(s.a[:], v, j.Nodes, j.Request, r.norm)
	logits := r.net.Alloc.Forward(s.a[:], 1)
	var pa [2]float64
	lse = learn.MaskedSoftmax(pa[:], logits, 2)
	s.Action = learn.Pick(pa[:], 2, true, r.rng)
	s.LogP = logits[s.Action] - lse
	if j.Nodes > 1 {
		ch := float64(r.cost.Cost(r.topo, v.Preview(j.Nodes, strategies[s.Action])))
		ff := float64(r.cost.Cost(r.topo, v.Preview(j.Nodes, sim.FirstFitStrategy)))
		// The bandit reward: the placement's saving on first-fit's CH
		// cost, relative, clipped to [−2, 1].
		s.Adv = max(-2, (ff-ch)/max(ff, 1))
		r.costCh += ch
		r.costFF += ff
		if s.Action == 0 {
			r.depth++
		}
		r.as = append(r.as, s)
	}
	return q, strategies[s.Action]
}

// localRewards returns the reward of each decision interval [times[k],
// times[k+1]) (the last one open): −Σ_j (the part of job j's wait in the
// interval) / max(run_j, 1) / jobs, so that their sum over an episode is
// −Σ_j wait_j/run_j / jobs for the waits after the first decision.
func localRewards(times []int64, jobs []sim.JobResult) []float64 {
	rw := make([]float64, len(times))
	n := float64(len(jobs))
	for _, j := range jobs {
		run := float64(max(j.End-j.Start, 1))
		// The first interval that ends after the job's submit.
		k := sort.Search(len(times), func(i int) bool { return i+1 == len(times) || times[i+1] > j.Submit })
		for ; k < len(times) && times[k] < j.Start; k++ {
			lo := max(times[k], j.Submit)
			hi := j.Start
			if k+1 < len(times) {
				hi = min(hi, times[k+1])
			}
			if hi > lo {
				rw[k] -= float64(hi-lo) / run / n
			}
		}
	}
	return rw
}

// meanNT returns the mean normalised turnaround of jobs.
func meanNT(jobs []sim.JobResult) float64 {
	var s float64
	for _, j := range jobs {
		run := float64(max(j.End-j.Start, 1))
		s += float64(j.End-j.Submit) / run
	}
	return s / float64(max(len(jobs), 1))
}

// SimConfig returns the bench/sim configuration of a workload's cluster:
// w.MaxNodes nodes on whole pods of 4 leaves of 10 nodes, as optsched
// simulate lays an SWF log out, and the default CH cost model.
func SimConfig(w *rlscheduler.Workload) (sim.Config, error) {
	spec := model.LayoutSpec{Pods: (int(w.MaxNodes) + 39) / 40, LeavesPerPod: 4, NodesPerLeaf: 10}
	topo, err := model.NewLayout(spec.Pods, spec.LeavesPerPod, spec.NodesPerLeaf)
	if err != nil {
		return sim.Config{}, err
	}
	return sim.Config{Topology: topo, TopologySpec: model.TopologySpec{Layout: &spec}, Nodes: int(w.MaxNodes), Cost: model.DefaultCostModel}, nil
}

// TrainJoSHH trains the design with PPO on the one learning core (see
// docs/learned.md): the job selector on the return (discounted local
// reward) × (the episode's mean normalised turnaround), the allocation
// selector on each placement's CH-cost saving against first-fit. It is
// deterministic for a configuration.
func TrainJoSHH(ctx context.Context, cfg JoSHHTrainConfig) (*JoSHHTrainResult, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	starts, err := episodeStarts(len(cfg.Workload.Jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	if err != nil {
		return nil, err
	}
	base, err := SimConfig(cfg.Workload)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	rng := learn.NewRand(cfg.Seed, 0x6a6f_7368_7472)
	net := NewJoSHH(rng)
	net.Arrival, net.Reserve = cfg.Arrival, cfg.Reserve
	if cfg.Arrival && cfg.Reserve != ReserveNone {
		return nil, fmt.Errorf("%w: the arrival window takes no reservation", ErrTrainConfig)
	}
	optS := learn.NewAdam(net.Selector.Params(), cfg.LRActor, cfg.MaxGradNorm)
	optA := learn.NewAdam(net.Alloc.Params(), cfg.LRActor, cfg.MaxGradNorm)
	optC := learn.NewAdam(net.Critic.Params(), cfg.LRCritic, cfg.MaxGradNorm)
	norm := NormOf(cfg.Workload)
	sjf := map[int]float64{}
	rec := &joshhRecorder{net: net, norm: norm, rng: rng, topo: base.Topology, cost: base.Cost,
		z: make([]float64, JQ), p: make([]float64, JQ)}
	res := &JoSHHTrainResult{Policy: net, Starts: starts}
	episodes := 0
	retScale := 0.0
	for u := 1; u <= cfg.Updates; u++ {
		rec.js, rec.as, rec.costCh, rec.costFF, rec.depth = rec.js[:0], rec.as[:0], 0, 0, 0
		var sumNT, sumSJF float64
		if err := collect(ctx, cfg.EpisodesPerUpdate, starts, rng, func(st int) error {
			tr := TraceOf(cfg.Workload, st, cfg.EpisodeLen)
			b, ok := sjf[st]
			if !ok {
				c := base
				c.Policy = "sjf"
				r, err := sim.Run(ctx, tr, c)
				if err != nil {
					return err
				}
				b = meanNT(r.Jobs)
				sjf[st] = b
			}
			first := len(rec.js)
			rec.times = rec.times[:0]
			c := base
			c.Policy, c.Selector = sim.Select, rec
			r, err := sim.Run(ctx, tr, c)
			if err != nil {
				return err
			}
			nt := meanNT(r.Jobs)
			sumNT += nt
			sumSJF += b
			episodes++
			// Local rewards per decision interval, discounted per
			// decision; the return of a step is its discounted local
			// return times the episode's global reward.
			rw := localRewards(rec.times, r.Jobs)
			g := make([]float64, len(rw))
			acc := 0.0
			for k := len(rw) - 1; k >= 0; k-- {
				acc = rw[k] + cfg.Gamma*acc
				g[k] = acc
			}
			for i := range rec.js[first:] {
				s := &rec.js[first+i]
				s.Ret = g[s.k] * nt
			}
			return nil
		}); err != nil {
			return nil, err
		}
		up := JoSHHUpdate{Update: u, Updates: cfg.Updates, Episodes: episodes, Steps: len(rec.js), AllocSteps: len(rec.as),
			MeanNT: sumNT / float64(cfg.EpisodesPerUpdate), MeanSJF: sumSJF / float64(cfg.EpisodesPerUpdate)}
		if rec.costFF > 0 {
			up.CostRatio = rec.costCh / rec.costFF
			up.DepthShare = float64(rec.depth) / float64(len(rec.as))
		}
		if len(rec.js) > 0 {
			if retScale == 0 {
				for _, s := range rec.js {
					retScale += math.Abs(s.Ret)
				}
				retScale = max(retScale/float64(len(rec.js)), 1e-9)
			}
			for i := range rec.js {
				s := &rec.js[i]
				s.Ret /= retScale
				s.Adv = s.Ret - s.Value
			}
			learn.NormalizeAdv(len(rec.js), func(i int) *learn.Decision { return &rec.js[i].Decision })
			joshhSelectorUpdate(cfg, net, optS, optC, rec.js, rng)
		}
		if len(rec.as) > 1 {
			learn.NormalizeAdv(len(rec.as), func(i int) *learn.Decision { return &rec.as[i].Decision })
			joshhAllocUpdate(cfg, net, optA, rec.as, rng)
		}
		up.Elapsed = time.Since(t0)
		res.Curve = publish(res.Curve, up, cfg.Progress)
	}
	net.Critic = nil
	learn.RoundWeights(net.Selector.Params())
	learn.RoundWeights(net.Alloc.Params())
	return res, nil
}

// joshhSelectorUpdate runs PPO on the job selector (each row's JQ
// logits, of which the first N, the valid slots', count) and fits the
// critic on the same inputs. Every pass shuffles 0 … n−1 afresh.
func joshhSelectorUpdate(cfg JoSHHTrainConfig, net *JoSHH, optS, optC *learn.Adam, steps []jstep, rng *rand.Rand) {
	o := &learn.PPO{Clip: cfg.Clip, Entropy: cfg.Entropy}
	at := func(i int) *learn.Decision { return &steps[i].Decision }
	var x []float64
	learn.Minibatches(len(steps), cfg.Minibatch, cfg.PPOEpochs, true, rng, func(mb []int) {
		x = learn.Gather(x, mb, func(i int) []float64 { return steps[i].x })
		o.Actor(net.Selector, optS, x, len(mb), JQ, mb, at, nil, 1/float64(len(mb)))
		o.Critic(net.Critic, optC, x, mb, at)
	})
}

// joshhAllocUpdate runs PPO on the allocation selector (one-step
// episodes: the advantage is the normalised reward).
func joshhAllocUpdate(cfg JoSHHTrainConfig, net *JoSHH, optA *learn.Adam, steps []astep, rng *rand.Rand) {
	o := &learn.PPO{Clip: cfg.Clip, Entropy: cfg.Entropy}
	at := func(i int) *learn.Decision { return &steps[i].Decision }
	var x []float64
	learn.Minibatches(len(steps), cfg.Minibatch, cfg.PPOEpochs, true, rng, func(mb []int) {
		x = learn.Gather(x, mb, func(i int) []float64 { return steps[i].a[:] })
		o.Actor(net.Alloc, optA, x, len(mb), 2, mb, at, nil, 1/float64(len(mb)))
	})
}
