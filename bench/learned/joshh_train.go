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
	// TestStarts and TestLen are the sequences training never touches.
	TestStarts []int
	TestLen    int
	// PPOEpochs, Minibatch, Clip, the Adam rates, Gamma (the local
	// reward's discount per decision), Entropy and MaxGradNorm as in
	// TrainConfig.
	PPOEpochs, Minibatch                                 int
	Clip, LRActor, LRCritic, Gamma, Entropy, MaxGradNorm float64
	// Progress, when set, is called after every update.
	Progress func(JoSHHUpdate)
}

// DefaultJoSHHTrainConfig returns the settings of the shipped weights
// but for Workload.
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
	d := DefaultJoSHHTrainConfig()
	for _, f := range []struct{ p, d *int }{{&c.Updates, &d.Updates}, {&c.EpisodesPerUpdate, &d.EpisodesPerUpdate},
		{&c.EpisodeLen, &d.EpisodeLen}, {&c.TestLen, &d.TestLen}, {&c.PPOEpochs, &d.PPOEpochs}, {&c.Minibatch, &d.Minibatch}} {
		if *f.p == 0 {
			*f.p = *f.d
		}
	}
	for _, f := range []struct{ p, d *float64 }{{&c.Clip, &d.Clip}, {&c.LRActor, &d.LRActor}, {&c.LRCritic, &d.LRCritic},
		{&c.Gamma, &d.Gamma}, {&c.Entropy, &d.Entropy}, {&c.MaxGradNorm, &d.MaxGradNorm}} {
		if *f.p == 0 {
			*f.p = *f.d
		}
	}
	if c.TestStarts == nil {
		c.TestStarts = d.TestStarts
	}
	switch {
	case c.Workload == nil || len(c.Workload.Jobs) == 0:
		return fmt.Errorf("%w: no workload", ErrTrainConfig)
	case c.Updates < 1 || c.EpisodesPerUpdate < 1 || c.EpisodeLen < 2 || c.PPOEpochs < 1 || c.Minibatch < 1:
		return fmt.Errorf("%w: counts must be positive", ErrTrainConfig)
	case c.Clip <= 0 || c.LRActor <= 0 || c.LRCritic <= 0 || c.Gamma <= 0 || c.Gamma > 1 || c.Entropy < 0:
		return fmt.Errorf("%w: rates out of range", ErrTrainConfig)
	}
	return nil
}

// jstep is one job-selection decision.
type jstep struct {
	x      []float64
	valid  []int // queue indexes of the visible slots, in slot order
	action int   // position in valid
	logp   float64
	value  float64
	k      int // the decision's index in the episode's times
	adv    float64
	ret    float64
}

// astep is one multi-node placement decision.
type astep struct {
	a      [AllocIn]float64
	action int
	logp   float64
	adv    float64
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
}

func (r *joshhRecorder) Select(v *sim.View) (int, sim.Strategy) {
	x := make([]float64, SelectorIn)
	valid := jobState(x, nil, v, r.norm)
	if len(valid) == 0 {
		return -1, sim.DepthFirst
	}
	r.times = append(r.times, v.Now)
	i, lse := pickJob(r.net.Selector, x, r.z, r.p, valid, true, r.rng)
	if len(valid) > 1 {
		val := r.net.Critic.Forward(x, 1)[0]
		r.js = append(r.js, jstep{x: x, valid: valid, action: i, logp: r.z[i] - lse, value: val, k: len(r.times) - 1})
	}
	q := valid[i]
	j := v.Queue[q]
	var s astep
	allocFeatures(s.a[:], v, j.Nodes, j.Request, r.norm)
	logits := r.net.Alloc.Forward(s.a[:], 1)
	var pa [2]float64
	lse = learn.MaskedSoftmax(pa[:], logits, 2)
	s.action = learn.Pick(pa[:], 2, true, r.rng)
	s.logp = logits[s.action] - lse
	if j.Nodes > 1 {
		ch := float64(r.cost.Cost(r.topo, v.Preview(j.Nodes, strategies[s.action])))
		ff := float64(r.cost.Cost(r.topo, v.Preview(j.Nodes, sim.FirstFitStrategy)))
		// The bandit reward: the placement's saving on first-fit's CH
		// cost, relative, clipped to [−2, 1].
		s.adv = max(-2, (ff-ch)/max(ff, 1))
		r.costCh += ch
		r.costFF += ff
		if s.action == 0 {
			r.depth++
		}
		r.as = append(r.as, s)
	}
	return q, strategies[s.action]
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
	starts := TrainingStarts(len(cfg.Workload.Jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	if len(starts) == 0 {
		return nil, fmt.Errorf("%w: no %d-job episode of the %d jobs lies outside the test sequences", ErrTrainConfig, cfg.EpisodeLen, len(cfg.Workload.Jobs))
	}
	base, err := SimConfig(cfg.Workload)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	rng := learn.NewRand(cfg.Seed, 0x6a6f_7368_7472)
	net := NewJoSHH(rng)
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
		for range cfg.EpisodesPerUpdate {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			st := starts[rng.IntN(len(starts))]
			tr := TraceOf(cfg.Workload, st, cfg.EpisodeLen)
			b, ok := sjf[st]
			if !ok {
				c := base
				c.Policy = "sjf"
				r, err := sim.Run(ctx, tr, c)
				if err != nil {
					return nil, err
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
				return nil, err
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
				s.ret = g[s.k] * nt
			}
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
					retScale += math.Abs(s.ret)
				}
				retScale = max(retScale/float64(len(rec.js)), 1e-9)
			}
			adv := make([]float64, len(rec.js))
			for i := range rec.js {
				rec.js[i].ret /= retScale
				adv[i] = rec.js[i].ret - rec.js[i].value
			}
			learn.Normalize(adv)
			for i := range rec.js {
				rec.js[i].adv = adv[i]
			}
			joshhSelectorUpdate(cfg, net, optS, optC, rec.js, rng)
		}
		if len(rec.as) > 1 {
			adv := make([]float64, len(rec.as))
			for i := range rec.as {
				adv[i] = rec.as[i].adv
			}
			learn.Normalize(adv)
			for i := range rec.as {
				rec.as[i].adv = adv[i]
			}
			joshhAllocUpdate(cfg, net, optA, rec.as, rng)
		}
		up.Elapsed = time.Since(t0)
		res.Curve = append(res.Curve, up)
		if cfg.Progress != nil {
			cfg.Progress(up)
		}
	}
	net.Critic = nil
	learn.RoundWeights(net.Selector.Params())
	learn.RoundWeights(net.Alloc.Params())
	return res, nil
}

// shuffled returns 0..n−1 shuffled by rng.
func shuffled(n int, rng *rand.Rand) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	rng.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	return idx
}

// joshhSelectorUpdate runs PPO on the job selector (logits of the valid
// slots gathered, gradients scattered back) and fits the critic.
func joshhSelectorUpdate(cfg JoSHHTrainConfig, net *JoSHH, optS, optC *learn.Adam, steps []jstep, rng *rand.Rand) {
	var x, dz, dv []float64
	g, p, z := make([]float64, JQ), make([]float64, JQ), make([]float64, JQ)
	for range cfg.PPOEpochs {
		idx := shuffled(len(steps), rng)
		for lo := 0; lo < len(idx); lo += cfg.Minibatch {
			mb := idx[lo:min(lo+cfg.Minibatch, len(idx))]
			x = x[:0]
			for _, i := range mb {
				x = append(x, steps[i].x...)
			}
			logits := net.Selector.Forward(x, len(mb))
			dz = learn.Grow(dz, len(mb)*JQ)
			clear(dz)
			for r, i := range mb {
				s := &steps[i]
				n := len(s.valid)
				copy(z[:n], logits[r*JQ:r*JQ+n])
				learn.PPOLogitGrad(g[:n], p[:n], z[:n], n, s.action, s.logp, s.adv, cfg.Clip, cfg.Entropy)
				copy(dz[r*JQ:r*JQ+n], g[:n])
			}
			net.Selector.Backward(dz, len(mb))
			optS.Step(1 / float64(len(mb)))
			v := net.Critic.Forward(x, len(mb))
			dv = learn.Grow(dv, len(mb))
			for r, i := range mb {
				dv[r] = v[r] - steps[i].ret
			}
			net.Critic.Backward(dv, len(mb))
			optC.Step(1 / float64(len(mb)))
		}
	}
}

// joshhAllocUpdate runs PPO on the allocation selector (one-step
// episodes: the advantage is the normalised reward).
func joshhAllocUpdate(cfg JoSHHTrainConfig, net *JoSHH, optA *learn.Adam, steps []astep, rng *rand.Rand) {
	var x, dz []float64
	var g, p [2]float64
	for range cfg.PPOEpochs {
		idx := shuffled(len(steps), rng)
		for lo := 0; lo < len(idx); lo += cfg.Minibatch {
			mb := idx[lo:min(lo+cfg.Minibatch, len(idx))]
			x = x[:0]
			for _, i := range mb {
				x = append(x, steps[i].a[:]...)
			}
			logits := net.Alloc.Forward(x, len(mb))
			dz = learn.Grow(dz, len(mb)*2)
			for r, i := range mb {
				s := &steps[i]
				learn.PPOLogitGrad(g[:], p[:], logits[r*2:r*2+2], 2, s.action, s.logp, s.adv, cfg.Clip, cfg.Entropy)
				copy(dz[r*2:r*2+2], g[:])
			}
			net.Alloc.Backward(dz, len(mb))
			optA.Step(1 / float64(len(mb)))
		}
	}
}
