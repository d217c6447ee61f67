package learned

import "fmt"

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
