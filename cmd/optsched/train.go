package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/lan2023"
	"github.com/optsched/optsched/bench/report"
	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/heuristics/nsa"
	"github.com/optsched/optsched/solver"
)

// newTrainCmd is `optsched train`, the parent of the trainers.
func newTrainCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train learned heuristics (nsa: the repair policy of neural simulated annealing; sched: learned job selection)",
	}
	cmd.AddCommand(newTrainNSACmd(s, nil), newTrainSchedCmd(s, nil))
	return cmd
}

// trainNSAOptions are the inputs of `optsched train nsa`.
type trainNSAOptions struct {
	streams    *streams
	seed       uint64
	episodes   int
	arch       string
	out        string
	plot       string
	trace      string
	epochs     int
	idle       bool
	relative   bool
	batch      int
	checkpoint string
	evaluate   string
	verbose    bool
}

// trainWindowStream separates the training epochs' seed from the tables'.
const trainWindowStream = 0x7a11_4e5a

func newTrainNSACmd(s *streams, runF func(*trainNSAOptions) error) *cobra.Command {
	opts := &trainNSAOptions{streams: s}
	d := nsa.DefaultTrainConfig()
	cmd := &cobra.Command{
		Use:   "nsa [--seed S] [--episodes N] [--arch cnn3] [--out FILE] [--plot FILE.png] [--trace FILE]",
		Short: "Train the repair policy of NSA with PPO on windows of the paper's trace",
		Long: `Trains the actor (and critic) of neural simulated annealing (Lan et al.,
CLUSTER 2023, §V-B) with PPO and writes the actor's weights.

Training windows come from the protocol of Tables III–IV (optsched bench
lan2023 table3) on the trace: --epochs epochs of 100 periods of 60 s, at
most 5 multi-node jobs per window, the cluster following the exact
solution — from epochs drawn with the training seed, minus every epoch
that overlaps the tables' own (seed 1) epochs, so the tables measure on
windows the policy has not seen. Each episode takes a window and one of
its starting solutions (Seq or SA after a random number of steps),
removes 1–2 jobs and lets the policy reinsert them largest first; the
reward is minus the CH cost of the reinserted jobs.

The same flags give the same file (training is deterministic; see
docs/reproducing.md, "Neural simulated annealing", for the machine caveat). The shipped weights are
heuristics/nsa/weights/nsa-cnn3.bin.gz, made with the defaults.`,
		Example: `  optsched train nsa --seed 1 --out nsa.bin.gz --plot curve.png
  optsched solve --heuristic nsa --nsa-weights nsa.bin.gz window.json
  optsched train nsa --arch fcn3 --episodes 20000 --out fcn3.bin.gz`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runTrainNSA(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the training windows, starting solutions, episodes and weights")
	f.IntVar(&opts.episodes, "episodes", d.Episodes, "training episodes (repairs)")
	f.StringVar(&opts.arch, "arch", "cnn3", "network of Lan et al. Table II: cnn3, cnn2, cnn1, fcn1, fcn2, fcn3")
	f.StringVar(&opts.out, "out", "nsa-weights.bin.gz", "weights file to write (the actor)")
	f.StringVar(&opts.plot, "plot", "", "also draw the learning curve (reward per episode, as Fig. 4) to this PNG/SVG file")
	f.StringVar(&opts.trace, "trace", lan2023TablesDefaultTrace, "the paper's trace (lines: id arrival runtime nodes)")
	f.IntVar(&opts.epochs, "epochs", 30, "epochs of training windows drawn from the trace (before removing overlaps)")
	f.BoolVar(&opts.idle, "idle", false, "add the published code's fifth \"idle\" channel to the state")
	f.BoolVar(&opts.relative, "relative", d.Relative, "normalise leaf and pod ids within each state (false: over the whole cluster, as the paper's code)")
	f.IntVar(&opts.batch, "batch", d.BatchEpisodes, "episodes per PPO update")
	f.StringVar(&opts.checkpoint, "checkpoint", "", "directory for a checkpoint of the actor every 20 updates")
	f.StringVar(&opts.evaluate, "evaluate", "", "do not train: evaluate this weights file on the held-out windows")
	f.BoolVarP(&opts.verbose, "verbose", "v", false, "print a line per update on stderr")
	return cmd
}

func runTrainNSA(ctx context.Context, opts *trainNSAOptions) error {
	arch, err := nsa.ParseArch(opts.arch)
	if err != nil {
		return usageError{fmt.Errorf("--arch: %w", err)}
	}
	if opts.episodes < 1 || opts.epochs < 1 || opts.batch < 1 {
		return usageError{fmt.Errorf("--episodes, --epochs and --batch must be at least 1")}
	}
	if opts.out == "" {
		return usageError{fmt.Errorf("--out is required")}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	probs, held, err := trainingProblems(ctx, opts.trace, opts.seed, opts.epochs)
	if err != nil {
		return err
	}
	cfg := nsa.DefaultTrainConfig()
	if opts.evaluate != "" {
		n, err := nsaFromFlag("--evaluate", opts.evaluate, false)
		if err != nil {
			return err
		}
		return printHeldOut(ctx, opts, n.Policy, held, cfg)
	}
	cfg.Relative = opts.relative
	cfg.Arch, cfg.Idle, cfg.Seed, cfg.Episodes, cfg.BatchEpisodes, cfg.Problems = arch, opts.idle, opts.seed, opts.episodes, opts.batch, probs
	updates := (opts.episodes + opts.batch - 1) / opts.batch
	errw := opts.streams.err
	fmt.Fprintf(errw, "train nsa: %s, %d training windows, %d episodes in %d updates, seed %d\n",
		arch, len(probs), opts.episodes, updates, opts.seed)
	var bar *report.Bar
	if !opts.verbose && isTerminal(errw) {
		bar = report.NewBar(errw, "train nsa", updates)
	}
	cfg.Progress = func(u nsa.TrainUpdate) {
		if opts.verbose {
			fmt.Fprintf(errw, "update %d/%d: %d episodes, mean repair cost %.0f (uniform %.0f), reward %.4f, moving %.4f, entropy %.2f, %.0f s\n",
				u.Update, u.Updates, u.Episodes, u.MeanCost, u.UniformCost, u.MeanReward, u.MovingReward, u.Entropy, u.Elapsed.Seconds())
		}
		bar.Note(fmt.Sprintf("reward %.4f (moving)", u.MovingReward))
		bar.Add(1)
	}
	if opts.checkpoint != "" {
		if err := os.MkdirAll(opts.checkpoint, 0o755); err != nil {
			return err
		}
		cfg.Checkpoint = func(u int, actor *nsa.Policy) error {
			return writePolicyFile(filepath.Join(opts.checkpoint, fmt.Sprintf("nsa-%s-update%04d.bin.gz", arch, u)), actor)
		}
	}
	t0 := time.Now()
	res, err := nsa.Train(ctx, cfg)
	bar.Done()
	if err != nil {
		return err
	}
	if err := writePolicyFile(opts.out, res.Actor); err != nil {
		return err
	}
	first, last := res.Curve[0], res.Curve[len(res.Curve)-1]
	fmt.Fprintf(opts.streams.out, "trained %s in %.0f s: mean repair cost of the sampled policy %.0f → %.0f (SA's uniform start on the same episodes: %.0f); weights: %s\n",
		arch, time.Since(t0).Seconds(), first.MeanCost, last.MeanCost, last.UniformCost, opts.out)
	if err := printHeldOut(ctx, opts, res.Actor, held, cfg); err != nil {
		return err
	}
	if opts.plot != "" {
		pts := make([]report.LearningPoint, len(res.Curve))
		for i, u := range res.Curve {
			pts[i] = report.LearningPoint{Episodes: u.Episodes, Reward: u.MeanReward, Moving: u.MovingReward,
				Baseline: -cfg.RewardScale * u.UniformCost}
		}
		title := fmt.Sprintf("NSA %s, PPO, seed %d: reward per batch of %d episodes", arch, opts.seed, opts.batch)
		if err := report.PlotLearningCurve(pts, title, opts.plot); err != nil {
			return err
		}
	}
	return nil
}

// printHeldOut evaluates p's greedy repairs on the held-out windows.
func printHeldOut(ctx context.Context, opts *trainNSAOptions, p *nsa.Policy, held []*solver.Problem, cfg nsa.TrainConfig) error {
	ev, err := nsa.EvaluateRepair(ctx, p, held, heldOutEpisodes, opts.seed, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.streams.out, "held out (%d episodes on the tables' %d windows): mean repair cost of the greedy policy %.0f, uniform start %.0f (%+.2f %%)\n",
		ev.Episodes, len(held), ev.Policy, ev.Uniform, 100*(ev.Policy-ev.Uniform)/ev.Uniform)
	return nil
}

// writePolicyFile writes p's weights to path.
func writePolicyFile(path string, p *nsa.Policy) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := nsa.WritePolicy(f, p); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// heldOutEpisodes is the number of repair episodes of the held-out
// evaluation after training.
const heldOutEpisodes = 4000

// trainingProblems returns the windows of epochs training epochs of the
// tables protocol (seed derived from seed), without the epochs that
// overlap the tables' own epochs (the default protocol, seed 1), and the
// tables' windows, held out for evaluation.
func trainingProblems(ctx context.Context, path string, seed uint64, epochs int) (train, held []*solver.Problem, err error) {
	tr, err := openLanTrace(path, trace.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("trace %s not found: pass --trace FILE, the paper's trace (data/data_large_1800_40.txt of the authors' code; lines: id arrival runtime nodes)", path)
	}
	if err != nil {
		return nil, nil, err
	}
	eval, err := lan2023.TableWindows(ctx, tr, lan2023.DefaultTableConfig())
	if err != nil {
		return nil, nil, err
	}
	cfg := lan2023.DefaultTableConfig()
	cfg.Epochs, cfg.Seed = epochs, seed^trainWindowStream
	ws, err := lan2023.TableWindows(ctx, tr, cfg)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range eval {
		held = append(held, e.Problem)
	}
	for _, w := range ws {
		overlap := false
		for _, e := range eval {
			if w.StartJob < e.EndJob && e.StartJob < w.EndJob {
				overlap = true
				break
			}
		}
		if !overlap {
			train = append(train, w.Problem)
		}
	}
	if len(train) == 0 {
		return nil, nil, fmt.Errorf("no training windows left after removing the tables' epochs")
	}
	return train, held, nil
}
