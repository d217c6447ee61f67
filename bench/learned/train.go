package learned

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/heuristics/learn"
)

// TrainConfig configures TrainRLScheduler. Zero fields take
// DefaultTrainConfig's values, except Workload.
type TrainConfig struct {
	Workload *rlscheduler.Workload
	// Seed seeds everything random: the weights, the episodes' starts,
	// the sampled actions and the minibatches.
	Seed uint64
	// Updates is the number of PPO updates (the published "epochs");
	// EpisodesPerUpdate the episodes each collects.
	Updates, EpisodesPerUpdate int
	// EpisodeLen is the jobs of an episode (256, as published).
	EpisodeLen int
	// TestStarts and TestLen are the sequences training never touches
	// (rlscheduler.Starts and SequenceLength).
	TestStarts []int
	TestLen    int
	// PPOEpochs is the passes over a batch; Minibatch its steps per
	// gradient step.
	PPOEpochs, Minibatch int
	// Clip is PPO's ε (0.2); LRActor and LRCritic Adam's rates (3e-4,
	// 1e-3); Gamma and Lambda GAE's (1, 0.97); Entropy the bonus (0.01);
	// MaxGradNorm the clip of each network's gradient norm (0.5).
	Clip, LRActor, LRCritic, Gamma, Lambda, Entropy, MaxGradNorm float64
	// RewardScale divides the mean bounded slowdowns into rewards (100).
	RewardScale float64
	// MinLoad, when positive, keeps only the episodes whose offered load
	// (EpisodeLoad) is at least MinLoad: trajectory filtering, training
	// on the loaded stretches of a trace where the order of the queue
	// matters (0: every episode).
	MinLoad float64
	// FeatureSet is the kernel's input: FeatureSet1 (the default) or
	// FeatureSet2.
	FeatureSet int
	// Imitate, when set to a published policy ("f1", "sjf"; see
	// rlscheduler.KeyOf), warm-starts the kernel before PPO: that policy
	// plays ImitationEpisodes training episodes and the kernel learns its
	// choices among the visible jobs by cross-entropy, ImitationEpochs
	// passes at the rate LRImit (behaviour cloning, a choice
	// RLScheduler's paper does not make). Empty: PPO from scratch.
	Imitate                            string
	ImitationEpisodes, ImitationEpochs int
	LRImit                             float64
	// ValStarts, when set, are validation sequences of ValLen jobs,
	// excluded from training like the test sequences: after the
	// imitation and every ValEvery updates (and after the last) the
	// argmax policy runs them, and the weights of the lowest mean over
	// them of the sequences' mean bounded slowdown are the result (the
	// earliest among equals).
	ValStarts        []int
	ValLen, ValEvery int
	// Residual, when ResidualF1, trains a residual policy over F1 (see
	// RLScheduler.Residual; feature set 2 whatever FeatureSet says) of
	// temperature Temperature: PPO learns only the correction, from
	// zero, so training starts from F1's choices. It excludes Imitate.
	Residual    string
	Temperature float64
	// ValSample validates the sampled policy instead of the argmax one,
	// each sequence's draws seeded by its start (as bench rlscheduler
	// --sample seeds them): for weights meant to be run sampled.
	ValSample bool
	// Progress, when set, is called after every update.
	Progress func(TrainUpdate)
}

// DefaultTrainConfig returns the settings of the shipped weights but for
// Workload.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Seed: 1, Updates: 300, EpisodesPerUpdate: 16, EpisodeLen: 256,
		TestStarts: rlscheduler.Starts, TestLen: rlscheduler.SequenceLength, PPOEpochs: 4, Minibatch: 256,
		Clip: 0.2, LRActor: 3e-4, LRCritic: 1e-3, Gamma: 1, Lambda: 0.97, Entropy: 0.01, MaxGradNorm: 0.5, RewardScale: 100,
		Temperature: DefaultTemperature, FeatureSet: FeatureSet1, ImitationEpisodes: 32, ImitationEpochs: 40, LRImit: 1e-3, ValLen: rlscheduler.SequenceLength, ValEvery: 10}
}

// TrainUpdate reports one PPO update.
type TrainUpdate struct {
	Update, Updates, Episodes int
	// Steps is the batch's decisions with a choice (two or more visible
	// jobs).
	Steps int
	// MeanBSLD is the mean over the batch's episodes of their mean
	// bounded slowdown under the sampled policy; MeanF1 under F1 on the
	// same episodes.
	MeanBSLD, MeanF1 float64
	// Entropy is the mean entropy of the action distributions.
	Entropy float64
	// Imitation is the share of the imitation data's decisions the
	// kernel takes alike after the imitation (Update 0 only).
	Imitation float64 `json:",omitempty"`
	// Val is the validation mean (TrainConfig.ValStarts) of the argmax
	// policy after this update, 0 when it was not measured.
	Val     float64       `json:",omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// TrainResult is TrainRLScheduler's outcome.
type TrainResult struct {
	Policy *RLScheduler
	Curve  []TrainUpdate
	// Starts are the episode starts training drew from.
	Starts []int
	// Best is the update whose weights Policy holds (0: the imitation's)
	// and BestVal its validation mean, when ValStarts was set.
	Best    int
	BestVal float64
}

// ErrTrainConfig is wrapped by TrainRLScheduler's configuration errors.
var ErrTrainConfig = errors.New("learned: bad training configuration")

func (c *TrainConfig) fill() error {
	learn.FillZero(c, DefaultTrainConfig())
	if c.Workload == nil || len(c.Workload.Jobs) == 0 {
		return fmt.Errorf("%w: no workload", ErrTrainConfig)
	}
	if c.FeatureSet != FeatureSet1 && c.FeatureSet != FeatureSet2 {
		return fmt.Errorf("%w: feature set %d (have %d and %d)", ErrTrainConfig, c.FeatureSet, FeatureSet1, FeatureSet2)
	}
	switch c.Residual {
	case "":
	case ResidualF1:
		if c.Imitate != "" {
			return fmt.Errorf("%w: a residual policy starts from F1: no imitation", ErrTrainConfig)
		}
		if !(c.Temperature > 0) || math.IsInf(c.Temperature, 0) {
			return fmt.Errorf("%w: temperature %g", ErrTrainConfig, c.Temperature)
		}
		c.FeatureSet = FeatureSet2
	default:
		return fmt.Errorf("%w: residual policy over %q (have %q)", ErrTrainConfig, c.Residual, ResidualF1)
	}
	if c.Imitate != "" {
		if _, err := rlscheduler.KeyOf(c.Imitate); err != nil {
			return fmt.Errorf("%w: imitate: %v", ErrTrainConfig, err)
		}
	}
	for _, v := range c.ValStarts {
		if v < 0 || v+c.ValLen > len(c.Workload.Jobs) {
			return fmt.Errorf("%w: validation sequence [%d, %d) outside the %d jobs", ErrTrainConfig, v, v+c.ValLen, len(c.Workload.Jobs))
		}
	}
	return ppoSettings{c.EpisodesPerUpdate, c.EpisodeLen, c.PPOEpochs, c.Minibatch, c.Clip, c.LRActor, c.LRCritic, c.Gamma, c.Entropy}.
		check(c.Updates < 1 || c.ImitationEpisodes < 1 || c.ImitationEpochs < 1 || c.ValLen < 1 || c.ValEvery < 1, c.Lambda < 0 || c.Lambda > 1 || c.LRImit <= 0)
}

// Exclusions returns the sequences training must not touch: the test
// sequences (TestStarts, TestLen) and the validation ones (ValStarts,
// ValLen), as starts and lengths.
func (c *TrainConfig) exclusions() (starts, lens []int) {
	for _, s := range c.TestStarts {
		starts, lens = append(starts, s), append(lens, c.TestLen)
	}
	for _, s := range c.ValStarts {
		starts, lens = append(starts, s), append(lens, c.ValLen)
	}
	return starts, lens
}

// TrainingStartsOf returns the episode starts of cfg's workload that
// overlap none of its test and validation sequences (the defaults filled
// in as TrainRLScheduler fills them).
func TrainingStartsOf(cfg TrainConfig) ([]int, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	ex, lens := cfg.exclusions()
	return trainingStarts(len(cfg.Workload.Jobs), cfg.EpisodeLen, ex, lens), nil
}

// TrainingStarts returns the starts of the episodes of length epLen in a
// workload of n jobs that overlap none of the test sequences [t, t +
// testLen): training never sees a test job.
func TrainingStarts(n, epLen int, testStarts []int, testLen int) []int {
	lens := make([]int, len(testStarts))
	for i := range lens {
		lens[i] = testLen
	}
	return trainingStarts(n, epLen, testStarts, lens)
}

// trainingStarts is TrainingStarts with a length per excluded sequence.
func trainingStarts(n, epLen int, ex, lens []int) []int {
	var out []int
	for s := 0; s+epLen <= n; s++ {
		ok := true
		for k, t := range ex {
			if s < t+lens[k] && t < s+epLen {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// EpisodeLoad is the offered load of jobs [start, start+n) of w: their
// node-seconds of real run time over the cluster's node-seconds between
// the first and the last submit time (at least one second).
func EpisodeLoad(w *rlscheduler.Workload, start, n int) float64 {
	jobs := w.Jobs[start : start+n]
	var work float64
	for _, j := range jobs {
		work += float64(j.Run) * float64(min(int64(w.NodesOf(j)), w.MaxNodes))
	}
	span := max(jobs[len(jobs)-1].Submit-jobs[0].Submit, 1)
	return work / (float64(w.MaxNodes) * float64(span))
}

// HeavyStarts returns the starts (of episodes of n jobs) whose
// EpisodeLoad is at least minLoad, in order.
func HeavyStarts(w *rlscheduler.Workload, starts []int, n int, minLoad float64) []int {
	var out []int
	for _, s := range starts {
		if EpisodeLoad(w, s, n) >= minLoad {
			out = append(out, s)
		}
	}
	return out
}

// step is one decision with a choice.
type step struct {
	x     []float64 // N × Features
	c     []float64 // critic input
	prior []float64 // a residual policy's F1 prior (N); nil otherwise
	learn.Decision
}

// recorder is the training chooser: it samples from the actor and
// records the steps.
type recorder struct {
	net    *RLScheduler
	norm   Norm
	fs     int
	rng    *rand.Rand
	x, p   []float64
	c      []float64
	prior  []float64
	keys   []float64
	vis    []int
	steps  []step
	entSum float64
}

func (r *recorder) Choose(now int64, free, nodes int, waiting []rlscheduler.Waiting) int {
	if len(waiting) <= 1 {
		return 0
	}
	var n int
	var prior []float64
	if r.net.Residual == ResidualF1 {
		r.vis, r.keys, n = observeResidual(r.x, r.prior, r.keys, r.vis, now, free, nodes, waiting, r.norm, r.net.Temperature)
		prior = append([]float64(nil), r.prior[:n]...)
	} else {
		r.vis, n = observe(r.x, r.vis, now, free, nodes, waiting, r.norm, r.fs)
	}
	x := append([]float64(nil), r.x[:n*Features]...)
	logits := r.net.Kernel.Forward(x, n)
	for i, v := range prior {
		logits[i] += v
	}
	lse := learn.MaskedSoftmax(r.p, logits, n)
	a := learn.Pick(r.p, n, true, r.rng)
	r.entSum += learn.Entropy(r.p, n)
	c := make([]float64, criticIn)
	summarise(c, x, n, float64(free)/float64(nodes))
	v := r.net.Critic.Forward(c, 1)[0]
	r.steps = append(r.steps, step{x: x, c: c, prior: prior, Decision: learn.Decision{N: n, Action: a, LogP: logits[a] - lse, Value: v}})
	return r.vis[a]
}

// TrainRLScheduler trains the design with PPO (see the package doc). It
// is deterministic for a configuration (one goroutine; the seeded
// generator is consumed in a fixed order) and checks ctx between
// episodes.
func TrainRLScheduler(ctx context.Context, cfg TrainConfig) (*TrainResult, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	ex, lens := cfg.exclusions()
	starts := trainingStarts(len(cfg.Workload.Jobs), cfg.EpisodeLen, ex, lens)
	if len(starts) == 0 {
		return nil, fmt.Errorf("%w: no %d-job episode of the %d jobs lies outside the test and validation sequences", ErrTrainConfig, cfg.EpisodeLen, len(cfg.Workload.Jobs))
	}
	if cfg.MinLoad > 0 {
		starts = HeavyStarts(cfg.Workload, starts, cfg.EpisodeLen, cfg.MinLoad)
		if len(starts) == 0 {
			return nil, fmt.Errorf("%w: no %d-job episode has an offered load of %g or more", ErrTrainConfig, cfg.EpisodeLen, cfg.MinLoad)
		}
	}
	t0 := time.Now()
	rng := learn.NewRand(cfg.Seed, 0x726c_7472_6169_6e)
	net := NewRLScheduler(rng)
	net.FeatureSet = cfg.FeatureSet
	if cfg.Residual == ResidualF1 {
		net = residualOf(net, cfg.Temperature)
	}
	norm := NormOf(cfg.Workload)
	res := &TrainResult{Policy: net, Starts: starts}
	var best *learn.Seq
	validate := func(up *TrainUpdate) error {
		if len(cfg.ValStarts) == 0 {
			return nil
		}
		v, err := validationMean(ctx, cfg, net, norm)
		if err != nil {
			return err
		}
		up.Val = v
		if best == nil || v < res.BestVal {
			best, res.Best, res.BestVal = net.Kernel.Copy(), up.Update, v
		}
		return nil
	}
	if cfg.Imitate != "" {
		acc, mean, err := imitateRLScheduler(ctx, cfg, net, norm, starts, rng)
		if err != nil {
			return nil, err
		}
		up := TrainUpdate{Updates: cfg.Updates, Episodes: cfg.ImitationEpisodes, MeanBSLD: mean, MeanF1: mean, Imitation: acc}
		if err := validate(&up); err != nil {
			return nil, err
		}
		up.Elapsed = time.Since(t0)
		res.Curve = publish(res.Curve, up, cfg.Progress)
	}
	if cfg.Residual != "" {
		// The residual policy before any update: F1's choices.
		up := TrainUpdate{Updates: cfg.Updates}
		if err := validate(&up); err != nil {
			return nil, err
		}
		up.Elapsed = time.Since(t0)
		res.Curve = publish(res.Curve, up, cfg.Progress)
	}
	optA := learn.NewAdam(net.Kernel.Params(), cfg.LRActor, cfg.MaxGradNorm)
	optC := learn.NewAdam(net.Critic.Params(), cfg.LRCritic, cfg.MaxGradNorm)
	f1 := map[int]float64{}
	rec := &recorder{net: net, norm: norm, fs: cfg.FeatureSet, rng: rng, x: make([]float64, MaxVisible*Features), p: make([]float64, MaxVisible), prior: make([]float64, MaxVisible)}
	episodes := 0
	if cfg.Imitate != "" {
		episodes = cfg.ImitationEpisodes
	}
	for u := 1; u <= cfg.Updates; u++ {
		rec.steps, rec.entSum = rec.steps[:0], 0
		var sumRL, sumF1 float64
		if err := collect(ctx, cfg.EpisodesPerUpdate, starts, rng, func(st int) error {
			seq := rlscheduler.Sequence{W: cfg.Workload, Start: st, Len: cfg.EpisodeLen}
			b, ok := f1[st]
			if !ok {
				s, err := rlscheduler.Replay(ctx, seq, "f1", false)
				if err != nil {
					return err
				}
				b = s.Mean()
				f1[st] = b
			}
			first := len(rec.steps)
			s, err := rlscheduler.ReplayChooser(ctx, seq, rec)
			if err != nil {
				return err
			}
			if err := s.Verify(); err != nil {
				return err
			}
			m := s.Mean()
			sumRL += m
			sumF1 += b
			episodes++
			// The reward, −m/scale, comes at the episode's end; F1's
			// score of the same jobs is subtracted as a baseline that
			// no action changes.
			eps := rec.steps[first:]
			if len(eps) == 0 {
				return nil
			}
			eps[len(eps)-1].Reward = -(m - b) / cfg.RewardScale
			learn.EpisodeGAE(len(eps), func(i int) *learn.Decision { return &eps[i].Decision }, cfg.Gamma, cfg.Lambda)
			return nil
		}); err != nil {
			return nil, err
		}
		up := TrainUpdate{Update: u, Updates: cfg.Updates, Episodes: episodes, Steps: len(rec.steps),
			MeanBSLD: sumRL / float64(cfg.EpisodesPerUpdate), MeanF1: sumF1 / float64(cfg.EpisodesPerUpdate)}
		if len(rec.steps) > 0 {
			up.Entropy = rec.entSum / float64(len(rec.steps))
			learn.NormalizeAdv(len(rec.steps), func(i int) *learn.Decision { return &rec.steps[i].Decision })
			ppoUpdate(cfg, net, optA, optC, rec.steps, rng)
		}
		if u%cfg.ValEvery == 0 || u == cfg.Updates {
			if err := validate(&up); err != nil {
				return nil, err
			}
		}
		up.Elapsed = time.Since(t0)
		res.Curve = publish(res.Curve, up, cfg.Progress)
	}
	net.Critic = nil
	if best != nil {
		net.Kernel = best
	}
	learn.RoundWeights(net.Kernel.Params())
	return res, nil
}

// validationMean runs the argmax (or with ValSample the sampled) policy of net on cfg's validation
// sequences and returns the mean of their mean bounded slowdowns.
func validationMean(ctx context.Context, cfg TrainConfig, net *RLScheduler, norm Norm) (float64, error) {
	var sum float64
	for _, v := range cfg.ValStarts {
		s, err := rlscheduler.ReplayChooser(ctx, rlscheduler.Sequence{W: cfg.Workload, Start: v, Len: cfg.ValLen}, NewChooser(net, norm, cfg.ValSample, uint64(v)))
		if err != nil {
			return 0, err
		}
		sum += s.Mean()
	}
	return sum / float64(len(cfg.ValStarts)), nil
}

// teacher plays a published policy's choices on an episode and records
// its decisions with a choice among the visible jobs: the imitation's
// data.
type teacher struct {
	key   rlscheduler.Key
	jobs  []rlscheduler.Job
	norm  Norm
	fs    int
	x     []float64
	vis   []int
	steps []imitStep
}

// imitStep is one decision the teacher took: the visible jobs' features
// and the position of its choice among them.
type imitStep struct {
	x         []float64
	n, action int
}

func (t *teacher) Choose(now int64, free, nodes int, waiting []rlscheduler.Waiting) int {
	if len(waiting) <= 1 {
		return 0
	}
	best := 0
	bk := t.key(t.jobs[waiting[0].Job], now)
	for i := 1; i < len(waiting); i++ {
		if k := t.key(t.jobs[waiting[i].Job], now); rlscheduler.CmpKeys(k, bk) < 0 {
			best, bk = i, k
		}
	}
	var n int
	t.vis, n = observe(t.x, t.vis, now, free, nodes, waiting, t.norm, t.fs)
	// A choice outside the visible jobs is not one the kernel can take:
	// it is played, not learned.
	if a := slices.Index(t.vis, best); a >= 0 {
		t.steps = append(t.steps, imitStep{x: append([]float64(nil), t.x[:n*Features]...), n: n, action: a})
	}
	return best
}

// imitateRLScheduler trains net's kernel by cross-entropy on the choices
// of cfg.Imitate over cfg.ImitationEpisodes training episodes it plays,
// and returns the share of those decisions the kernel then takes alike
// (argmax) and the teacher's mean bounded slowdown over the episodes.
func imitateRLScheduler(ctx context.Context, cfg TrainConfig, net *RLScheduler, norm Norm, starts []int, rng *rand.Rand) (float64, float64, error) {
	key, err := rlscheduler.KeyOf(cfg.Imitate)
	if err != nil {
		return 0, 0, err
	}
	t := &teacher{key: key, norm: norm, fs: cfg.FeatureSet, x: make([]float64, MaxVisible*Features)}
	var sum float64
	if err := collect(ctx, cfg.ImitationEpisodes, starts, rng, func(st int) error {
		seq := rlscheduler.Sequence{W: cfg.Workload, Start: st, Len: cfg.EpisodeLen}
		t.jobs = seq.Jobs()
		s, err := rlscheduler.ReplayChooser(ctx, seq, t)
		if err != nil {
			return err
		}
		sum += s.Mean()
		return nil
	}); err != nil {
		return 0, 0, err
	}
	opt := learn.NewAdam(net.Kernel.Params(), cfg.LRImit, 0)
	p := make([]float64, MaxVisible)
	var x, dz []float64
	idx := learn.Iota(len(t.steps))
	for range cfg.ImitationEpochs {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		learn.Pass(idx, cfg.Minibatch, rng, func(mb []int) {
			x = learn.Gather(x, mb, func(i int) []float64 { return t.steps[i].x })
			rows := len(x) / Features
			z := net.Kernel.Forward(x, rows)
			dz = learn.Grow(dz, rows)
			off := 0
			for _, i := range mb {
				st := &t.steps[i]
				learn.MaskedSoftmax(p[:st.n], z[off:off+st.n], st.n)
				copy(dz[off:off+st.n], p[:st.n])
				dz[off+st.action]--
				off += st.n
			}
			net.Kernel.Backward(dz, rows)
			opt.Step(1 / float64(len(mb)))
		})
	}
	same := 0
	for i := range t.steps {
		st := &t.steps[i]
		z := net.Kernel.Forward(st.x, st.n)
		learn.MaskedSoftmax(p[:st.n], z, st.n)
		if learn.Pick(p, st.n, false, nil) == st.action {
			same++
		}
	}
	return float64(same) / float64(max(len(t.steps), 1)), sum / float64(cfg.ImitationEpisodes), nil
}

// ppoUpdate runs PPOEpochs passes of minibatch steps over the batch: the
// kernel on all the minibatch's visible jobs at once (one row per job;
// the softmax per step over its rows), the critic on the summaries.
func ppoUpdate(cfg TrainConfig, net *RLScheduler, optA, optC *learn.Adam, steps []step, rng *rand.Rand) {
	o := &learn.PPO{Clip: cfg.Clip, Entropy: cfg.Entropy}
	at := func(i int) *learn.Decision { return &steps[i].Decision }
	var x, xc []float64
	learn.Minibatches(len(steps), cfg.Minibatch, cfg.PPOEpochs, false, rng, func(mb []int) {
		x = learn.Gather(x, mb, func(i int) []float64 { return steps[i].x })
		xc = learn.Gather(xc, mb, func(i int) []float64 { return steps[i].c })
		var prior func(i int, z []float64)
		if net.Residual == ResidualF1 {
			prior = func(i int, z []float64) {
				for r, v := range steps[i].prior {
					z[r] += v
				}
			}
		}
		o.Actor(net.Kernel, optA, x, len(x)/Features, 0, mb, at, prior, 1/float64(len(mb)))
		o.Critic(net.Critic, optC, xc, mb, at)
	})
}
