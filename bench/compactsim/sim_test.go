package compactsim

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/replay"
	"github.com/optsched/optsched/heuristics"
)

// fragmented: at 0 s, a 2-vnode job of 3 s (walltime 13 s) and three
// 3-vnode jobs of 60 s start; at 1 s a 4-vnode job of 60 s
// (walltime 70 s) arrives: it fits now only across quads; quad 0 empties
// at 3 s (+ the pad of its walltime: by walltime at 13 s).
func fragmented() []replay.Job {
	job := func(k int, at float64, chunks int, run, wall int64) replay.Job {
		return replay.Job{K: k, At: time.Duration(at * float64(time.Second)), Chunks: chunks, Sleep: run, Walltime: wall, NCPUs: 4}
	}
	return []replay.Job{
		job(0, 0, 2, 3, 13),
		job(1, 0, 3, 60, 70), job(2, 0, 3, 60, 70), job(3, 0, 3, 60, 70),
		job(4, 1, 4, 60, 70),
	}
}

// TestSimulateWaitsForQuad: off, the 4-vnode job starts at once across
// quads; with the rule on it waits for quad 0 and starts there, within
// its bound; every job runs once (each cycle's plan passed Check).
func TestSimulateWaitsForQuad(t *testing.T) {
	ctx := context.Background()
	off, soff, err := Simulate(ctx, fragmented(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	on, son, err := Simulate(ctx, fragmented(), Options{Compact: heuristics.CompactWait{Max: time.Hour, Fraction: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(off, on...) {
		if r.Start < r.Submit || len(r.Vnodes) != r.Job.Chunks {
			t.Fatalf("job %d: %+v", r.Job.K, r)
		}
	}
	quads := func(vs []string) int {
		q := map[string]bool{}
		for _, v := range vs {
			n, _ := strconv.Atoi(strings.TrimPrefix(v, "v"))
			q[fmt.Sprint(n/4)] = true
		}
		return len(q)
	}
	if j := off[4]; quads(j.Vnodes) < 2 || j.Wait > 0.5 {
		t.Errorf("rule off: %+v", j)
	}
	// Bound: 0.5 × 70 s = 35 s; quad 0 empties by walltime at 13 s.
	if j := on[4]; quads(j.Vnodes) != 1 || j.Wait > 35 || j.Wait < 2 {
		t.Errorf("rule on: %+v", j)
	}
	if son.CompactWaits == 0 || soff.CompactWaits != 0 || son.MeanCH >= soff.MeanCH {
		t.Errorf("summaries: off %+v, on %+v", soff, son)
	}
}

// TestSweep replays the tuning slices (not the judged ones) under each
// setting of the rule and prints a table; it runs only when
// OPTSCHED_COMPACT_SWEEP is set (a minute of CPU; OPTSCHED_COMPACT_SERVER
// slurm for the Slurm planner, OPTSCHED_COMPACT_SLICES a comma-separated
// choice of slices): it is the tuning tool
// of docs/results/2026-11-27-compact-wait.md, not a test.
func TestSweep(t *testing.T) {
	if os.Getenv("OPTSCHED_COMPACT_SWEEP") == "" {
		t.Skip("set OPTSCHED_COMPACT_SWEEP=1 to run the tuning sweep")
	}
	type slice struct {
		name, log string
		from, n   int
	}
	slices := []slice{
		{"K06", "KTH-SP2-1996-2.1-cln.swf.gz", 6000, 150},
		{"K15", "KTH-SP2-1996-2.1-cln.swf.gz", 15000, 150},
		{"K25", "KTH-SP2-1996-2.1-cln.swf.gz", 25000, 150},
		{"H60", "HPC2N-2002-2.1-cln.swf.gz", 60000, 150},
		{"H100", "HPC2N-2002-2.1-cln.swf.gz", 100000, 150},
		{"H180", "HPC2N-2002-2.1-cln.swf.gz", 180000, 150},
		{"K01", "KTH-SP2-1996-2.1-cln.swf.gz", 1000, 150},
		{"K12", "KTH-SP2-1996-2.1-cln.swf.gz", 12000, 150},
		{"K20", "KTH-SP2-1996-2.1-cln.swf.gz", 20000, 150},
		{"H30", "HPC2N-2002-2.1-cln.swf.gz", 30000, 150},
		{"H145", "HPC2N-2002-2.1-cln.swf.gz", 145000, 150},
	}
	// OPTSCHED_COMPACT_EXTRA=1 replays 12 more slices instead, fixed on
	// 2026-11-27 after the first sweeps as a check of what they chose
	// (none overlaps a judged slice).
	// OPTSCHED_COMPACT_EXTRA=all: both sets (sixth session).
	if x := os.Getenv("OPTSCHED_COMPACT_EXTRA"); x != "" {
		if x != "all" {
			slices = nil
		}
		for _, from := range []int{2000, 8000, 10000, 14000, 17000, 22000, 27000} {
			slices = append(slices, slice{fmt.Sprintf("K%02d", from/1000), "KTH-SP2-1996-2.1-cln.swf.gz", from, 150})
		}
		for _, from := range []int{20000, 50000, 80000, 160000, 200000} {
			slices = append(slices, slice{fmt.Sprintf("H%d", from/1000), "HPC2N-2002-2.1-cln.swf.gz", from, 150})
		}
	}
	// OPTSCHED_COMPACT_EXTRA2=1 (seventh session): six more KTH slices
	// at an offered load of 0.9–1.3, fixed by a rule before any was run
	// (docs/results/2026-11-27-compact-wait.md), instead of the others;
	// none overlaps a judged or a tuning slice.
	if os.Getenv("OPTSCHED_COMPACT_EXTRA2") != "" {
		slices = nil
		for _, from := range []int{1500, 5000, 5500, 6500, 9000, 11000} {
			slices = append(slices, slice{fmt.Sprintf("K%03d", from/100), "KTH-SP2-1996-2.1-cln.swf.gz", from, 150})
		}
	}
	if s := os.Getenv("OPTSCHED_COMPACT_SLICES"); s != "" {
		var keep []slice
		for _, sl := range slices {
			if strings.Contains(","+s+",", ","+sl.name+",") {
				keep = append(keep, sl)
			}
		}
		slices = keep
	}
	settings := []struct {
		name string
		cw   heuristics.CompactWait
	}{
		{name: "off"},
		{"f0.5", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 0.5}},
		{"f1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1}},
		{"f1-min2", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2}},
		{"each0.5", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 0.5, PerWait: true}},
		{"each1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, PerWait: true}},
		{"blind1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, Blind: true}},
		{"blind0.5", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 0.5, Blind: true}},
		{"blind0.25", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 0.25, Blind: true}},
		{"f1-min2q", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4}},
		{"each1-min2q", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4, PerWait: true}},
		{"each0.5-min2q", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 0.5, MinNodes: 2, SwitchNodes: 4, PerWait: true}},
		{"f1-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, Elapsed: 1}},
		{"f1-el2", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, Elapsed: 2}},
		{"f0.5-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 0.5, Elapsed: 1}},
		{"each1-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, PerWait: true, Elapsed: 1}},
		{"each0.5-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 0.5, PerWait: true, Elapsed: 1}},
		{"each1-min2q-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1}},
		{"each1-el1-max30", heuristics.CompactWait{Max: 30 * time.Second, Fraction: 1, PerWait: true, Elapsed: 1}},
		{"each1-min2q-el1-max30", heuristics.CompactWait{Max: 30 * time.Second, Fraction: 1, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1}},
		{"each1-min2q-max30", heuristics.CompactWait{Max: 30 * time.Second, Fraction: 1, MinNodes: 2, SwitchNodes: 4, PerWait: true}},
		{"f1-min2q-el1-max30", heuristics.CompactWait{Max: 30 * time.Second, Fraction: 1, MinNodes: 2, SwitchNodes: 4, Elapsed: 1}},
		// Sixth session: longer waits (each predicted wait up to 2, 4
		// walltimes, or only the cap), and the blind wait from 2 vnodes.
		{"each2-min2q-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 2, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1}},
		{"each4-min2q-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 4, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1}},
		{"cap-min2q-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1}},
		{"cap10-min2q-el1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1}},
		{"each2-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 2, PerWait: true, Elapsed: 1}},
		{"each4-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 4, PerWait: true, Elapsed: 1}},
		{"each2-min2q", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 2, MinNodes: 2, SwitchNodes: 4, PerWait: true}},
		{"each4-min2q", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 4, MinNodes: 2, SwitchNodes: 4, PerWait: true}},
		{"cap-min2q", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, SwitchNodes: 4, PerWait: true}},
		{"blind1-min2q-el1", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4, Blind: true, Elapsed: 1}},
		{"blind2-min2q", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 2, MinNodes: 2, SwitchNodes: 4, Blind: true}},
		// Many: every job the rule holds back waits (--compact-wait-many).
		{"N-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1, Many: true}},
		{"each1-min2q-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4, PerWait: true, Many: true}},
		{"each1-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, PerWait: true, Elapsed: 1, Many: true}},
		{"each1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, PerWait: true, Many: true}},
		{"f1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, Many: true}},
		{"blind1-min2q-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4, Blind: true, Elapsed: 1, Many: true}},
		{"blind1-min2q-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, SwitchNodes: 4, Blind: true, Many: true}},
		{"blind1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, Blind: true, Many: true}},
		{"each2-min2q-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 2, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1, Many: true}},
		{"cap-min2q-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, SwitchNodes: 4, PerWait: true, Elapsed: 1, Many: true}},
		{"cap-min2q-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, SwitchNodes: 4, PerWait: true, Many: true}},
		{"blindcap-min2q-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, SwitchNodes: 4, Blind: true, Many: true}},
		{"blind2-min2q-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 2, MinNodes: 2, SwitchNodes: 4, Blind: true, Elapsed: 1, Many: true}},
		{"N-many-min3", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, PerWait: true, Elapsed: 1, Many: true, MinNodes: 3}},
		{"each1-min2-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, PerWait: true, Elapsed: 1, Many: true}},
		{"cap-min2-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true}},
		{"cap-min2-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Elapsed: 1, Many: true}},
		{"blindcap-min2-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, Blind: true, Many: true}},
		{"blindcap-min2q-el1-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, SwitchNodes: 4, Blind: true, Elapsed: 1, Many: true}},
		{"cap-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, PerWait: true, Many: true}},
		{"cap-min2", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true}},
		{"each1-min2-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1, MinNodes: 2, PerWait: true, Many: true}},
		{"each2-min2-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 2, MinNodes: 2, PerWait: true, Many: true}},
		{"blindcap-many", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, Blind: true, Many: true}},
		{"cap10-min2-many", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true}},
		{"cap30-min2-many", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true}},
		{"cap10-many", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true}},
		{"cap30-many", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, PerWait: true, Many: true}},
		{"cap2-min2-many", heuristics.CompactWait{Max: 2 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true}},
		{"cap2-many", heuristics.CompactWait{Max: 2 * time.Minute, Fraction: 1000, PerWait: true, Many: true}},
		// Seventh session: jobs larger than a leaf wait for their shape
		// on the leaves (--compact-wait-leaves), on top of M (cap10-many).
		{"M-best", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesBest}},
		{"M-fewest", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesFewest}},
		{"M-best-each1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1, PerWait: true, Many: true, Leaves: heuristics.LeavesBest}},
		{"M-fewest-each1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1, PerWait: true, Many: true, Leaves: heuristics.LeavesFewest}},
		{"M-best-cap2", heuristics.CompactWait{Max: 2 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesBest}},
		{"M-best-cap30", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesBest}},
		{"M-best-cap5", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesBest}},
		{"M-fewest-cap2", heuristics.CompactWait{Max: 2 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesFewest}},
		{"M-fewest-cap5", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesFewest}},
		{"M-fewest-cap30", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesFewest}},
		{"M-fewest-min2", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesFewest}},
		{"M-best-min2", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesBest}},
		{"M-fewest-el1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesFewest}},
		{"M-best-el1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBest}},
		// The PBS planner's sixth-session choice (cap30-min2-many) with
		// the leaves' shapes (leaves are pairs there).
		{"P-fewest", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesFewest}},
		{"P-best", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesBest}},
		// Seventh session (PBS): jobs larger than a quad wait for their
		// least CH cost on the whole tree (tree) or for whole quads, the
		// rest in one more (top), on top of P (cap30-min2-many).
		{"P-tree", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree}},
		{"P-top", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTop}},
		{"P-tree-cap10", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree}},
		{"P-top-cap10", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTop}},
		{"P-tree-each1", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree}},
		{"P-top-each1", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTop}},
		{"P-tree-el1", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesTree}},
		// The control for P-tree-el1: P with predicted ends from elapsed
		// times and no lever; and the second batch, after the first.
		{"P-el1", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 1}},
		{"P-top-el1", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesTop}},
		{"P-tree-el1-cap10", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesTree}},
		{"P-tree-cap5", heuristics.CompactWait{Max: 5 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree}},
		{"P-tree-el2", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 2, Leaves: heuristics.LeavesTree}},
		{"P-el2", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 2}},
		// Eighth session: the leaves lever bounded by the job's own
		// walltime (--compact-wait-leaves-fraction, -lfF), on T
		// (P-tree-el2), P-tree, Slurm's best (+el1) and F (M-fewest-el1).
		{"T-lf0.25", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 2, Leaves: heuristics.LeavesTree, LeavesFraction: 0.25}},
		{"T-lf0.5", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 2, Leaves: heuristics.LeavesTree, LeavesFraction: 0.5}},
		{"T-lf1", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 2, Leaves: heuristics.LeavesTree, LeavesFraction: 1}},
		{"T-lf2", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Elapsed: 2, Leaves: heuristics.LeavesTree, LeavesFraction: 2}},
		{"P-tree-lf0.25", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree, LeavesFraction: 0.25}},
		{"P-tree-lf0.5", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree, LeavesFraction: 0.5}},
		{"P-tree-lf1", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree, LeavesFraction: 1}},
		{"P-tree-lf2", heuristics.CompactWait{Max: 30 * time.Minute, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true, Leaves: heuristics.LeavesTree, LeavesFraction: 2}},
		{"M-best-el1-lf0.25", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBest, LeavesFraction: 0.25}},
		{"M-best-el1-lf0.5", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBest, LeavesFraction: 0.5}},
		{"M-best-el1-lf1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBest, LeavesFraction: 1}},
		{"M-best-el1-lf2", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBest, LeavesFraction: 2}},
		{"F-lf0.25", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesFewest, LeavesFraction: 0.25}},
		{"F-lf0.5", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesFewest, LeavesFraction: 0.5}},
		{"F-lf1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesFewest, LeavesFraction: 1}},
		{"F-lf2", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesFewest, LeavesFraction: 2}},
		// The hybrid (--compact-wait-leaves best-fewest) on F's bounds.
		{"H-lf0", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBestFewest, LeavesFraction: 0}},
		{"H-lf0.25", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBestFewest, LeavesFraction: 0.25}},
		{"H-lf0.5", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBestFewest, LeavesFraction: 0.5}},
		{"H-lf1", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBestFewest, LeavesFraction: 1}},
		{"H-lf2", heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: true, Elapsed: 1, Leaves: heuristics.LeavesBestFewest, LeavesFraction: 2}},
	}
	if s := os.Getenv("OPTSCHED_COMPACT_SETTINGS"); s != "" {
		var keep []struct {
			name string
			cw   heuristics.CompactWait
		}
		for _, st := range settings {
			if strings.Contains(","+s+",", ","+st.name+",") {
				keep = append(keep, st)
			}
		}
		settings = keep
	}
	logs := map[string][]replay.Job{}
	for _, sl := range slices {
		tr, maxProcs, err := replay.OpenTrace("../../instances/traces/" + sl.log)
		if err != nil {
			t.Fatal(err)
		}
		span := float64(tr.Jobs[sl.from+sl.n-1].Submit - tr.Jobs[sl.from].Submit)
		speedup := span / 200
		jobs, err := replay.Plan(tr.Jobs, replay.Settings{From: sl.from, N: sl.n, Speedup: speedup, Pad: 10, RunID: "sim",
			Mapping: replay.Mapping{Nodes: Vnodes, MaxProcs: maxProcs, NCPUs: 4}})
		if err != nil {
			t.Fatal(err)
		}
		multi := 0
		for _, j := range jobs {
			if j.Chunks > 1 {
				multi++
			}
		}
		t.Logf("%s: %s from %d, %d jobs (%d multi-vnode), speedup %.0f", sl.name, sl.log, sl.from, sl.n, multi, speedup)
		logs[sl.name] = jobs
	}
	// OPTSCHED_COMPACT_MODELS=1: the servers' own schedulers' models
	// first (pbs_sched and pbs_sched with placement sets for the PBS
	// planner, Slurm's backfill for the Slurm planner), and each
	// setting scored against them (sixth session).
	server := os.Getenv("OPTSCHED_COMPACT_SERVER")
	type run struct {
		name, server string
		cw           heuristics.CompactWait
	}
	var runs, models []run
	if os.Getenv("OPTSCHED_COMPACT_MODELS") != "" {
		if server == "slurm" {
			models = []run{{name: "M:slurm", server: ServerSlurmBackfill}}
		} else {
			models = []run{{name: "M:pbs_sched", server: ServerPBSSched}, {name: "M:psets", server: ServerPsets}}
		}
	}
	runs = append(runs, models...)
	for _, s := range settings {
		runs = append(runs, run{s.name, server, s.cw})
	}
	sums := map[string]map[string]Summary{}
	for _, sl := range slices {
		sums[sl.name] = map[string]Summary{}
		for _, s := range runs {
			rs, sum, err := Simulate(context.Background(), logs[sl.name], Options{Compact: s.cw, Server: s.server})
			sums[sl.name][s.name] = sum
			if err != nil {
				t.Fatalf("%s %s: %v", sl.name, s.name, err)
			}
			var sizes []string
			by := SizeCH(rs)
			for _, k := range Keys(by) {
				sizes = append(sizes, fmt.Sprintf("%d:%.0f", k, by[k]))
			}
			t.Logf("| %s | %s | %.2f | %.1f | %.0f | %d | %.0f | %d/%d | %s |", sl.name, s.name, sum.MeanBSLD, sum.MeanWait, sum.MeanCH, sum.MultiNode, sum.Makespan, sum.CompactWaits, sum.Cycles, strings.Join(sizes, " "))
		}
	}
	if len(models) == 0 {
		return
	}
	// Scores: CH against the topology-aware model (placement sets, or
	// Slurm's backfill), bsld against the scheduler of the goal
	// (pbs_sched as installed, or Slurm's backfill).
	chRef, bsldRef := models[len(models)-1].name, models[0].name
	for _, s := range runs {
		var r Score
		for _, sl := range slices {
			r.Add(sums[sl.name][s.name], sums[sl.name][chRef], sums[sl.name][bsldRef])
		}
		var names []string
		for _, sl := range slices {
			sm, ch, b := sums[sl.name][s.name], sums[sl.name][chRef], sums[sl.name][bsldRef]
			if sm.MultiNode > 0 && sm.MeanCH < ch.MeanCH && math.Round(sm.MeanBSLD*100) <= math.Round(b.MeanBSLD*100) {
				names = append(names, sl.name)
			}
		}
		t.Logf("score %-22s %s; scores on %s", s.name, r, strings.Join(names, ","))
	}
	// The KTH slices alone (seventh session: the judged losses on the
	// Slurm cluster were on KTH slices).
	for _, s := range runs {
		var r Score
		for _, sl := range slices {
			if strings.HasPrefix(sl.name, "K") {
				r.Add(sums[sl.name][s.name], sums[sl.name][chRef], sums[sl.name][bsldRef])
			}
		}
		t.Logf("KTH score %-18s %s", s.name, r)
	}
}

// TestSimulateSlurm: the same on the Slurm planner, leaves of 4.
func TestSimulateSlurm(t *testing.T) {
	ctx := context.Background()
	// Slurm keeps whole minutes: job 0's walltime is a minute, so quad 0
	// empties by time limit at 60 s; the 4-vnode job's bound is 0.5 × its
	// 2 minutes.
	jobs := fragmented()
	jobs[4].Walltime = 120
	off, _, err := Simulate(ctx, jobs, Options{Server: "slurm"})
	if err != nil {
		t.Fatal(err)
	}
	on, son, err := Simulate(ctx, jobs, Options{Server: "slurm", Compact: heuristics.CompactWait{Max: time.Hour, Fraction: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	leaves := func(vs []string) int {
		q := map[int]bool{}
		for _, v := range vs {
			n, _ := strconv.Atoi(strings.TrimPrefix(v, "v"))
			q[n/4] = true
		}
		return len(q)
	}
	if leaves(off[4].Vnodes) < 2 || leaves(on[4].Vnodes) != 1 || on[4].Wait > 60 || son.CompactWaits == 0 {
		t.Errorf("off %+v; on %+v (%+v)", off[4], on[4], son)
	}
}

// TestSimulateLeaves (--compact-wait-leaves): at 0 s three 3-node jobs
// start (A runs 5 s, B and C 60 s); at 1 s a 6-node job E arrives. On
// Slurm's leaves of 4, A, B and C each take a leaf (best fit) and leave
// one node free there, leaf 3 whole: E fits now only as 4 + 1 + 1 (CH
// 5,500) and is placed so with the rule's leaves off; with fewest or
// best it waits for A's leaf and starts as 4 + 2 (5,166), the least for
// 6 nodes, once A has ended. On the PBS planner (pairs in quads, the
// pairs its leaves), with pbsched.Check on every plan (Simulate stops on
// a rejected plan), E is spread over 4 pairs without the lever and waits
// for A's end to take 3 whole pairs with it.
func TestSimulateLeaves(t *testing.T) {
	job := func(k int, at float64, chunks int, run, wall int64) replay.Job {
		return replay.Job{K: k, At: time.Duration(at * float64(time.Second)), Chunks: chunks, Sleep: run, Walltime: wall, NCPUs: 4}
	}
	jobs := []replay.Job{job(0, 0, 3, 5, 15), job(1, 0, 3, 60, 70), job(2, 0, 3, 60, 70), job(3, 1, 6, 60, 70)}
	ctx := context.Background()
	groups := func(vs []string, size int) map[int]int {
		out := map[int]int{}
		for _, v := range vs {
			out[nodeID(v)/size]++
		}
		return out
	}
	cw := heuristics.CompactWait{Max: time.Hour, Fraction: 1000, PerWait: true, Many: true}
	off, _, err := Simulate(ctx, jobs, Options{Server: "slurm", Compact: cw})
	if err != nil {
		t.Fatal(err)
	}
	if e := off[3]; len(groups(e.Vnodes, 4)) != 3 || e.CH != 5500 || e.Wait > 0.5 {
		t.Fatalf("slurm, leaves off: E %+v", e)
	}
	for _, shape := range []heuristics.LeafShape{heuristics.LeavesFewest, heuristics.LeavesBest} {
		cw.Leaves = shape
		on, sum, err := Simulate(ctx, jobs, Options{Server: "slurm", Compact: cw})
		if err != nil {
			t.Fatal(err)
		}
		if e := on[3]; len(groups(e.Vnodes, 4)) != 2 || e.CH != 5166 || e.Start < on[0].End || sum.CompactWaits == 0 {
			t.Errorf("slurm, leaves %s: E %+v, A ended at %.1f (%+v)", shape, e, on[0].End, sum)
		}
		pbsOff, _, err := Simulate(ctx, jobs, Options{Compact: heuristics.CompactWait{Max: time.Hour, Fraction: 1000, PerWait: true, Many: true}})
		if err != nil {
			t.Fatal(err)
		}
		pbsOn, _, err := Simulate(ctx, jobs, Options{Compact: cw})
		if err != nil {
			t.Fatal(err)
		}
		if len(groups(pbsOff[3].Vnodes, 2)) != 4 || len(groups(pbsOn[3].Vnodes, 2)) != 3 || pbsOn[3].Start < pbsOn[0].End {
			t.Errorf("pbs, leaves %s: E on %v, without the lever on %v", shape, pbsOn[3].Vnodes, pbsOff[3].Vnodes)
		}
	}
}

// TestSimulateTree (--compact-wait-leaves tree|top, the PBS planner):
// A (3 vnodes, 5 s) and B (3 vnodes, 60 s) take three vnodes of a quad
// each, C and D (2 vnodes, 60 s) the two pairs of a third quad, so that
// at 1 s E (6 vnodes) fits now only as the fourth quad and A's and B's
// leftovers (4 + 1 + 1, CH 9,833) and is placed so without the lever;
// with tree or top it waits for A's quad and starts after A's end on a
// whole quad and a pair, at 9,166, the least CH of 6 vnodes on pairs in
// quads. Simulate stops on a plan that pbsched.Check rejects.
func TestSimulateTree(t *testing.T) {
	job := func(k int, at float64, chunks int, run, wall int64) replay.Job {
		return replay.Job{K: k, At: time.Duration(at * float64(time.Second)), Chunks: chunks, Sleep: run, Walltime: wall, NCPUs: 4}
	}
	jobs := []replay.Job{job(0, 0, 3, 5, 15), job(1, 0, 3, 60, 70), job(2, 0, 2, 60, 70), job(3, 0, 2, 60, 70), job(4, 1, 6, 60, 70)}
	ctx := context.Background()
	cw := heuristics.CompactWait{Max: time.Hour, Fraction: 1000, MinNodes: 2, PerWait: true, Many: true}
	off, _, err := Simulate(ctx, jobs, Options{Compact: cw})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range off {
		t.Logf("off: %d %.1f-%.1f %v %d", x.Job.K, x.Start, x.End, x.Vnodes, x.CH)
	}
	if e := off[4]; e.CH != 9833 || e.Start >= off[0].End {
		t.Fatalf("leaves off: E %+v, A ended at %.1f", e, off[0].End)
	}
	for _, shape := range []heuristics.LeafShape{heuristics.LeavesTree, heuristics.LeavesTop} {
		cw.Leaves = shape
		on, sum, err := Simulate(ctx, jobs, Options{Compact: cw})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range on {
			t.Logf("%s: %d %.1f-%.1f %v %d", shape, x.Job.K, x.Start, x.End, x.Vnodes, x.CH)
		}
		if e := on[4]; e.CH != 9166 || e.Start < on[0].End || sum.CompactWaits == 0 {
			t.Errorf("leaves %s: E %+v, A ended at %.1f (%+v)", shape, e, on[0].End, sum)
		}
	}
}

// TestSimulateLeavesFraction (--compact-wait-leaves-fraction): in
// TestSimulateLeaves' case E (6 nodes, walltime 70 s) arrives at 1 s and
// its shape is predicted empty at A's end: on Slurm (time limits in
// whole minutes: A's 15 s is a minute, E's 70 s two) 59 s from then, so
// that with LeavesFraction 0.1 (12 s) or 0.25 (30 s) E is not held and
// starts at once as 4 + 1 + 1 (5,500), and with 0.5 (60 s) or 0 (off) it
// waits for 4 + 2 (5,166) (best); on PBS (TestSimulateTree's case, tree
// shape) 14 s from then: 9,833 at once with 0.1 (7 s), 9,166 after A
// with 0.25 (17 s), 0.5 and 0. Simulate stops on a
// plan that pbsched.Check or slurmsched.Check rejects.
func TestSimulateLeavesFraction(t *testing.T) {
	job := func(k int, at float64, chunks int, run, wall int64) replay.Job {
		return replay.Job{K: k, At: time.Duration(at * float64(time.Second)), Chunks: chunks, Sleep: run, Walltime: wall, NCPUs: 4}
	}
	ctx := context.Background()
	slurmJobs := []replay.Job{job(0, 0, 3, 5, 15), job(1, 0, 3, 60, 70), job(2, 0, 3, 60, 70), job(3, 1, 6, 60, 70)}
	pbsJobs := []replay.Job{job(0, 0, 3, 5, 15), job(1, 0, 3, 60, 70), job(2, 0, 2, 60, 70), job(3, 0, 2, 60, 70), job(4, 1, 6, 60, 70)}
	for _, c := range []struct {
		f       float64
		slurmCH int64
		pbsCH   int64
	}{{0.1, 5500, 9833}, {0.25, 5500, 9166}, {0.5, 5166, 9166}, {0, 5166, 9166}} {
		cw := heuristics.CompactWait{Max: time.Hour, Fraction: 1000, PerWait: true, Many: true, Leaves: heuristics.LeavesBest, LeavesFraction: c.f}
		rs, _, err := Simulate(ctx, slurmJobs, Options{Server: "slurm", Compact: cw})
		if err != nil {
			t.Fatal(err)
		}
		if e := rs[3]; int64(e.CH) != c.slurmCH || (c.slurmCH == 5500) != (e.Start < rs[0].End) {
			t.Errorf("slurm, F %g: E %+v, A ended at %.1f", c.f, e, rs[0].End)
		}
		cw.MinNodes, cw.Leaves = 2, heuristics.LeavesTree
		rs, _, err = Simulate(ctx, pbsJobs, Options{Compact: cw})
		if err != nil {
			t.Fatal(err)
		}
		if e := rs[4]; int64(e.CH) != c.pbsCH || (c.pbsCH == 9833) != (e.Start < rs[0].End) {
			t.Errorf("pbs, F %g: E %+v, A ended at %.1f", c.f, e, rs[0].End)
		}
	}
}
