package learned

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"math"
	"runtime"
	"testing"

	"github.com/optsched/optsched/heuristics/learn"
)

var printTrainHashes = flag.Bool("train.hashes", false, "print the trained weights' hashes of TestTrainHashes")

// paramsHash is the SHA-256 of the parameters' names and values (the
// float64 bits, little-endian): the weights a training wrote, before the
// file's encoding.
func paramsHash(ps []*learn.Param) string {
	h := sha256.New()
	var b [8]byte
	for _, p := range ps {
		h.Write([]byte(p.Name))
		for _, w := range p.W {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(w))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestTrainHashes pins the weights of a tiny training run of each design:
// the shared trainer (heuristics/learn's PPO, Minibatches, EpisodeGAE,
// NormalizeAdv, Adam) and the designs' use of it must keep giving these
// numbers to the bit, or the shipped weights could no longer be
// retrained from their recorded settings. A change that is meant to
// alter training updates the hashes (go test -run TestTrainHashes
// -train.hashes prints them) and says so. The hashes are of amd64's
// arithmetic (other architectures may fuse multiply-adds).
func TestTrainHashes(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("hashes pinned on amd64, not %s", runtime.GOARCH)
	}
	ctx := context.Background()
	w := synthetic(600, 3)
	cases := []struct {
		design string
		want   string
		train  func() ([]*learn.Param, error)
	}{
		{"rlscheduler", "cd5229f6dd7f29cee9753662ee8d576480517aad19441c5ca55277b234fe940a", func() ([]*learn.Param, error) {
			res, err := TrainRLScheduler(ctx, smallConfig(w, 1))
			if err != nil {
				return nil, err
			}
			return res.Policy.Kernel.Params(), nil
		}},
		{"rlscheduler-imitation", "6205cf6180bf8d6693e5f4f99b8516e6f7ffe0eedfe8af185a7f8bdea542f8b2", func() ([]*learn.Param, error) {
			cfg := smallConfig(w, 1)
			cfg.FeatureSet, cfg.Imitate, cfg.ImitationEpisodes, cfg.ImitationEpochs = FeatureSet2, "f1", 2, 3
			cfg.ValStarts, cfg.ValLen, cfg.ValEvery = []int{400}, 150, 1
			res, err := TrainRLScheduler(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return res.Policy.Kernel.Params(), nil
		}},
		{"rlschert", "d020efa4721a3d5a13713ed3a9584e30078a4265e2b312f0ea5eabf32c5009d2", func() ([]*learn.Param, error) {
			cfg := SchertTrainConfig{Jobs: SyntheticSchert(2, 6, 64), Nodes: SyntheticCores, Seed: 4, ImitationEpisodes: 3, ImitationEpochs: 3,
				Updates: 2, EpisodesPerUpdate: 2, EpisodeLen: 64, TestStarts: []int{0}, TestLen: 64}
			res, err := TrainRLSchert(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return append(res.Policy.Actor.Params(), res.Policy.Killer.Params()...), nil
		}},
		{"rlschert-queue", "654dfb65142368a4d5e1bb009709776f462f05bc9059606caac205bf44ffe9d0", func() ([]*learn.Param, error) {
			cfg := SchertTrainConfig{Jobs: SyntheticSchert(2, 6, 64), Nodes: SyntheticCores, Seed: 4, ImitationEpisodes: 3, ImitationEpochs: 3,
				Updates: 2, EpisodesPerUpdate: 2, EpisodeLen: 64, TestStarts: []int{0}, TestLen: 64, Design: NewSchertDesign}
			res, err := TrainRLSchert(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return append(res.Policy.Actor.Params(), res.Policy.Killer.Params()...), nil
		}},
		{"rlschert-flat", "c009fb8078f8b4687345b4729c632660a89b2e40b90066a5c3c35d73901be7cc", func() ([]*learn.Param, error) {
			cfg := SchertTrainConfig{Jobs: SyntheticSchert(2, 6, 64), Nodes: SyntheticCores, Seed: 4, ImitationEpisodes: 3, ImitationEpochs: 3,
				Updates: 2, EpisodesPerUpdate: 2, EpisodeLen: 64, TestStarts: []int{0}, TestLen: 64, FlatPicker: true}
			res, err := TrainRLSchert(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return append(res.Policy.Actor.Params(), res.Policy.Killer.Params()...), nil
		}},
		{"joshh", "452d7d906befa1dc26cd45941cb462de80756059fe2eb47e5201be8c332a71a5", func() ([]*learn.Param, error) {
			res, err := TrainJoSHH(ctx, smallJoSHHConfig(w, 1))
			if err != nil {
				return nil, err
			}
			return append(res.Policy.Selector.Params(), res.Policy.Alloc.Params()...), nil
		}},
		{"joshh-easy-shortest-strict", "c04f631fdd6197db6f78828b6b75f1056f0641164d7a17994d097f636b3068de", func() ([]*learn.Param, error) {
			cfg := smallJoSHHConfig(w, 1)
			cfg.Reserve = ReserveShortestStrict
			res, err := TrainJoSHH(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return append(res.Policy.Selector.Params(), res.Policy.Alloc.Params()...), nil
		}},
		{"joshh-easy-area-strict", "7f51de8f78e026edfe920114c6dccd655fa1c1a7c230072fce3bed12432e238b", func() ([]*learn.Param, error) {
			cfg := smallJoSHHConfig(w, 1)
			cfg.Reserve = ReserveAreaStrict
			res, err := TrainJoSHH(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return append(res.Policy.Selector.Params(), res.Policy.Alloc.Params()...), nil
		}},
	}
	for _, c := range cases {
		ps, err := c.train()
		if err != nil {
			t.Fatalf("%s: %v", c.design, err)
		}
		got := paramsHash(ps)
		if *printTrainHashes {
			t.Logf("%s: %s", c.design, got)
		}
		if got != c.want {
			t.Errorf("%s: trained weights hash %s, pinned %s: the training's results changed", c.design, got, c.want)
		}
	}
}
