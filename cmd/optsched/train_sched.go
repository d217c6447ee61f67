package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/rlscheduler"
)

// trainSchedOptions are the inputs of `optsched train sched`.
type trainSchedOptions struct {
	streams   *streams
	design    string
	trace     string
	objective string
	seed      uint64
	epochs    int
	episodes  int
	dropFirst int
	out       string
	plot      string
	verbose   bool
	synthetic bool
	imitation int
	// exclude are more starts (validation sequences) whose jobs training
	// also skips; episodeLen and window are joshh's.
	exclude    []int
	episodeLen int
	window     string
	minLoad    float64
	// picker is rlschert's: kernel (the default) or flat.
	picker string
	// visible, reserve, rank and killPPO are rlschert's design (see
	// learned.SchertDesign): visible queue (the default) or oldest (the
	// paper's design whole), the reservation's holder, the rank key; and
	// whether PPO trains the killer (else it keeps its imitation).
	visible, reserve, rank string
	killPPO                bool
	// killMargin and killElapsed are KillRule2's thresholds.
	killMargin, killElapsed float64
	// rlscheduler's: the feature set, the imitated policy, the
	// validation sequences and their length, the actor's rate and the
	// entropy bonus (0: the defaults).
	features                 int
	residual                 string
	temperature              float64
	imitate                  string
	validate                 []int
	validateLen, validateEvr int
	lrActor, entropy         float64
	imitationSet             bool
	imitationPasses          int
	validateSample           bool
	// epochsSet and episodesSet: the flags were given (else the design's
	// defaults).
	epochsSet, episodesSet bool
}

func newTrainSchedCmd(s *streams, runF func(*trainSchedOptions) error) *cobra.Command {
	opts := &trainSchedOptions{streams: s}
	d := learned.DefaultTrainConfig()
	cmd := &cobra.Command{
		Use:   "sched --design rlscheduler|rlschert|joshh --trace FILE [--objective bsld|slowdown|turnaround] [--seed N] [--epochs N] --out FILE",
		Short: "Train a learned job-selection policy with PPO on an SWF trace",
		Long: `Trains a learned job-selection design with PPO (heuristics/learn) and
writes its weights. Designs: rlscheduler (Zhang et al., SC'20: a kernel
network scoring every visible job, up to 128, with one shared MLP
8-32-16-8-1) and rlschert (Wang et al., Appl. Sci. 2021: a picker over
5 visible jobs and the cluster's time x cores occupancy, with a
remaining-time predictor and a kill-and-requeue action; first trained
by imitation of rules, then PPO; objective slowdown; by default the
visible jobs come from the whole queue around an EASY reservation,
--visible oldest is the paper's 5 oldest); see docs/learned.md.

Episodes are 256 consecutive jobs of the trace whose start is drawn from
the parts of the trace that overlap none of the ten test sequences of
optsched bench rlscheduler (starts 1981, 2756, 4299, 8850, 3316, 2714,
5228, 7762, 4022, 7085, 1,024 jobs each), run by the protocol's loop
without backfilling; the reward is minus the episode's mean bounded
slowdown (rlschert: minus the sum over time of 1 / predicted length over
the jobs in the system, the paper's reward). Each epoch is one PPO update
on --episodes episodes. rlschert with --synthetic trains on RLSchert's
synthetic workload (its Table 2) instead of a trace.

joshh (JoSHH, Sun 2022: a job selector over the first 5 waiting jobs and
the cluster's occupancy over 5 hourly steps, and an allocation selector
choosing depth-first or breadth-first placement per job) trains on
episodes of 1,024 jobs outside the same test sequences, in bench/sim on
the trace's cluster as a switch tree (pods of 4 leaves of 10 nodes); the
selector's return is its discounted local reward (minus the queue's
wait / run time) times the episode's mean normalised turnaround, the
allocation selector's reward each placement's CH-cost saving against
first-fit (docs/learned.md).

Training is deterministic: the same flags give the same file.`,
		Example: `  optsched train sched --design rlscheduler --trace instances/traces/lublin_256.swf.gz --out rl.bin.gz --plot curve.png
  optsched bench rlscheduler --trace instances/traces/lublin_256.swf.gz --policies f1,sjf,rl-here --weights rl.bin.gz
  optsched train sched --design rlschert --trace instances/traces/HPC2N-2002-2.1-cln.swf.gz --out schert.bin.gz
  optsched bench rlschert --trace instances/traces/HPC2N-2002-2.1-cln.swf.gz --weights schert.bin.gz
  optsched train sched --design joshh --trace instances/traces/lublin_256.swf.gz --out joshh.bin.gz`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.epochsSet, opts.episodesSet = cmd.Flags().Changed("epochs"), cmd.Flags().Changed("episodes")
			opts.imitationSet = cmd.Flags().Changed("imitation")
			if runF != nil {
				return runF(opts)
			}
			return runTrainSched(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.design, "design", "rlscheduler", "design to train: rlscheduler, rlschert or joshh")
	f.StringVar(&opts.trace, "trace", "", "SWF trace to train on (required but with --synthetic)")
	f.IntVar(&opts.imitation, "imitation", learned.DefaultSchertTrainConfig().ImitationEpisodes, "rlschert: episodes the rules play for the imitation before PPO")
	f.BoolVar(&opts.synthetic, "synthetic", false, "rlschert: train on RLSchert's synthetic workload (seeded by --seed) instead of a trace")
	f.StringVar(&opts.objective, "objective", "", "objective: bsld (mean bounded slowdown; rlscheduler's), slowdown (rlschert's) or turnaround (mean normalised turnaround; joshh's); default the design's")
	f.Uint64Var(&opts.seed, "seed", d.Seed, "seed of the weights, episodes and sampled actions")
	f.IntVar(&opts.epochs, "epochs", d.Updates, fmt.Sprintf("PPO updates (epochs; rlschert's default %d, joshh's %d)", learned.DefaultSchertTrainConfig().Updates, learned.DefaultJoSHHTrainConfig().Updates))
	f.IntVar(&opts.episodes, "episodes", d.EpisodesPerUpdate, fmt.Sprintf("episodes per epoch (of 256 jobs; rlschert's default %d; joshh's %d of %d jobs)", learned.DefaultSchertTrainConfig().EpisodesPerUpdate, learned.DefaultJoSHHTrainConfig().EpisodesPerUpdate, learned.DefaultJoSHHTrainConfig().EpisodeLen))
	f.IntVar(&opts.dropFirst, "drop-first", -1, "drop the first N job records of the file (default: 5 for HPC2N-2002-2.1*, else 0)")
	f.IntSliceVar(&opts.exclude, "exclude", nil, "starts of more sequences (of 1,024 jobs: validation sequences) that training never touches, besides the ten test sequences")
	f.Float64Var(&opts.minLoad, "min-load", 0, "rlscheduler: train only on episodes of an offered load (node-seconds of work over the cluster's between the first and last submit) of at least this (0: all)")
	f.IntVar(&opts.features, "features", d.FeatureSet, "rlscheduler: the kernel's feature set: 1 (the last feature the queue's length) or 2 (the last feature nodes x log requested time, F1's main term)")
	f.StringVar(&opts.residual, "residual", "", "rlscheduler: train a residual policy over a published key (f1): a job's logit is F1's key, negated, over --temperature, plus the kernel's correction, which starts at zero (the untrained policy is F1; feature set 2; excludes --imitate)")
	f.Float64Var(&opts.temperature, "temperature", d.Temperature, "rlscheduler: the residual policy's temperature (in units of feature set 2's F1 terms)")
	f.StringVar(&opts.imitate, "imitate", "", "rlscheduler: warm-start by imitation of a published policy (f1 or sjf) before PPO (a choice the paper did not make; --imitation sets its episodes)")
	f.IntVar(&opts.imitationPasses, "imitation-passes", d.ImitationEpochs, "rlscheduler: passes over the imitation's data")
	f.IntSliceVar(&opts.validate, "validate", nil, "rlscheduler: starts of validation sequences (excluded from training): the argmax policy's mean on them every --validate-every epochs picks the weights written")
	f.BoolVar(&opts.validateSample, "validate-sample", false, "rlscheduler: validate the sampled policy (seeded per sequence, as bench rlscheduler --sample) instead of the argmax one")
	f.IntVar(&opts.validateLen, "validate-len", d.ValLen, "rlscheduler: jobs per validation sequence")
	f.IntVar(&opts.validateEvr, "validate-every", d.ValEvery, "rlscheduler: epochs between validations")
	f.Float64Var(&opts.lrActor, "lr", d.LRActor, "rlscheduler: the actor's Adam rate")
	f.Float64Var(&opts.entropy, "entropy", d.Entropy, "rlscheduler: PPO's entropy bonus")
	f.IntVar(&opts.episodeLen, "episode-len", learned.DefaultJoSHHTrainConfig().EpisodeLen, "joshh: jobs per episode")
	f.StringVar(&opts.window, "window", "easy-shortest-strict", "joshh: the visible jobs: easy-shortest-strict (the default: an EASY reservation for the shortest waiting job, which starts once it fits; the oldest and the 4 shortest jobs that fit and do not delay it), fitting (no reservation: the oldest fitting job and the 4 shortest fitting others), arrival (the paper's: the first 5 waiting jobs), easy-oldest, easy-shortest, easy-xfactor, easy-area (fitting, less the jobs that would delay a reservation for the oldest, the shortest, the largest (wait + request) / request, or the smallest request × nodes (its visible jobs ranked by area: the shipped weights are easy-area on Lublin-1, easy-area-strict on HPC2N); each also -strict), easy-oldest-guard (easy-oldest, strict once the held job has waited min(its request, 12 h)), easy-shortest-jump (easy-shortest, the last slot a job that would delay it)")
	f.StringVar(&opts.visible, "visible", "queue", "rlschert: the visible jobs: queue (the reservation's holder and the first 4 by rank of the jobs that may start without delaying it, user-mape, KillRule2) or oldest (the paper's design: the 5 oldest, user-ratio-cond, KillRule)")
	f.StringVar(&opts.reserve, "reserve", learned.NewSchertDesign.Reserve.String(), "rlschert --visible queue: the reservation's holder: oldest, key (the job of the lowest rank key) or none")
	f.StringVar(&opts.rank, "rank", learned.NewSchertDesign.RankName(), "rlschert --visible queue: the rank key: length or area (predicted length, × nodes), length-req or area-req (requested)")
	f.BoolVar(&opts.killPPO, "kill-ppo", !learned.DefaultSchertTrainConfig().NoKill, "rlschert: PPO trains the killer too (false: the killer keeps its imitation of the kill rule and PPO's episodes run without kills)")
	f.Float64Var(&opts.killMargin, "kill-margin", learned.NewSchertDesign.KillMargin, "rlschert --visible queue: KillRule2's margin (the kill rule the killer imitates)")
	f.Float64Var(&opts.killElapsed, "kill-elapsed", learned.NewSchertDesign.KillElapsed, "rlschert --visible queue: KillRule2's largest share of its predicted length a job may have run and be killed")
	f.StringVar(&opts.picker, "picker", "kernel", "rlschert: the picker network: kernel (one MLP scoring each visible job and the void action alike) or flat (the paper's MLP over the whole state, 50-64-32-6)")
	f.StringVar(&opts.out, "out", "", "weights file to write (required)")
	f.StringVar(&opts.plot, "plot", "", "learning-curve PNG/SVG (default: the weights file's name with .png)")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print a line per epoch on stderr (default when stderr is not a terminal)")
	return cmd
}

// rlDropDefault is bench rlscheduler's default --drop-first for a trace.
func rlDropDefault(trace string, drop int) int {
	if drop >= 0 {
		return drop
	}
	return rlscheduler.DropFirstOf(trace)
}

func runTrainSched(ctx context.Context, opts *trainSchedOptions) error {
	switch opts.design {
	case "rlschert":
		return runTrainSchert(ctx, opts)
	case "joshh":
		if opts.synthetic {
			return usageError{fmt.Errorf("--synthetic is for --design rlschert")}
		}
		return runTrainJoSHH(ctx, opts)
	case "rlscheduler":
	default:
		return usageError{fmt.Errorf("--design must be rlscheduler, rlschert or joshh, got %q", opts.design)}
	}
	if opts.synthetic {
		return usageError{fmt.Errorf("--synthetic is for --design rlschert")}
	}
	if opts.objective != "bsld" && opts.objective != "" {
		return usageError{fmt.Errorf("--objective must be bsld for rlscheduler, got %q", opts.objective)}
	}
	if opts.epochs == 0 {
		opts.epochs = learned.DefaultTrainConfig().Updates
	}
	if opts.episodes == 0 {
		opts.episodes = learned.DefaultTrainConfig().EpisodesPerUpdate
	}
	if opts.trace == "" || opts.out == "" {
		return usageError{fmt.Errorf("--trace and --out are required")}
	}
	if opts.epochs < 1 || opts.episodes < 1 {
		return usageError{fmt.Errorf("--epochs and --episodes must be at least 1")}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	w, err := rlscheduler.Open(opts.trace, rlscheduler.LoadOptions{DropFirst: rlDropDefault(opts.trace, opts.dropFirst)})
	if err != nil {
		return err
	}
	cfg := learned.DefaultTrainConfig()
	cfg.Workload, cfg.Seed, cfg.Updates, cfg.EpisodesPerUpdate = w, opts.seed, opts.epochs, opts.episodes
	cfg.TestStarts = append(slices.Clone(cfg.TestStarts), opts.exclude...)
	if opts.minLoad < 0 {
		return usageError{fmt.Errorf("--min-load must not be negative, got %g", opts.minLoad)}
	}
	cfg.MinLoad = opts.minLoad
	switch opts.imitate {
	case "", "none":
	default:
		cfg.Imitate = opts.imitate
	}
	cfg.FeatureSet = opts.features
	switch opts.residual {
	case "", "none":
	default:
		cfg.Residual, cfg.FeatureSet = opts.residual, learned.FeatureSet2
	}
	if !(opts.temperature > 0) || math.IsInf(opts.temperature, 0) {
		return usageError{fmt.Errorf("--temperature must be positive, got %g", opts.temperature)}
	}
	cfg.Temperature = opts.temperature
	if opts.imitationSet {
		cfg.ImitationEpisodes = opts.imitation
	}
	cfg.ImitationEpochs, cfg.ValSample = opts.imitationPasses, opts.validateSample
	cfg.ValStarts, cfg.ValLen, cfg.ValEvery, cfg.LRActor, cfg.Entropy = opts.validate, opts.validateLen, opts.validateEvr, opts.lrActor, opts.entropy
	starts, err := learned.TrainingStartsOf(cfg)
	if err != nil {
		return usageError{err}
	}
	errw := opts.streams.err
	fmt.Fprintf(errw, "train sched rlscheduler: %s, %d jobs; episodes of %d jobs from %d starts outside the test and validation sequences (%s); %d epochs of %d episodes, seed %d, feature set %d\n",
		opts.trace, len(w.Jobs), cfg.EpisodeLen, len(starts), rangesOf(starts), opts.epochs, opts.episodes, opts.seed, cfg.FeatureSet)
	if cfg.Residual != "" {
		fmt.Fprintf(errw, "residual policy over %s, temperature %g: PPO learns a correction from zero\n", cfg.Residual, cfg.Temperature)
	}
	if cfg.Imitate != "" {
		fmt.Fprintf(errw, "warm start: imitation of %s on %d episodes (%d passes)\n", cfg.Imitate, cfg.ImitationEpisodes, cfg.ImitationEpochs)
	}
	if len(cfg.ValStarts) > 0 {
		how := "argmax"
		if cfg.ValSample {
			how = "sampled"
		}
		fmt.Fprintf(errw, "validation: the %s policy on %d sequences of %d jobs at %v every %d epochs; the best is written\n", how, len(cfg.ValStarts), cfg.ValLen, cfg.ValStarts, cfg.ValEvery)
	}
	if cfg.MinLoad > 0 {
		fmt.Fprintf(errw, "of them %d of an offered load of %g or more\n", len(learned.HeavyStarts(w, starts, cfg.EpisodeLen, cfg.MinLoad)), cfg.MinLoad)
	}
	t0 := time.Now()
	res, err := trainWith(opts, opts.epochs, func(u learned.TrainUpdate) string {
		if u.Update == 0 && cfg.Residual != "" {
			return fmt.Sprintf("epoch 0: the residual policy before training (F1's choices)%s, %.0f s", valNote(u.Val), u.Elapsed.Seconds())
		}
		if u.Update == 0 {
			return fmt.Sprintf("imitation: %d episodes, the teacher's mean bsld %.2f, the kernel takes %.1f %% of its choices%s, %.0f s",
				u.Episodes, u.MeanBSLD, 100*u.Imitation, valNote(u.Val), u.Elapsed.Seconds())
		}
		return fmt.Sprintf("epoch %d/%d: %d episodes, mean bsld %.2f (F1 on the same episodes %.2f), entropy %.2f, %d steps%s, %.0f s",
			u.Update, u.Updates, u.Episodes, u.MeanBSLD, u.MeanF1, u.Entropy, u.Steps, valNote(u.Val), u.Elapsed.Seconds())
	}, func(u learned.TrainUpdate) string { return fmt.Sprintf("bsld %.1f (F1 %.1f)", u.MeanBSLD, u.MeanF1) }, &cfg.Progress,
		func() (*learned.TrainResult, error) { return learned.TrainRLScheduler(ctx, cfg) })
	if err != nil {
		return err
	}
	curve := make([]curvePoint, len(res.Curve))
	for i, u := range res.Curve {
		curve[i] = curvePoint{episodes: u.Episodes, reward: -u.MeanBSLD, baseline: -u.MeanF1}
	}
	last := res.Curve[len(res.Curve)-1]
	if len(cfg.ValStarts) > 0 {
		zero := "the imitation"
		if cfg.Residual != "" {
			zero = "F1's choices, before PPO"
		}
		fmt.Fprintf(errw, "written: the weights after epoch %d (0: %s), validation mean bsld %.2f\n", res.Best, zero, res.BestVal)
	}
	return finishTraining(opts, trainOutput{design: "rlscheduler",
		write: func(w io.Writer) error { return learned.WriteRLScheduler(w, res.Policy) },
		curve: curve, title: fmt.Sprintf("rlscheduler on %s, PPO, seed %d", filepath.Base(opts.trace), opts.seed),
		yLabel: "reward (− mean bounded slowdown of the episode)", baseLabel: "F1 on the same episodes",
		summary: fmt.Sprintf("last epoch's mean bsld %.2f (F1 %.2f on the same episodes)", last.MeanBSLD, last.MeanF1)}, t0)
}

// valNote is a progress line's validation part ("" when not measured).
func valNote(v float64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf(", validation %.2f", v)
}

// rangesOf writes sorted starts as ranges "a–b, c–d".
func rangesOf(s []int) string {
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		parts = append(parts, fmt.Sprintf("%d–%d", s[i], s[j]))
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
