package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/rlscheduler"
)

// runTrainJoSHH is `optsched train sched --design joshh`.
func runTrainJoSHH(ctx context.Context, opts *trainSchedOptions) error {
	if opts.design == "joshh" && opts.window == "" {
		opts.window = "easy-shortest-strict"
	}
	if opts.episodeLen == 0 {
		opts.episodeLen = learned.DefaultJoSHHTrainConfig().EpisodeLen
	}
	if opts.objective != "" && opts.objective != "turnaround" {
		return usageError{fmt.Errorf("--objective must be turnaround for joshh, got %q", opts.objective)}
	}
	if opts.trace == "" || opts.out == "" {
		return usageError{fmt.Errorf("--trace and --out are required")}
	}
	cfg := learned.DefaultJoSHHTrainConfig()
	if !opts.epochsSet {
		opts.epochs = cfg.Updates
	}
	if !opts.episodesSet {
		opts.episodes = cfg.EpisodesPerUpdate
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
	cfg.Workload, cfg.Seed, cfg.Updates, cfg.EpisodesPerUpdate = w, opts.seed, opts.epochs, opts.episodes
	if opts.episodeLen < 1 {
		return usageError{fmt.Errorf("--episode-len must be at least 1, got %d", opts.episodeLen)}
	}
	cfg.EpisodeLen = opts.episodeLen
	cfg.TestStarts = append(slices.Clone(cfg.TestStarts), opts.exclude...)
	arrival, reserve, err := learned.ParseJoSHHWindow(opts.window)
	if err != nil {
		return usageError{fmt.Errorf("--window: %w", err)}
	}
	cfg.Arrival, cfg.Reserve = arrival, reserve
	starts := learned.TrainingStarts(len(w.Jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	errw := opts.streams.err
	fmt.Fprintf(errw, "train sched joshh: %s, %d jobs on %d nodes; window %s; episodes of %d jobs from %d starts outside the test sequences (%s); %d epochs of %d episodes, seed %d\n",
		opts.trace, len(w.Jobs), w.MaxNodes, opts.window, cfg.EpisodeLen, len(starts), rangesOf(starts), opts.epochs, opts.episodes, opts.seed)
	t0 := time.Now()
	res, err := trainWith(opts, opts.epochs, func(u learned.JoSHHUpdate) string {
		return fmt.Sprintf("epoch %d/%d: %d episodes, mean normalised turnaround %.2f (SJF on the same episodes %.2f), CH cost / first-fit %.3f, depth-first %.0f %%, %d+%d steps, %.0f s",
			u.Update, u.Updates, u.Episodes, u.MeanNT, u.MeanSJF, u.CostRatio, 100*u.DepthShare, u.Steps, u.AllocSteps, u.Elapsed.Seconds())
	}, func(u learned.JoSHHUpdate) string { return fmt.Sprintf("NT %.1f (SJF %.1f)", u.MeanNT, u.MeanSJF) }, &cfg.Progress,
		func() (*learned.JoSHHTrainResult, error) { return learned.TrainJoSHH(ctx, cfg) })
	if err != nil {
		return err
	}
	curve := make([]curvePoint, len(res.Curve))
	for i, u := range res.Curve {
		curve[i] = curvePoint{episodes: u.Episodes, reward: -u.MeanNT, baseline: -u.MeanSJF}
	}
	last := res.Curve[len(res.Curve)-1]
	return finishTraining(opts, trainOutput{design: "joshh",
		write: func(w io.Writer) error { return learned.WriteJoSHH(w, res.Policy) },
		curve: curve, title: fmt.Sprintf("joshh on %s, PPO, seed %d", filepath.Base(opts.trace), opts.seed),
		yLabel: "− mean normalised turnaround of the episode", baseLabel: "SJF (EASY) on the same episodes",
		summary: fmt.Sprintf("last epoch's mean normalised turnaround %.2f (SJF %.2f on the same episodes), CH cost %.3f × first-fit's",
			last.MeanNT, last.MeanSJF, last.CostRatio)}, t0)
}
