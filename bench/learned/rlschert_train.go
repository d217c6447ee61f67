package learned

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/optsched/optsched/bench/rlscheduler"
	"github.com/optsched/optsched/bench/sim"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics/learn"
	"github.com/optsched/optsched/model"
)

// SchertTrainConfig configures TrainRLSchert. Zero fields take
// DefaultSchertTrainConfig's values, except Jobs and Nodes.
type SchertTrainConfig struct {
	// Jobs are the trace's jobs (by submit; bench/trace's order) and
	// Nodes the cluster's size.
	Jobs  []trace.Job
	Nodes int
	// Seed seeds the weights, the episodes' starts, the sampled actions
	// and the minibatches.
	Seed uint64
	// ImitationEpisodes are the episodes the rules play to make the
	// imitation data; ImitationEpochs the passes over it.
	ImitationEpisodes, ImitationEpochs int
	// Updates is the number of PPO updates; EpisodesPerUpdate the
	// episodes each collects; EpisodeLen the jobs of an episode.
	Updates, EpisodesPerUpdate, EpisodeLen int
	// TestStarts and TestLen are the job ranges training never touches
	// (rlscheduler.Starts and SequenceLength, as indexes into Jobs).
	TestStarts []int
	TestLen    int
	// PPO's passes, minibatch, ε, Adam's rates (actor and killer, critic),
	// GAE's γ and λ, the entropy bonus and the gradient-norm clip; LRImit
	// is the imitation's rate.
	PPOEpochs, Minibatch                                                 int
	Clip, LRActor, LRCritic, LRImit, Gamma, Lambda, Entropy, MaxGradNorm float64
	// Design is the design's variant the networks are trained for (the
	// zero value is the paper's; DefaultSchertTrainConfig's is
	// NewSchertDesign).
	Design SchertDesign
	// FlatPicker trains the paper's flat picker (SchertFlatSizes) instead
	// of the kernel one.
	FlatPicker bool
	// NoKill trains without the kill action (the killer keeps its
	// imitation weights; the shipped weights' setting, chosen on
	// validation sequences).
	NoKill bool
	// Progress, when set, is called after the imitation (Update 0) and
	// every update.
	Progress func(SchertUpdate)
}

// DefaultSchertTrainConfig returns the settings of the shipped weights
// but for Jobs and Nodes.
func DefaultSchertTrainConfig() SchertTrainConfig {
	return SchertTrainConfig{Seed: 1, ImitationEpisodes: 48, ImitationEpochs: 40, Updates: 120, EpisodesPerUpdate: 8, EpisodeLen: 256,
		TestStarts: rlscheduler.Starts, TestLen: rlscheduler.SequenceLength, PPOEpochs: 4, Minibatch: 256,
		Clip: 0.2, LRActor: 1e-4, LRCritic: 1e-3, LRImit: 1e-3, Gamma: 1, Lambda: 0.95, Entropy: 0.005, MaxGradNorm: 0.5,
		Design: NewSchertDesign, NoKill: true}
}

func (c *SchertTrainConfig) fill() error {
	learn.FillZero(c, DefaultSchertTrainConfig())
	if len(c.Jobs) == 0 || c.Nodes < 1 {
		return fmt.Errorf("%w: no jobs or no nodes", ErrTrainConfig)
	}
	return ppoSettings{c.EpisodesPerUpdate, c.EpisodeLen, c.PPOEpochs, c.Minibatch, c.Clip, c.LRActor, c.LRCritic, c.Gamma, c.Entropy}.
		check(c.Updates < 0 || c.ImitationEpisodes < 0, c.Lambda < 0 || c.Lambda > 1)
}

// SchertUpdate reports the imitation (Update 0) or one PPO update.
type SchertUpdate struct {
	Update, Updates, Episodes int
	// Steps are the recorded decisions (picks with a choice and kill
	// decisions), Kills the kills.
	Steps, Kills int
	// MeanSlowdown is the mean over the batch's episodes of their mean
	// (unbounded) slowdown; MeanRule that of the rules (the shortest
	// predicted fitting visible job first, no kill) on the same episodes.
	MeanSlowdown, MeanRule float64
	// ImitationAccuracy is the share of the imitation data's decisions
	// the trained networks take as the rules did (Update 0).
	ImitationAccuracy float64 `json:",omitempty"`
	// KillRecall is the share of the rule's kills the trained killer
	// makes alike (Update 0).
	KillRecall float64 `json:",omitempty"`
	Elapsed    time.Duration
}

// SchertTrainResult is TrainRLSchert's outcome.
type SchertTrainResult struct {
	Policy *RLSchert
	Curve  []SchertUpdate
	// Starts are the episode starts training drew from.
	Starts []int
}

// schertStep is one recorded decision: a pick among the SchertVisible+1
// picker rows (N of them, the invalid masked) or a kill decision among
// the N killer rows.
type schertStep struct {
	kill  bool
	x     []float64 // the critic's input
	ax    []float64 // the picker's rows (pick steps)
	valid [SchertVisible + 1]bool
	kx    []float64 // the killer's rows (kill steps)
	learn.Decision
}

// schertRecorder records a Schert's decisions and their rewards: between
// two events the reward is −Δt · Σ 1/L̂ over the jobs in the system
// (waiting or running), L̂ a job's predicted length (its predicted total
// run time; elapsed + predicted remaining once it runs), per job of the
// episode; it goes to the last decision before the interval.
type schertRecorder struct {
	imitate bool
	critic  *learn.Seq
	steps   []schertStep
	first   int // the episode's first step
	lastT   int64
	rate    float64
	scale   float64
	kills   int
}

func (r *schertRecorder) tick(s *Schert, now int64, queue []sim.QueuedJob, running []sim.RunningJob) {
	if now == r.lastT {
		return
	}
	if len(r.steps) > r.first {
		r.steps[len(r.steps)-1].Reward -= float64(now-r.lastT) * r.rate * r.scale
	}
	r.lastT = now
	r.rate = 0
	for _, q := range queue {
		r.rate += 1 / s.Pred.Total(q.User, q.Request, 0)
	}
	for _, j := range running {
		r.rate += 1 / s.Pred.Total(j.User, j.Request, now-j.Start)
	}
}

func (r *schertRecorder) value(x []float64) float64 {
	if r.critic == nil {
		return 0
	}
	return r.critic.Forward(x, 1)[0]
}

func (r *schertRecorder) addPick(s *Schert, a int, logp float64) {
	x := append([]float64(nil), s.obs.x[:]...)
	ax := append([]float64(nil), s.obs.ax[:]...)
	r.steps = append(r.steps, schertStep{x: x, ax: ax, valid: s.obs.valid,
		Decision: learn.Decision{N: SchertVisible + 1, Action: a, LogP: logp, Value: r.value(x)}})
}

func (r *schertRecorder) addKill(s *Schert, c, a int, logp float64) {
	x := append([]float64(nil), s.obs.x[:]...)
	kx := append([]float64(nil), s.obs.kx[:(c+1)*KillFeatures]...)
	r.steps = append(r.steps, schertStep{kill: true, x: x, kx: kx, Decision: learn.Decision{N: c + 1, Action: a, LogP: logp, Value: r.value(x)}})
	if a < c {
		r.kills++
	}
}

// schertEnv runs episodes.
type schertEnv struct {
	cfg  SchertTrainConfig
	topo *model.Topology
}

func newSchertEnv(cfg SchertTrainConfig) (*schertEnv, error) {
	topo, err := SchertTopology(cfg.Nodes)
	if err != nil {
		return nil, err
	}
	return &schertEnv{cfg: cfg, topo: topo}, nil
}

// SchertTopology returns the layout TrainRLSchert simulates a cluster of
// nodes on: whole pods of 4 leaves × 10 nodes, as optsched simulate.
func SchertTopology(nodes int) (*model.Topology, error) { return model.NewLayout((nodes+39)/40, 4, 10) }

// PrimeFrom is the jobs before an episode whose runs prime its predictor.
const PrimeFrom = 5000

// episode runs jobs [start, start+len) under s (the predictor primed
// with the jobs before) and returns the mean unbounded slowdown.
func (e *schertEnv) episode(ctx context.Context, start int, s *Schert, check bool) (float64, *sim.Result, error) {
	jobs := e.cfg.Jobs[start : start+e.cfg.EpisodeLen]
	s.Pred.Prime(e.cfg.Jobs[max(0, start-PrimeFrom):start], jobs[0].Submit)
	res, err := sim.Run(ctx, &trace.Trace{Jobs: jobs}, sim.Config{Topology: e.topo, Nodes: e.cfg.Nodes, Policy: sim.Learned,
		Picker: s, Killer: s, Check: check, DiscardNodes: true})
	if err != nil {
		return 0, nil, err
	}
	return MeanSlowdown(res), res, nil
}

// MeanSlowdown is the mean unbounded slowdown (end − submit) / run time
// of r's jobs, the run time floored at 1 s.
func MeanSlowdown(r *sim.Result) float64 {
	if len(r.Jobs) == 0 {
		return 0
	}
	var s float64
	for _, j := range r.Jobs {
		s += float64(j.End-j.Submit) / float64(max(j.End-j.Start, 1))
	}
	return s / float64(len(r.Jobs))
}

// TrainRLSchert trains the design: the picker and the killer first
// imitate the rules (Schert.Rule) on episodes the rules play, then PPO
// improves both on the reward −Σ Δt/L̂ (schertRecorder), all with the
// one learning core (learn.PPOLogitGrad, learn.GAE, learn.Adam). It is
// deterministic for a configuration and checks ctx between episodes.
func TrainRLSchert(ctx context.Context, cfg SchertTrainConfig) (*SchertTrainResult, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	starts, err := episodeStarts(len(cfg.Jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	if err != nil {
		return nil, err
	}
	env, err := newSchertEnv(cfg)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	rng := learn.NewRand(cfg.Seed, 0x7363_6874_7261_696e)
	net := NewRLSchertPicker(SchertNormOf(cfg.Jobs), cfg.FlatPicker, rng)
	net.Design = cfg.Design
	res := &SchertTrainResult{Policy: net, Starts: starts}
	rule := map[int]float64{}
	ruleOf := func(st int) (float64, error) {
		if v, ok := rule[st]; ok {
			return v, nil
		}
		s := NewSchert(net, false, false, 0)
		s.Rule = true
		v, _, err := env.episode(ctx, st, s, false)
		rule[st] = v
		return v, err
	}
	episodes := 0

	// Imitation: the rules act (with kills), the networks learn their
	// choices by cross-entropy.
	rec := &schertRecorder{imitate: true}
	var sumRule float64
	if err := collect(ctx, cfg.ImitationEpisodes, starts, rng, func(st int) error {
		s := NewSchert(net, true, false, 0)
		s.Rule, s.rec = true, rec
		rec.first, rec.lastT, rec.scale = len(rec.steps), -1, 1/float64(cfg.EpisodeLen)
		if _, _, err := env.episode(ctx, st, s, false); err != nil {
			return err
		}
		v, err := ruleOf(st)
		if err != nil {
			return err
		}
		sumRule += v
		episodes++
		return nil
	}); err != nil {
		return nil, err
	}
	if len(rec.steps) > 0 {
		acc, recall := imitate(cfg, net, rec.steps, rng)
		up := SchertUpdate{Updates: cfg.Updates, Episodes: episodes, Steps: len(rec.steps), Kills: rec.kills,
			MeanSlowdown: sumRule / float64(cfg.ImitationEpisodes), MeanRule: sumRule / float64(cfg.ImitationEpisodes),
			ImitationAccuracy: acc, KillRecall: recall, Elapsed: time.Since(t0)}
		res.Curve = publish(res.Curve, up, cfg.Progress)
	}

	optA := learn.NewAdam(net.Actor.Params(), cfg.LRActor, cfg.MaxGradNorm)
	optK := learn.NewAdam(net.Killer.Params(), cfg.LRActor, cfg.MaxGradNorm)
	optC := learn.NewAdam(net.Critic.Params(), cfg.LRCritic, cfg.MaxGradNorm)
	for u := 1; u <= cfg.Updates; u++ {
		rec := &schertRecorder{critic: net.Critic}
		var sumRL, sumR float64
		if err := collect(ctx, cfg.EpisodesPerUpdate, starts, rng, func(st int) error {
			b, err := ruleOf(st)
			if err != nil {
				return err
			}
			s := NewSchert(net, !cfg.NoKill, true, rng.Uint64())
			s.rec = rec
			// Scaled by the rule's mean slowdown on the same jobs, the
			// returns are near −1 on every episode, light or loaded.
			rec.first, rec.lastT, rec.scale = len(rec.steps), -1, 1/(float64(cfg.EpisodeLen)*max(b, 1))
			m, _, err := env.episode(ctx, st, s, false)
			if err != nil {
				return err
			}
			sumRL += m
			sumR += b
			episodes++
			eps := rec.steps[rec.first:]
			if len(eps) == 0 {
				return nil
			}
			learn.EpisodeGAE(len(eps), func(i int) *learn.Decision { return &eps[i].Decision }, cfg.Gamma, cfg.Lambda)
			return nil
		}); err != nil {
			return nil, err
		}
		up := SchertUpdate{Update: u, Updates: cfg.Updates, Episodes: episodes, Steps: len(rec.steps), Kills: rec.kills,
			MeanSlowdown: sumRL / float64(cfg.EpisodesPerUpdate), MeanRule: sumR / float64(cfg.EpisodesPerUpdate)}
		if len(rec.steps) > 0 {
			learn.NormalizeAdv(len(rec.steps), func(i int) *learn.Decision { return &rec.steps[i].Decision })
			schertPPO(cfg, net, optA, optK, optC, rec.steps, rng)
		}
		up.Elapsed = time.Since(t0)
		res.Curve = publish(res.Curve, up, cfg.Progress)
	}
	net.Critic = nil
	learn.RoundWeights(net.Actor.Params())
	learn.RoundWeights(net.Killer.Params())
	return res, nil
}

// imitate trains the picker and the killer by cross-entropy on the
// rules' decisions (the rule's kills weighted up to balance its no-kills)
// and returns the share of the decisions the networks then take alike,
// and the share of the rule's kills.
func imitate(cfg SchertTrainConfig, net *RLSchert, steps []schertStep, rng *rand.Rand) (agree, killRecall float64) {
	optA := learn.NewAdam(net.Actor.Params(), cfg.LRImit, 0)
	optK := learn.NewAdam(net.Killer.Params(), cfg.LRImit, 0)
	var picks, kills []int
	for i := range steps {
		if steps[i].kill {
			kills = append(kills, i)
		} else {
			picks = append(picks, i)
		}
	}
	p := make([]float64, MaxKillCandidates+1)
	var x, dz []float64
	nk := 0
	for _, i := range kills {
		if steps[i].Action < steps[i].N-1 {
			nk++
		}
	}
	killWeight := 1.0
	if nk > 0 {
		killWeight = min(float64(len(kills)-nk)/float64(nk), 50)
	}
	for range cfg.ImitationEpochs {
		learn.Pass(picks, cfg.Minibatch, rng, func(mb []int) {
			x = x[:0]
			rows := 0
			for _, i := range mb {
				in, n := pickerInput(net.Flat, steps[i].x, steps[i].ax)
				x = append(x, in...)
				rows += n
			}
			z := net.Actor.Forward(x, rows)
			dz = learn.Grow(dz, len(z))
			const w = SchertVisible + 1
			for r, i := range mb {
				zr := z[r*w : (r+1)*w]
				maskLogits(zr, steps[i].valid[:])
				learn.MaskedSoftmax(p[:w], zr, w)
				copy(dz[r*w:(r+1)*w], p[:w])
				dz[r*w+steps[i].Action]--
			}
			net.Actor.Backward(dz, rows)
			optA.Step(1 / float64(len(mb)))
		})
		learn.Pass(kills, cfg.Minibatch, rng, func(mb []int) {
			x, rows := x[:0], 0
			for _, i := range mb {
				x = append(x, steps[i].kx...)
				rows += steps[i].N
			}
			z := net.Killer.Forward(x, rows)
			dz = learn.Grow(dz, rows)
			off := 0
			for _, i := range mb {
				n := steps[i].N
				learn.MaskedSoftmax(p[:n], z[off:off+n], n)
				wt := 1.0
				if steps[i].Action < n-1 {
					wt = killWeight // the rule's rare kills weigh as much as its many no-kills
				}
				for j := range n {
					dz[off+j] = wt * p[j]
				}
				dz[off+steps[i].Action] -= wt
				off += n
			}
			net.Killer.Backward(dz, rows)
			optK.Step(1 / float64(len(mb)))
		})
	}
	// Agreement after training.
	same, killSame := 0, 0
	for i := range steps {
		st := &steps[i]
		if st.kill {
			z := net.Killer.Forward(st.kx, st.N)
			learn.MaskedSoftmax(p[:st.N], z, st.N)
			if learn.Pick(p[:st.N], st.N, false, nil) == st.Action {
				same++
				if st.Action < st.N-1 {
					killSame++
				}
			}
			continue
		}
		z := append([]float64(nil), net.Actor.Forward(pickerInput(net.Flat, st.x, st.ax))...)
		maskLogits(z, st.valid[:])
		learn.MaskedSoftmax(p[:SchertVisible+1], z, SchertVisible+1)
		if learn.Pick(p[:SchertVisible+1], SchertVisible+1, false, nil) == st.Action {
			same++
		}
	}
	killRecall = 1.0
	if nk > 0 {
		killRecall = float64(killSame) / float64(nk)
	}
	return float64(same) / float64(len(steps)), killRecall
}

// schertPPO runs PPOEpochs passes of minibatches over the batch: the
// picker on its steps, the killer on its steps (all candidate rows of a
// minibatch at once, a softmax per step), the critic on all.
func schertPPO(cfg SchertTrainConfig, net *RLSchert, optA, optK, optC *learn.Adam, steps []schertStep, rng *rand.Rand) {
	const w = SchertVisible + 1
	o := &learn.PPO{Clip: cfg.Clip, Entropy: cfg.Entropy}
	at := func(i int) *learn.Decision { return &steps[i].Decision }
	mask := func(i int, z []float64) { maskLogits(z, steps[i].valid[:]) }
	var x, xk []float64
	var picks, kills []int
	learn.Minibatches(len(steps), cfg.Minibatch, cfg.PPOEpochs, false, rng, func(mb []int) {
		picks, kills = picks[:0], kills[:0]
		x, xk = x[:0], xk[:0]
		rows, prows := 0, 0
		for _, i := range mb {
			if steps[i].kill {
				kills = append(kills, i)
				xk = append(xk, steps[i].kx...)
				rows += steps[i].N
			} else {
				picks = append(picks, i)
				in, n := pickerInput(net.Flat, steps[i].x, steps[i].ax)
				x = append(x, in...)
				prows += n
			}
		}
		scale := 1 / float64(len(mb))
		if len(picks) > 0 {
			o.Actor(net.Actor, optA, x, prows, w, picks, at, mask, scale)
		}
		if len(kills) > 0 && !cfg.NoKill {
			o.Actor(net.Killer, optK, xk, rows, 0, kills, at, nil, scale)
		}
		x = learn.Gather(x, mb, func(i int) []float64 { return steps[i].x })
		o.Critic(net.Critic, optC, x, mb, at)
	})
}
