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
	"github.com/optsched/optsched/bench/trace"
)

// Synthetic workload of train sched --design rlschert --synthetic and
// bench rlschert --synthetic: chunks of 256 jobs (a job rate each);
// training draws from the SyntheticTrainChunks of seed --seed, the test
// is the SyntheticTestChunks of seed 1000 + --seed (other jobs).
const (
	syntheticChunkLen    = 256
	syntheticTrainChunks = 40
	syntheticTestChunks  = 10
	syntheticTestSeed    = 1000
)

// schertTraining returns the jobs, the cluster's size and the test
// sequences of rlschert's training and measurement.
func schertWorkload(path string, synthetic, test bool, seed uint64, drop int) (jobs []trace.Job, nodes int, starts []int, n int, name string, err error) {
	if synthetic {
		if test {
			jobs = learned.SyntheticSchert(syntheticTestSeed+seed, syntheticTestChunks, syntheticChunkLen)
			for k := range syntheticTestChunks {
				starts = append(starts, k*syntheticChunkLen)
			}
		} else {
			jobs = learned.SyntheticSchert(seed, syntheticTrainChunks, syntheticChunkLen)
		}
		return jobs, learned.SyntheticCores, starts, syntheticChunkLen, fmt.Sprintf("synthetic (RLSchert's Table 2, seed %d)", seed), nil
	}
	if path == "" {
		return nil, 0, nil, 0, "", usageError{fmt.Errorf("--trace FILE or --synthetic is required")}
	}
	tr, err := trace.Open(path, "", trace.Options{})
	if err != nil {
		return nil, 0, nil, 0, "", err
	}
	jobs = tr.Jobs[min(rlDropDefault(path, drop), len(tr.Jobs)):]
	nodes = tr.Nodes
	if nodes == 0 {
		for _, j := range jobs {
			nodes = max(nodes, j.Nodes)
		}
	}
	return jobs, nodes, rlscheduler.Starts, rlscheduler.SequenceLength, filepath.Base(path), nil
}

func runTrainSchert(ctx context.Context, opts *trainSchedOptions) error {
	if opts.objective != "slowdown" && opts.objective != "" {
		return usageError{fmt.Errorf("--objective must be slowdown for rlschert, got %q", opts.objective)}
	}
	if opts.out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	cfg := learned.DefaultSchertTrainConfig()
	switch opts.picker {
	case "kernel", "":
	case "flat":
		cfg.FlatPicker = true
	default:
		return usageError{fmt.Errorf("--picker must be kernel or flat, got %q", opts.picker)}
	}
	d, err := schertDesignOf(opts.visible, opts.reserve, opts.rank)
	if err != nil {
		return err
	}
	if d.Queue {
		if opts.killMargin <= 0 || opts.killElapsed <= 0 || opts.killElapsed > 1 {
			return usageError{fmt.Errorf("--kill-margin must be positive and --kill-elapsed in (0, 1]")}
		}
		d.KillMargin, d.KillElapsed = opts.killMargin, opts.killElapsed
	}
	cfg.Design = d
	cfg.NoKill = !opts.killPPO
	if opts.epochsSet {
		cfg.Updates = opts.epochs
	}
	if opts.episodesSet {
		cfg.EpisodesPerUpdate = opts.episodes
	}
	if cfg.Updates < 1 || cfg.EpisodesPerUpdate < 1 || opts.imitation < 1 {
		return usageError{fmt.Errorf("--epochs, --episodes and --imitation must be at least 1")}
	}
	cfg.ImitationEpisodes = opts.imitation
	jobs, nodes, _, _, name, err := schertWorkload(opts.trace, opts.synthetic, false, opts.seed, opts.dropFirst)
	if err != nil {
		return err
	}
	cfg.Jobs, cfg.Nodes, cfg.Seed = jobs, nodes, opts.seed
	if opts.synthetic {
		cfg.TestStarts = []int{} // the test set is other jobs altogether
	}
	cfg.TestStarts = append(slices.Clone(cfg.TestStarts), opts.exclude...)
	starts := learned.TrainingStarts(len(jobs), cfg.EpisodeLen, cfg.TestStarts, cfg.TestLen)
	errw := opts.streams.err
	fmt.Fprintf(errw, "train sched rlschert: %s, %d jobs on %d nodes; episodes of %d jobs from %d starts outside the test sequences (%s); imitation on %d episodes, then %d epochs of %d episodes, seed %d, %s picker, design: %s, PPO on the killer: %v\n",
		name, len(jobs), nodes, cfg.EpisodeLen, len(starts), rangesOf(starts), cfg.ImitationEpisodes, cfg.Updates, cfg.EpisodesPerUpdate, opts.seed, map[bool]string{false: "kernel", true: "flat"}[cfg.FlatPicker], cfg.Design, !cfg.NoKill)
	t0 := time.Now()
	res, err := trainWith(opts, cfg.Updates+1, func(u learned.SchertUpdate) string {
		if u.Update == 0 {
			return fmt.Sprintf("imitation: %d decisions (%d kills) of the rules on %d episodes, agreement %.3f (of the kills %.3f), rules' mean slowdown %.2f, %.0f s",
				u.Steps, u.Kills, u.Episodes, u.ImitationAccuracy, u.KillRecall, u.MeanRule, u.Elapsed.Seconds())
		}
		return fmt.Sprintf("epoch %d/%d: %d episodes, mean slowdown %.2f (rule %.2f on the same episodes), %d steps, %d kills, %.0f s",
			u.Update, u.Updates, u.Episodes, u.MeanSlowdown, u.MeanRule, u.Steps, u.Kills, u.Elapsed.Seconds())
	}, func(u learned.SchertUpdate) string {
		return fmt.Sprintf("slowdown %.1f (rule %.1f)", u.MeanSlowdown, u.MeanRule)
	}, &cfg.Progress, func() (*learned.SchertTrainResult, error) { return learned.TrainRLSchert(ctx, cfg) })
	if err != nil {
		return err
	}
	var curve []curvePoint
	for _, u := range res.Curve {
		if u.Update > 0 { // the imitation is no point of the curve
			curve = append(curve, curvePoint{episodes: u.Episodes, reward: -u.MeanSlowdown, baseline: -u.MeanRule})
		}
	}
	last := res.Curve[len(res.Curve)-1]
	return finishTraining(opts, trainOutput{design: "rlschert",
		write: func(w io.Writer) error { return learned.WriteRLSchert(w, res.Policy) },
		curve: curve, title: fmt.Sprintf("rlschert on %s, imitation then PPO, seed %d", name, opts.seed),
		yLabel: "− mean slowdown of the episode", baseLabel: "the rule on the same episodes",
		summary: fmt.Sprintf("last epoch's mean slowdown %.2f (rule %.2f on the same episodes)", last.MeanSlowdown, last.MeanRule)}, t0)
}
