package learned

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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
	// Progress, when set, is called after every update.
	Progress func(TrainUpdate)
}

// DefaultTrainConfig returns the settings of the shipped weights but for
// Workload.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{Seed: 1, Updates: 300, EpisodesPerUpdate: 16, EpisodeLen: 256,
		TestStarts: rlscheduler.Starts, TestLen: rlscheduler.SequenceLength, PPOEpochs: 4, Minibatch: 256,
		Clip: 0.2, LRActor: 3e-4, LRCritic: 1e-3, Gamma: 1, Lambda: 0.97, Entropy: 0.01, MaxGradNorm: 0.5, RewardScale: 100}
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
	Elapsed time.Duration `json:"elapsed_ns"`
}

// TrainResult is TrainRLScheduler's outcome.
type TrainResult struct {
	Policy *RLScheduler
	Curve  []TrainUpdate
	// Starts are the episode starts training drew from.
	Starts []int
}

// ErrTrainConfig is wrapped by TrainRLScheduler's configuration errors.
var ErrTrainConfig = errors.New("learned: bad training configuration")

func (c *TrainConfig) fill() error {
	learn.FillZero(c, DefaultTrainConfig())
	if c.Workload == nil || len(c.Workload.Jobs) == 0 {
		return fmt.Errorf("%w: no workload", ErrTrainConfig)
	}
	return ppoSettings{c.EpisodesPerUpdate, c.EpisodeLen, c.PPOEpochs, c.Minibatch, c.Clip, c.LRActor, c.LRCritic, c.Gamma, c.Entropy}.
		check(c.Updates < 1, c.Lambda < 0 || c.Lambda > 1)
}

// TrainingStarts returns the starts of the episodes of length epLen in a
// workload of n jobs that overlap none of the test sequences [t, t +
// testLen): training never sees a test job.
func TrainingStarts(n, epLen int, testStarts []int, testLen int) []int {
	var out []int
	for s := 0; s+epLen <= n; s++ {
		ok := true
		for _, t := range testStarts {
			if s < t+testLen && t < s+epLen {
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
	x []float64 // N × Features
	c []float64 // critic input
	learn.Decision
}

// recorder is the training chooser: it samples from the actor and
// records the steps.
type recorder struct {
	net    *RLScheduler
	norm   Norm
	rng    *rand.Rand
	x, p   []float64
	c      []float64
	vis    []int
	steps  []step
	entSum float64
}

func (r *recorder) Choose(now int64, free, nodes int, waiting []rlscheduler.Waiting) int {
	if len(waiting) <= 1 {
		return 0
	}
	var n int
	r.vis, n = observe(r.x, r.vis, now, free, nodes, waiting, r.norm)
	x := append([]float64(nil), r.x[:n*Features]...)
	logits := r.net.Kernel.Forward(x, n)
	lse := learn.MaskedSoftmax(r.p, logits, n)
	a := learn.Pick(r.p, n, true, r.rng)
	r.entSum += learn.Entropy(r.p, n)
	c := make([]float64, criticIn)
	summarise(c, x, n)
	v := r.net.Critic.Forward(c, 1)[0]
	r.steps = append(r.steps, step{x: x, c: c, Decision: learn.Decision{N: n, Action: a, LogP: logits[a] - lse, Value: v}})
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
	starts, err := episodeStarts(len(cfg.Workload.Jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	if err != nil {
		return nil, err
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
	optA := learn.NewAdam(net.Kernel.Params(), cfg.LRActor, cfg.MaxGradNorm)
	optC := learn.NewAdam(net.Critic.Params(), cfg.LRCritic, cfg.MaxGradNorm)
	norm := NormOf(cfg.Workload)
	f1 := map[int]float64{}
	res := &TrainResult{Policy: net, Starts: starts}
	rec := &recorder{net: net, norm: norm, rng: rng, x: make([]float64, MaxVisible*Features), p: make([]float64, MaxVisible)}
	episodes := 0
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
		up.Elapsed = time.Since(t0)
		res.Curve = publish(res.Curve, up, cfg.Progress)
	}
	net.Critic = nil
	learn.RoundWeights(net.Kernel.Params())
	return res, nil
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
		o.Actor(net.Kernel, optA, x, len(x)/Features, 0, mb, at, nil, 1/float64(len(mb)))
		o.Critic(net.Critic, optC, xc, mb, at)
	})
}
