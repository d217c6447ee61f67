package learned

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// ppoSettings are the settings every trainer of the package checks
// alike (the PPO core's; heuristics/learn's PPO, Minibatches and Adam).
type ppoSettings struct {
	EpisodesPerUpdate, EpisodeLen, PPOEpochs, Minibatch int
	Clip, LRActor, LRCritic, Gamma, Entropy             float64
}

// check returns an ErrTrainConfig error when a count or a rate is out of
// range: badCounts and badRates are the design's own counts' and rates'
// verdicts, checked with the shared ones.
func (s ppoSettings) check(badCounts, badRates bool) error {
	switch {
	case badCounts || s.EpisodesPerUpdate < 1 || s.EpisodeLen < 2 || s.PPOEpochs < 1 || s.Minibatch < 1:
		return fmt.Errorf("%w: counts must be positive", ErrTrainConfig)
	case badRates || s.Clip <= 0 || s.LRActor <= 0 || s.LRCritic <= 0 || s.Gamma <= 0 || s.Gamma > 1 || s.Entropy < 0:
		return fmt.Errorf("%w: rates out of range", ErrTrainConfig)
	}
	return nil
}

// episodeStarts returns TrainingStarts, or an ErrTrainConfig error when
// there is none.
func episodeStarts(n, epLen int, testStarts []int, testLen int) ([]int, error) {
	starts := TrainingStarts(n, epLen, testStarts, testLen)
	if len(starts) == 0 {
		return nil, fmt.Errorf("%w: no %d-job episode of the %d jobs lies outside the test sequences", ErrTrainConfig, epLen, n)
	}
	return starts, nil
}

// collect runs n episodes, each on a start drawn from starts with rng
// (ctx checked before each): the episodes a PPO update learns from.
func collect(ctx context.Context, n int, starts []int, rng *rand.Rand, episode func(start int) error) error {
	for range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := episode(starts[rng.IntN(len(starts))]); err != nil {
			return err
		}
	}
	return nil
}

// publish appends an update's report to the curve and passes it to
// progress, when set.
func publish[U any](curve []U, up U, progress func(U)) []U {
	curve = append(curve, up)
	if progress != nil {
		progress(up)
	}
	return curve
}
