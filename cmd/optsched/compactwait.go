package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/optsched/optsched/heuristics"
)

// compactFlags are the flags of the compact-or-wait rule, shared by
// `pbs` and `slurm` (heuristics.CompactWait).
type compactFlags struct {
	max      time.Duration
	fraction float64
	minNodes int
	mode     string
	elapsed  float64
	switchN  int
	many     bool
	leaves   string
	leavesF  float64
}

// maxCompactFraction bounds --compact-wait-fraction: 1000 × any walltime
// of 1 s or more is past --compact-wait's usual minutes, so that the cap
// alone bounds the wait.
const maxCompactFraction = 1000

// The modes of --compact-wait-mode.
const (
	compactSinceSubmit = "since-submit"
	compactEachWait    = "each-wait"
	compactBlind       = "blind"
)

// compactDefaults are a server's defaults of the compact-wait flags:
// each server's were chosen offline by bench/compactsim on slices that
// are not the judged ones, against a model of that server's own
// topology-aware scheduler, and then run on the real servers
// (docs/results/2026-11-27-compact-wait.md, sixth to eighth sessions).
type compactDefaults struct {
	max      time.Duration
	minNodes int
	elapsed  float64
	leaves   heuristics.LeafShape
	leavesF  float64
}

var (
	// pbsCompactDefaults: every job of 2 vnodes or more waits for one
	// quad, at most 30 minutes since its submission, and a job larger
	// than a quad for its least-cost shape on the whole tree while each
	// predicted wait is at most 2 × its walltime, running jobs' ends
	// predicted from twice their elapsed times (the eighth session's
	// T-lf2).
	pbsCompactDefaults = compactDefaults{max: 30 * time.Minute, minNodes: 2, elapsed: 2, leaves: heuristics.LeavesTree, leavesF: 2}
	// slurmCompactDefaults: every job of 3 nodes or more waits for one
	// leaf, and a job larger than a leaf for as few leaves as its
	// least-cost shape uses while each predicted wait is at most half
	// its walltime, at most 10 minutes, running jobs' ends predicted
	// from their elapsed times (the eighth session's F-lf0.5).
	slurmCompactDefaults = compactDefaults{max: 10 * time.Minute, minNodes: heuristics.DefaultCompactMinNodes, elapsed: 1, leaves: heuristics.LeavesFewest, leavesF: 0.5}
)

func (c *compactFlags) add(f *pflag.FlagSet, sw, hold string, d compactDefaults) {
	f.DurationVar(&c.max, "compact-wait", d.max, "compact or wait: a whole-node job of --compact-wait-min-nodes or more that fits now only across switches, while one "+sw+" that can hold it will be empty soon by the running jobs' walltimes, waits for that switch for at most min(this, --compact-wait-fraction × its walltime) from its submission, then is spread as usual ("+hold+"); 0 = off, the jobs are spread at once")
	f.Float64Var(&c.fraction, "compact-wait-fraction", maxCompactFraction, "the compact wait's bound as a fraction of the job's requested walltime, at most 1000 (large: --compact-wait alone bounds the wait; see --compact-wait)")
	f.StringVar(&c.mode, "compact-wait-mode", compactEachWait, "what --compact-wait-fraction bounds: since-submit (the wait since submission: min(--compact-wait, fraction × walltime)) each-wait (each wait the rule predicts, while --compact-wait alone bounds the wait since submission), or blind (as since-submit, but the job waits out its bound whatever the running jobs' walltimes predict, as placement sets and Slurm's --switches do)")
	f.IntVar(&c.minNodes, "compact-wait-min-nodes", d.minNodes, "the fewest nodes of a job the compact wait holds back (at least 2; see --compact-wait)")
	f.Float64Var(&c.elapsed, "compact-wait-elapsed", d.elapsed, "when above 0, the compact wait predicts each running job's end as now + this × the time it has run (1 s at least), no later than its walltime's end, instead of its walltime's end (0: by walltimes; see --compact-wait)")
	f.BoolVar(&c.many, "compact-wait-many", true, "every job the compact wait holds back waits, not only the first of a cycle, and a job that fits now within one switch counts its nodes there for the later jobs' decisions, as under placement sets (see --compact-wait)")
	f.StringVar(&c.leaves, "compact-wait-leaves", d.leaves.String(), "a job larger than every "+sw+" (which the compact wait otherwise places at once) waits too, within the same bounds, for its shape on the leaf switches: off, fewest (as few leaves as its least-cost shape: an 8-node job on two leaves of 4), best (the least-cost shape itself: a 6-node job on a whole leaf and 2 nodes of another), tree (its least CH cost on the whole tree, every level counted: on pairs in quads, a 6-vnode job on a whole quad and a pair of another), top (as tree, counting only the switches under the top one: whole quads, the rest in one more) or best-fewest (best when it fits now or is predicted within the bounds, --compact-wait-leaves-fraction included, else fewest); see --compact-wait")
	f.Float64Var(&c.leavesF, "compact-wait-leaves-fraction", d.leavesF, "when above 0, a job that only --compact-wait-leaves holds waits for its shape only while the predicted wait is at most this × its requested walltime (on top of the other bounds, in every mode), so that long jobs wait for their shape and short ones start spread; 0 = off, at most 1000; the one-switch wait is not affected (see --compact-wait-leaves)")
	f.IntVar(&c.switchN, "compact-wait-switch-nodes", 0, "when above a job's node count, the compact wait makes it wait for the smallest switches of this many nodes instead (4: a 2-node job waits for a quad, not a pair; see --compact-wait)")
}

func (c *compactFlags) validate() error {
	switch {
	case c.max < 0:
		return usageError{fmt.Errorf("--compact-wait must not be negative, got %v", c.max)}
	case !(c.fraction > 0 && c.fraction <= maxCompactFraction):
		return usageError{fmt.Errorf("--compact-wait-fraction must be in (0, %d], got %v", maxCompactFraction, c.fraction)}
	case c.mode != compactSinceSubmit && c.mode != compactEachWait && c.mode != compactBlind:
		return usageError{fmt.Errorf("--compact-wait-mode must be %s, %s or %s, got %q", compactSinceSubmit, compactEachWait, compactBlind, c.mode)}
	case c.minNodes < 2:
		return usageError{fmt.Errorf("--compact-wait-min-nodes must be at least 2, got %d", c.minNodes)}
	case !(c.elapsed >= 0) || c.elapsed > 1000:
		return usageError{fmt.Errorf("--compact-wait-elapsed must be in [0, 1000], got %v", c.elapsed)}
	case !validLeafShape(c.leaves):
		return usageError{fmt.Errorf("--compact-wait-leaves must be off, fewest, best, tree, top or best-fewest, got %q", c.leaves)}
	case !(c.leavesF >= 0) || c.leavesF > maxCompactFraction:
		return usageError{fmt.Errorf("--compact-wait-leaves-fraction must be in [0, %d], got %v", maxCompactFraction, c.leavesF)}
	case c.switchN < 0:
		return usageError{fmt.Errorf("--compact-wait-switch-nodes must not be negative, got %d", c.switchN)}
	}
	return nil
}

func validLeafShape(s string) bool {
	_, err := heuristics.ParseLeafShape(s)
	return s == "" || err == nil
}

func (c *compactFlags) rule() heuristics.CompactWait {
	leaves, _ := heuristics.ParseLeafShape(c.leaves) // validated
	return heuristics.CompactWait{Max: c.max, Fraction: c.fraction, MinNodes: c.minNodes, PerWait: c.mode == compactEachWait, Blind: c.mode == compactBlind,
		Elapsed: c.elapsed, SwitchNodes: c.switchN, Many: c.many, Leaves: leaves, LeavesFraction: c.leavesF}
}
