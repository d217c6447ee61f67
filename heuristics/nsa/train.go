package nsa

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/heuristics/learn"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/solver"
)

// TrainConfig configures Train. Zero fields take DefaultTrainConfig's
// values, except Problems, which must be given.
type TrainConfig struct {
	// Arch is the actor's and the critic's architecture (CNN3).
	Arch Arch
	// Q is q, positions shown and actions (100).
	Q int
	// Idle adds the fifth "idle" channel.
	Idle bool
	// Relative normalises leaf and pod ids within each state (see
	// Policy.Relative).
	Relative bool
	// NMax is n_max (40).
	NMax int
	// Seed seeds everything random in training.
	Seed uint64
	// Episodes is the number of episodes (repairs) to train on.
	Episodes int
	// BatchEpisodes is the number of episodes per PPO update (512).
	BatchEpisodes int
	// Epochs is K, the update epochs per batch (4).
	Epochs int
	// Minibatch is the number of steps per gradient step (128).
	Minibatch int
	// Clip is PPO's ε (0.2).
	Clip float64
	// LRActor and LRCritic are Adam's learning rates (3e-4 and 1e-3).
	LRActor, LRCritic float64
	// Gamma is the discount γ (0.99).
	Gamma float64
	// Entropy is the entropy bonus coefficient (0.01).
	Entropy float64
	// MaxGradNorm clips each network's gradient norm (0.5).
	MaxGradNorm float64
	// Destroy is n^D, the most jobs an episode removes (2, as SA).
	Destroy int
	// SASteps is the longest SA run that produces an episode's starting
	// solution (1000); StatesPerProblem the number of such solutions per
	// problem (4: Seq and three SA runs of random length).
	SASteps, StatesPerProblem int
	// RewardScale multiplies the CH cost into the reward (1e-4).
	RewardScale float64
	// Problems are the windows to train on (required).
	Problems []*solver.Problem
	// Progress, when set, is called after every update.
	Progress func(TrainUpdate)
	// Checkpoint, when set, is called every CheckpointEvery updates (and
	// after the last) with the current actor.
	Checkpoint      func(update int, actor *Policy) error
	CheckpointEvery int
}

// DefaultTrainConfig returns the settings of the shipped weights but for
// Problems.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Arch: CNN3, Q: DefaultQ, NMax: DefaultNMax, Relative: true, Seed: 1, Episodes: 100_000, BatchEpisodes: 512,
		Epochs: 4, Minibatch: 128, Clip: 0.2, LRActor: 3e-4, LRCritic: 1e-3, Gamma: 0.99, Entropy: 0.01,
		MaxGradNorm: 0.5, Destroy: 2, SASteps: 1000, StatesPerProblem: 4, RewardScale: 1e-4, CheckpointEvery: 20}
}

// TrainUpdate reports one PPO update.
type TrainUpdate struct {
	// Update counts from 1 to Updates; Episodes are those done so far.
	Update, Updates, Episodes int
	// Steps is the number of repair steps of the batch.
	Steps int
	// MeanCost is the mean CH cost of the batch's repaired jobs under the
	// policy; UniformCost under SA's uniform start on the same episodes.
	MeanCost, UniformCost float64
	// MeanReward is the batch's mean episode reward (−RewardScale ·
	// MeanCost); MovingReward its exponential moving average (α = 0.1).
	MeanReward, MovingReward float64
	// Entropy is the mean entropy of the policy's action distributions.
	Entropy float64
	// Elapsed is the time since training started.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// TrainResult is Train's outcome.
type TrainResult struct {
	Actor, Critic *Policy
	Curve         []TrainUpdate
}

// ErrTrainConfig is wrapped by Train's configuration errors.
var ErrTrainConfig = errors.New("nsa: bad training configuration")

func (c *TrainConfig) fill() error {
	d := DefaultTrainConfig()
	for _, f := range []struct {
		p *int
		d int
	}{{&c.Q, d.Q}, {&c.NMax, d.NMax}, {&c.Episodes, d.Episodes}, {&c.BatchEpisodes, d.BatchEpisodes},
		{&c.Epochs, d.Epochs}, {&c.Minibatch, d.Minibatch}, {&c.Destroy, d.Destroy}, {&c.SASteps, d.SASteps},
		{&c.StatesPerProblem, d.StatesPerProblem}, {&c.CheckpointEvery, d.CheckpointEvery}} {
		if *f.p == 0 {
			*f.p = f.d
		}
	}
	for _, f := range []struct {
		p *float64
		d float64
	}{{&c.Clip, d.Clip}, {&c.LRActor, d.LRActor}, {&c.LRCritic, d.LRCritic}, {&c.Gamma, d.Gamma},
		{&c.Entropy, d.Entropy}, {&c.MaxGradNorm, d.MaxGradNorm}, {&c.RewardScale, d.RewardScale}} {
		if *f.p == 0 {
			*f.p = f.d
		}
	}
	switch {
	case len(c.Problems) == 0:
		return fmt.Errorf("%w: no problems to train on", ErrTrainConfig)
	case c.Q < 1 || c.Q > maxFileQ || c.NMax < 1:
		return fmt.Errorf("%w: q must be in 1…%d and n_max ≥ 1, got %d and %d", ErrTrainConfig, maxFileQ, c.Q, c.NMax)
	case c.Episodes < 1 || c.BatchEpisodes < 1 || c.Epochs < 1 || c.Minibatch < 1 || c.Destroy < 1 ||
		c.SASteps < 1 || c.StatesPerProblem < 1 || c.CheckpointEvery < 1:
		return fmt.Errorf("%w: counts must be positive: %+v", ErrTrainConfig, *c)
	case c.Clip <= 0 || c.LRActor <= 0 || c.LRCritic <= 0 || c.Gamma <= 0 || c.Gamma > 1 || c.Entropy < 0 || c.RewardScale <= 0:
		return fmt.Errorf("%w: rates must be positive (γ ≤ 1)", ErrTrainConfig)
	}
	for i, p := range c.Problems {
		if p == nil || p.Window == nil || len(p.Jobs) == 0 {
			return fmt.Errorf("%w: problem %d has no window or no jobs", ErrTrainConfig, i)
		}
	}
	return nil
}

// startState is a solution of a problem that episodes destroy and repair:
// owner[i] is the job (index into the problem's jobs) holding position i
// of the idle sequence, or −1.
type startState struct {
	prob  int
	owner []int
}

// episode is one destroy-and-repair.
type episode struct {
	st      *startState
	owner   []int
	moved   []int // jobs to reinsert, largest first
	cost    int64 // CH cost of the jobs reinserted so far (policy)
	uniform int64 // the same repair with SA's uniform starts
	// baseline is the mean cost of baselineDraws uniform repairs of the
	// same destroyed solution (the first is uniform).
	baseline float64
	first    int // index of the episode's first transition
}

// transition is one repair step: state, action and what PPO needs.
type transition struct {
	x      []float64
	valid  int
	action int
	logp   float64
	value  float64
	ret    float64
	adv    float64
}

// problemData caches per problem what episodes need.
type problemData struct {
	p     *solver.Problem
	tf    *topoFeatures
	sizes []int
	hc    *model.HopCounter
}

// price returns the CH cost of positions of the idle sequence.
func (pd *problemData) price(pos []int) int64 {
	if len(pos) <= 1 {
		return 1
	}
	w := pd.p.Window
	pd.hc.Reset()
	for _, i := range pos {
		pd.hc.Add(w.Idle[i])
	}
	return w.Cost.FromHops(len(pos), pd.hc.Hops())
}

// place gives job k of the episode the size nodes of the current idle
// sequence from start u, wrapping (DCAS, as heuristics.Anneal), and
// returns their positions.
func place(owner []int, free []int, k, size, u int, buf []int) []int {
	buf = buf[:0]
	for d := 0; d < size; d++ {
		i := free[(u+d)%len(free)]
		owner[i] = k
		buf = append(buf, i)
	}
	return buf
}

func freeOf(owner []int, buf []int) []int {
	buf = buf[:0]
	for i, o := range owner {
		if o < 0 {
			buf = append(buf, i)
		}
	}
	return buf
}

// Train trains an actor and a critic with PPO ([Lan23] §V-B3; Schulman et
// al. 2017, the clipped objective) on repair episodes: a problem and one
// of its starting solutions (Seq, or SA's after a random number of steps)
// drawn at random, 1…Destroy of its jobs removed, and the policy
// reinserting them largest first, one action (a start among the first q
// positions of the current idle sequence) per job. The reward is 0 until
// the last job, then −RewardScale × the CH cost of the reinserted jobs.
// Returns are discounted by γ, advantages are return minus the critic's
// value (normalised per batch), and each batch is used for K epochs of
// minibatch Adam steps on the clipped objective with an entropy bonus
// (actor) and the squared error to the return (critic).
//
// Train is deterministic for a configuration (the seeded generator is
// consumed in a fixed order; the matrix products split work by output
// blocks only). It checks ctx between batches.
func Train(ctx context.Context, cfg TrainConfig) (*TrainResult, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	start := time.Now()
	rng := learn.NewRand(cfg.Seed, 0x6e5a_7261_696e)
	actor, err := NewPolicy(cfg.Arch, cfg.Q, cfg.Idle, cfg.Relative, cfg.NMax, rng)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTrainConfig, err)
	}
	cnet, err := NewNet(cfg.Arch, actor.Beta(), cfg.Q, 1, 1, rng)
	if err != nil {
		return nil, err
	}
	critic := &Policy{Net: cnet, Idle: cfg.Idle, NMax: cfg.NMax, Relative: cfg.Relative}
	data := prepare(cfg.Problems)
	states, err := startStates(ctx, cfg, data, rng.Uint64())
	if err != nil {
		return nil, err
	}
	res := &TrainResult{Actor: actor, Critic: critic}
	optA := newAdam(actor.Net.Params(), cfg.LRActor, cfg.MaxGradNorm)
	optC := newAdam(critic.Net.Params(), cfg.LRCritic, cfg.MaxGradNorm)
	updates := (cfg.Episodes + cfg.BatchEpisodes - 1) / cfg.BatchEpisodes
	beta := actor.Beta()
	in := beta * cfg.Q
	var moving float64
	done := 0
	for u := 1; u <= updates; u++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ne := min(cfg.BatchEpisodes, cfg.Episodes-done)
		eps, trs, ent := rollout(cfg, actor.Net, critic.Net, data, states, ne, rng, true)
		done += ne
		// Returns: reward only at each episode's last step.
		var costSum, uniSum float64
		for e := range eps {
			ep := &eps[e]
			costSum += float64(ep.cost)
			uniSum += float64(ep.uniform)
			last := ep.first + len(ep.moved) - 1
			// The critic learns, and the advantage uses, the return
			// relative to the uniform repairs of the same destroyed
			// solution: an action-independent control variate, so the
			// policy gradient's expectation is unchanged.
			g := -cfg.RewardScale * (float64(ep.cost) - ep.baseline)
			for t := last; t >= ep.first; t-- {
				trs[t].ret = g
				g *= cfg.Gamma
			}
		}
		adv := make([]float64, len(trs))
		for i := range trs {
			adv[i] = trs[i].ret - trs[i].value
		}
		learn.Normalize(adv)
		for i := range trs {
			trs[i].adv = adv[i]
		}
		ppoUpdate(cfg, actor.Net, critic.Net, optA, optC, trs, in, rng)
		up := TrainUpdate{Update: u, Updates: updates, Episodes: done, Steps: len(trs),
			MeanCost: costSum / float64(len(eps)), UniformCost: uniSum / float64(len(eps)), Entropy: ent}
		up.MeanReward = -cfg.RewardScale * up.MeanCost
		if u == 1 {
			moving = up.MeanReward
		} else {
			moving = 0.9*moving + 0.1*up.MeanReward
		}
		up.MovingReward = moving
		up.Elapsed = time.Since(start)
		res.Curve = append(res.Curve, up)
		if cfg.Progress != nil {
			cfg.Progress(up)
		}
		if cfg.Checkpoint != nil && (u%cfg.CheckpointEvery == 0 || u == updates) {
			if err := cfg.Checkpoint(u, actor); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// startStates computes, per problem, Seq and StatesPerProblem − 1 SA
// solutions after a random number of steps, on all cores; each run's
// seed and length come from seed and the problem's index alone.
func startStates(ctx context.Context, cfg TrainConfig, data []*problemData, seed uint64) ([][]*startState, error) {
	out := make([][]*startState, len(data))
	errs := make([]error, len(data))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = problemStates(ctx, cfg, data[i], i, seed)
			}
		}()
	}
	for i := range data {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}

func problemStates(ctx context.Context, cfg TrainConfig, pd *problemData, i int, seed uint64) ([]*startState, error) {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	w := pd.p.Window
	pos := make(map[int]int, len(w.Idle))
	for k, id := range w.Idle {
		pos[id] = k
	}
	var sts []*startState
	for s := 0; s < cfg.StatesPerProblem; s++ {
		var sv solver.Solver = heuristics.Seq{}
		if s > 0 {
			a := heuristics.DefaultAnneal()
			a.Steps = 1 + r.IntN(cfg.SASteps)
			a.Destroy = cfg.Destroy
			a.Q = cfg.Q
			a.Seed = r.Uint64()
			sv = a
		}
		res, err := sv.Solve(ctx, pd.p)
		if err != nil {
			return nil, fmt.Errorf("problem %d: %w", i, err)
		}
		st := &startState{prob: i, owner: make([]int, len(w.Idle))}
		for k := range st.owner {
			st.owner[k] = -1
		}
		index := make(map[int]int, len(pd.p.Jobs))
		for k, j := range pd.p.Jobs {
			index[j] = k
		}
		for _, al := range res.Allocations {
			for _, id := range al.Nodes {
				st.owner[pos[id]] = index[al.Job]
			}
		}
		sts = append(sts, st)
	}
	return sts, nil
}

// baselineDraws is the number of uniform repairs whose mean cost is an
// episode's baseline.
const baselineDraws = 8

// rollout plays ne episodes in lockstep (all first repair steps as one
// batch through the networks, then all second steps, …) and returns them
// with their transitions, in episode order, and the mean entropy of the
// action distributions.
//
// With sample false the policy acts greedily (evaluation) and critic may
// be nil.
func rollout(cfg TrainConfig, actor, critic *Net, data []*problemData, states [][]*startState, ne int, rng *rand.Rand, sample bool) ([]episode, []transition, float64) {
	q := cfg.Q
	beta := beta(cfg.Idle)
	in := beta * q
	enc := encoding{q: q, idle: cfg.Idle, relative: cfg.Relative, nmax: cfg.NMax}
	eps := make([]episode, ne)
	nt := 0
	for e := range eps {
		pi := rng.IntN(len(data))
		st := states[pi][rng.IntN(len(states[pi]))]
		pd := data[pi]
		n := len(pd.sizes)
		m := 1 + rng.IntN(min(cfg.Destroy, n))
		moved := rng.Perm(n)[:m]
		slices.Sort(moved)
		slices.SortStableFunc(moved, func(x, y int) int { return pd.sizes[y] - pd.sizes[x] })
		owner := slices.Clone(st.owner)
		for i, o := range owner {
			if slices.Contains(moved, o) {
				owner[i] = -1
			}
		}
		eps[e] = episode{st: st, owner: owner, moved: moved, first: nt}
		nt += m
	}
	// The uniform baseline: SA's repair on the same destroyed solutions.
	urng := rand.New(rand.NewPCG(rng.Uint64(), 0x756e6966))
	var free, buf []int
	owner := make([]int, 0)
	for e := range eps {
		ep := &eps[e]
		pd := data[ep.st.prob]
		var sum int64
		for d := range baselineDraws {
			owner = append(owner[:0], ep.owner...)
			var c int64
			for _, k := range ep.moved {
				free = freeOf(owner, free)
				u := urng.IntN(min(q, len(free)))
				buf = place(owner, free, k, pd.sizes[k], u, buf)
				c += pd.price(buf)
			}
			if d == 0 {
				ep.uniform = c
			}
			sum += c
		}
		ep.baseline = float64(sum) / baselineDraws
	}
	trs := make([]transition, nt)
	var entSum float64
	var nEnt int
	p := make([]float64, q)
	for step := 0; ; step++ {
		var act []int // episodes with a job at this step
		for e := range eps {
			if step < len(eps[e].moved) {
				act = append(act, e)
			}
		}
		if len(act) == 0 {
			break
		}
		x := make([]float64, len(act)*in)
		valid := make([]int, len(act))
		for r, e := range act {
			ep := &eps[e]
			pd := data[ep.st.prob]
			free = freeOf(ep.owner, free)
			pending := pendingSizes(pd.sizes, ep.moved[step+1:])
			valid[r] = enc.encode(x[r*in:(r+1)*in], pd.tf, pd.p.Window.Idle, free, pd.sizes[ep.moved[step]], pending)
		}
		logits := actor.Forward(x, len(act))
		var values []float64
		if critic != nil {
			values = critic.Forward(x, len(act))
		}
		for r, e := range act {
			ep := &eps[e]
			pd := data[ep.st.prob]
			lse := maskedSoftmax(p, logits[r*q:(r+1)*q], valid[r])
			a := pick(p, valid[r], sample, rng)
			entSum += learn.Entropy(p, valid[r])
			nEnt++
			trs[ep.first+step] = transition{x: x[r*in : (r+1)*in], valid: valid[r], action: a, logp: logits[r*q+a] - lse}
			if values != nil {
				trs[ep.first+step].value = values[r]
			}
			free = freeOf(ep.owner, free)
			k := ep.moved[step]
			buf = place(ep.owner, free, k, pd.sizes[k], a, buf)
			ep.cost += pd.price(buf)
		}
	}
	return eps, trs, entSum / float64(max(1, nEnt))
}

func pendingSizes(sizes []int, jobs []int) []int {
	out := make([]int, len(jobs))
	for i, k := range jobs {
		out[i] = sizes[k]
	}
	return out
}

// ppoUpdate runs K epochs of minibatch updates of the actor (clipped
// surrogate with entropy bonus) and the critic (squared error).
func ppoUpdate(cfg TrainConfig, actor, critic *Net, optA, optC *adam, trs []transition, in int, rng *rand.Rand) {
	q := cfg.Q
	idx := make([]int, len(trs))
	for i := range idx {
		idx[i] = i
	}
	x := make([]float64, 0, cfg.Minibatch*in)
	dz := make([]float64, cfg.Minibatch*q)
	dv := make([]float64, cfg.Minibatch)
	p := make([]float64, q)
	for range cfg.Epochs {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for lo := 0; lo < len(idx); lo += cfg.Minibatch {
			mb := idx[lo:min(lo+cfg.Minibatch, len(idx))]
			b := len(mb)
			x = x[:0]
			for _, i := range mb {
				x = append(x, trs[i].x...)
			}
			// Actor: L = −min(ρA, clip(ρ, 1±ε)A) − c·H, ρ = π(a|s)/π_old(a|s).
			logits := actor.Forward(x, b)
			clear(dz[:b*q])
			for r, i := range mb {
				t := &trs[i]
				ppoLogitGrad(dz[r*q:(r+1)*q], p, logits[r*q:(r+1)*q], t.valid, t.action, t.logp, t.adv, cfg.Clip, cfg.Entropy)
			}
			actor.Backward(dz[:b*q], b)
			optA.Step(1 / float64(b))
			// Critic: ½(V − G)².
			v := critic.Forward(x, b)
			for r, i := range mb {
				dv[r] = v[r] - trs[i].ret
			}
			critic.Backward(dv[:b], b)
			optC.Step(1 / float64(b))
		}
	}
}

// ppoLogitGrad is learn.PPOLogitGrad: the gradient with respect to the
// logits of one sample's clipped-surrogate loss with entropy bonus, over
// the first valid logits.
func ppoLogitGrad(g, p, z []float64, valid, action int, oldLogp, adv, clip, entCoef float64) float64 {
	return learn.PPOLogitGrad(g, p, z, valid, action, oldLogp, adv, clip, entCoef)
}

// prepare caches per problem what episodes need.
func prepare(problems []*solver.Problem) []*problemData {
	data := make([]*problemData, len(problems))
	tfs := map[*model.Topology]*topoFeatures{}
	for i, p := range problems {
		tf := tfs[p.Window.Topology]
		if tf == nil {
			tf = newTopoFeatures(p.Window.Topology)
			tfs[p.Window.Topology] = tf
		}
		pd := &problemData{p: p, tf: tf, hc: model.NewHopCounter(p.Window.Topology)}
		for _, j := range p.Jobs {
			pd.sizes = append(pd.sizes, p.Window.Jobs[j].Nodes)
		}
		data[i] = pd
	}
	return data
}

// RepairEval is the outcome of EvaluateRepair.
type RepairEval struct {
	// Episodes is the number of repair episodes.
	Episodes int
	// Policy is the mean CH cost of the jobs the greedy policy
	// reinserted; Uniform the same with SA's uniform starts, on the same
	// episodes.
	Policy, Uniform float64
}

// EvaluateRepair measures a policy on n repair episodes of problems,
// drawn as in training (a starting solution — Seq or SA after a random
// number of steps — and 1…Destroy jobs removed, reinserted largest
// first) from seed: the mean cost of the reinserted jobs with the greedy
// policy against SA's uniform starts on the same episodes. cfg gives
// Destroy, SASteps and StatesPerProblem (zero fields: the defaults); its
// Problems are ignored.
func EvaluateRepair(ctx context.Context, p *Policy, problems []*solver.Problem, n int, seed uint64, cfg TrainConfig) (RepairEval, error) {
	cfg.Problems = problems
	cfg.Q, cfg.Idle, cfg.Relative, cfg.NMax = p.Net.Q, p.Idle, p.Relative, p.NMax
	if cfg.Episodes == 0 {
		cfg.Episodes = n
	}
	if err := cfg.fill(); err != nil {
		return RepairEval{}, err
	}
	if n < 1 || p.Net.Out != p.Net.Q {
		return RepairEval{}, fmt.Errorf("%w: need n ≥ 1 episodes and an actor", ErrTrainConfig)
	}
	rng := rand.New(rand.NewPCG(seed, 0x65_7661_6c))
	data := prepare(problems)
	states, err := startStates(ctx, cfg, data, rng.Uint64())
	if err != nil {
		return RepairEval{}, err
	}
	net := p.Net.Clone()
	ev := RepairEval{Episodes: n}
	for done := 0; done < n; {
		if err := ctx.Err(); err != nil {
			return RepairEval{}, err
		}
		b := min(512, n-done)
		eps, _, _ := rollout(cfg, net, nil, data, states, b, rng, false)
		for _, e := range eps {
			ev.Policy += float64(e.cost)
			ev.Uniform += float64(e.uniform)
		}
		done += b
	}
	ev.Policy /= float64(n)
	ev.Uniform /= float64(n)
	return ev, nil
}
