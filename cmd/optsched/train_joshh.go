package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/learned"
	"github.com/optsched/optsched/bench/report"
	"github.com/optsched/optsched/bench/rlscheduler"
)

// runTrainJoSHH is `optsched train sched --design joshh`.
func runTrainJoSHH(ctx context.Context, opts *trainSchedOptions) error {
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
	starts := learned.TrainingStarts(len(w.Jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	errw := opts.streams.err
	fmt.Fprintf(errw, "train sched joshh: %s, %d jobs on %d nodes; episodes of %d jobs from %d starts outside the test sequences (%s); %d epochs of %d episodes, seed %d\n",
		opts.trace, len(w.Jobs), w.MaxNodes, cfg.EpisodeLen, len(starts), rangesOf(starts), opts.epochs, opts.episodes, opts.seed)
	verbose := opts.verbose || !isTerminal(errw)
	var bar *report.Bar
	if !verbose {
		bar = report.NewBar(errw, "train sched", opts.epochs)
	}
	cfg.Progress = func(u learned.JoSHHUpdate) {
		if verbose {
			fmt.Fprintf(errw, "epoch %d/%d: %d episodes, mean normalised turnaround %.2f (SJF on the same episodes %.2f), CH cost / first-fit %.3f, depth-first %.0f %%, %d+%d steps, %.0f s\n",
				u.Update, u.Updates, u.Episodes, u.MeanNT, u.MeanSJF, u.CostRatio, 100*u.DepthShare, u.Steps, u.AllocSteps, u.Elapsed.Seconds())
		}
		bar.Note(fmt.Sprintf("NT %.1f (SJF %.1f)", u.MeanNT, u.MeanSJF))
		bar.Add(1)
	}
	t0 := time.Now()
	res, err := learned.TrainJoSHH(ctx, cfg)
	bar.Done()
	if err != nil {
		return err
	}
	f, err := os.Create(opts.out)
	if err != nil {
		return err
	}
	if err := learned.WriteJoSHH(f, res.Policy); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	plotPath := opts.plot
	if plotPath == "" {
		plotPath = strings.TrimSuffix(strings.TrimSuffix(opts.out, ".gz"), ".bin") + ".png"
	}
	pts := make([]report.LearningPoint, len(res.Curve))
	var moving float64
	for i, u := range res.Curve {
		if i == 0 {
			moving = -u.MeanNT
		} else {
			moving = 0.9*moving - 0.1*u.MeanNT
		}
		pts[i] = report.LearningPoint{Episodes: u.Episodes, Reward: -u.MeanNT, Moving: moving, Baseline: -u.MeanSJF}
	}
	title := fmt.Sprintf("joshh on %s, PPO, seed %d", filepath.Base(opts.trace), opts.seed)
	if err := report.PlotLearningCurveLabelled(pts, title, "− mean normalised turnaround of the episode", "SJF (EASY) on the same episodes", plotPath); err != nil {
		return err
	}
	last := res.Curve[len(res.Curve)-1]
	fmt.Fprintf(opts.streams.out, "trained joshh in %.0f s: last epoch's mean normalised turnaround %.2f (SJF %.2f on the same episodes), CH cost %.3f × first-fit's; weights: %s; learning curve: %s\n",
		time.Since(t0).Seconds(), last.MeanNT, last.MeanSJF, last.CostRatio, opts.out, plotPath)
	return nil
}
