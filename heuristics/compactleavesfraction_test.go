package heuristics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
)

// TestCompactWaitLeavesFraction (--compact-wait-leaves-fraction): on
// random clusters (leaves of 4, pairs in quads, PBS's tiers), jobs of
// 2–12 nodes under every leaf shape and mode, the decision with
// LeavesFraction F is checked against the one without (itself held to
// brute force by TestCompactWaitLeavesRandom and
// TestCompactWaitTreeRandom): a job that only the leaves lever holds
// (no switch short of the whole tree can hold it) and whose predicted
// wait At − Now is more than ⌊F × walltime⌋ is not held; one whose wait
// is at most that is held exactly as before (same At and nodes); every
// other decision (fits now, not held, the one-switch wait of a job a
// switch can hold, a job of unknown walltime) is unchanged.
func TestCompactWaitLeavesFraction(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 37))
	topos := []*model.Topology{leaves4(t), quads(t), pbsTiers()}
	var cut, kept, same, oneSwitch int
	for iter := range 3000 {
		topo := topos[iter%len(topos)]
		n := topo.NumNodes()
		const now = 1000
		wall := 5 + int64(r.IntN(600))
		if iter%50 == 0 {
			wall = 0
		}
		in := CompactInput{Topo: topo, Now: now, Submit: now - int64(r.IntN(100)), Walltime: wall, Nodes: 2 + r.IntN(11)}
		randomNodes(r, &in, n, 2, 5)
		cw := CompactWait{Max: time.Duration(60+r.IntN(600)) * time.Second, Fraction: []float64{1, 1000}[r.IntN(2)], MinNodes: 2,
			PerWait: iter%3 != 0, Blind: iter%7 == 0, Leaves: LeafShape(1 + r.IntN(4)), Elapsed: float64(r.IntN(3))}
		if cw.Blind {
			cw.PerWait = false
		}
		before := DecideCompactWait(cw, in)
		cw.LeavesFraction = []float64{0.05, 0.25, 0.5, 1, 2}[r.IntN(5)]
		after := DecideCompactWait(cw, in)
		onlyLeaves := len(CompactSwitches(topo, in.Nodes)) == 0
		bound := int64(math.Floor(cw.LeavesFraction * float64(wall)))
		switch {
		case onlyLeaves && before.Wait && wall > 0 && before.At-now > bound:
			cut++
			if after.Wait || after.Fit != before.Fit {
				t.Fatalf("iter %d (%s): predicted wait %d s > %g × %d s, yet %+v", iter, cw.Leaves, before.At-now, cw.LeavesFraction, wall, after)
			}
		case onlyLeaves && before.Wait && wall > 0:
			kept++
			fallthrough
		default:
			if !onlyLeaves && before.Wait {
				oneSwitch++
			}
			if !before.Wait {
				same++
			}
			if after.Wait != before.Wait || after.At != before.At || after.Switch != before.Switch || !slices.Equal(after.Nodes, before.Nodes) ||
				after.Fit != before.Fit || !slices.Equal(after.FitNodes, before.FitNodes) {
				t.Fatalf("iter %d (%s, F %g, wall %d): before %+v, after %+v", iter, cw.Leaves, cw.LeavesFraction, wall, before, after)
			}
		}
	}
	t.Logf("%d cut, %d kept, %d held for one switch, %d not held before", cut, kept, oneSwitch, same)
	if cut < 50 || kept < 50 || oneSwitch < 50 {
		t.Fatalf("only %d cut, %d kept, %d one-switch waits: the cases do not exercise the bound", cut, kept, oneSwitch)
	}
}

// TestCompactWaitLeavesFractionEdge: the bound at its edge. A 6-node job
// on leaves of 4 whose 4 + 2 shape empties 14 s from now waits with
// LeavesFraction 1 and a walltime of 14 s (14 ≤ 1 × 14), not with 13 s,
// and with 0.5 × 28 s; with F 0 the walltime does not matter.
func TestCompactWaitLeavesFractionEdge(t *testing.T) {
	topo := leaves4(t)
	const now = 100
	in := CompactInput{Topo: topo, Now: now, Submit: now, Nodes: 6, Free: make([]bool, 16), EmptyAt: make([]int64, 16)}
	// Leaves 0–2 have one free node each, their others busy for long;
	// leaf 3 is whole and free; leaf 0's busy nodes end at now + 14.
	for id := range 16 {
		switch {
		case id >= 12 || id%4 == 3:
			in.Free[id], in.EmptyAt[id] = true, now
		case id < 4:
			in.EmptyAt[id] = now + 14
		default:
			in.EmptyAt[id] = now + 500
		}
	}
	for _, c := range []struct {
		f    float64
		wall int64
		wait bool
	}{{0, 1, true}, {1, 14, true}, {1, 13, false}, {0.5, 28, true}, {0.5, 27, false}, {2, 7, true}, {1, 0, true}} {
		for _, shape := range []LeafShape{LeavesFewest, LeavesBest, LeavesTree} {
			cw := CompactWait{Max: time.Hour, Fraction: 1000, PerWait: true, Leaves: shape, LeavesFraction: c.f}
			in.Walltime = c.wall
			d := DecideCompactWait(cw, in)
			if d.Wait != c.wait || d.Wait && d.At != now+14 {
				t.Errorf("%s, F %g, walltime %d: %+v, want wait %v", shape, c.f, c.wall, d, c.wait)
			}
		}
	}
}

// TestCompactWaitBestFewest (--compact-wait-leaves best-fewest): on
// random leaves-of-4 clusters, jobs of 5–12 nodes, with and without
// LeavesFraction, the hybrid's decision is LeavesBest's (itself held to
// brute force by TestCompactWaitLeavesRandom) whenever that fits now or
// waits, and LeavesFewest's otherwise; it never waits for best when best
// would not. A 5-node job whose 4 + 1 is far off but whose two leaves
// are near waits for the two leaves.
func TestCompactWaitBestFewest(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 8))
	topo := leaves4(t)
	var asBest, asFewest int
	for iter := range 2000 {
		const now = 1000
		in := CompactInput{Topo: topo, Now: now, Submit: now - int64(r.IntN(100)), Walltime: 5 + int64(r.IntN(600)), Nodes: 5 + r.IntN(8)}
		randomNodes(r, &in, 16, 2, 5)
		cw := CompactWait{Max: time.Duration(60+r.IntN(600)) * time.Second, Fraction: 1000, PerWait: true, LeavesFraction: []float64{0, 0.25, 1}[r.IntN(3)]}
		decide := func(s LeafShape) CompactDecision {
			c := cw
			c.Leaves = s
			return DecideCompactWait(c, in)
		}
		best, fewest, hyb := decide(LeavesBest), decide(LeavesFewest), decide(LeavesBestFewest)
		want := fewest
		if best.Wait || best.Fit >= 0 {
			want = best
			asBest++
		} else {
			asFewest++
		}
		if hyb.Wait != want.Wait || hyb.At != want.At || !slices.Equal(hyb.Nodes, want.Nodes) || hyb.Fit != want.Fit || !slices.Equal(hyb.FitNodes, want.FitNodes) {
			t.Fatalf("iter %d: best %+v, fewest %+v, best-fewest %+v", iter, best, fewest, hyb)
		}
	}
	if asBest < 100 || asFewest < 100 {
		t.Fatalf("only %d as best, %d as fewest", asBest, asFewest)
	}
	// 5 nodes: leaves 0 and 1 have 3 free each (3 + 2 fits now as two
	// leaves: fewest); a whole leaf is 300 s off. Best would wait for
	// 4 + 1 within a bound of 600 s, not within 0.5 × a walltime of 100 s.
	in := CompactInput{Topo: topo, Now: 100, Submit: 100, Walltime: 100, Nodes: 5, Free: make([]bool, 16), EmptyAt: make([]int64, 16)}
	for id := range 16 {
		switch {
		case id < 8 && id%4 != 3:
			in.Free[id], in.EmptyAt[id] = true, 100
		case id < 8:
			in.EmptyAt[id] = 400
		default:
			in.EmptyAt[id] = CompactNever
		}
	}
	cw := CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Leaves: LeavesBestFewest}
	if d := DecideCompactWait(cw, in); !d.Wait || d.At != 400 {
		t.Errorf("best-fewest, no leaves fraction: %+v, want a wait for 4 + 1 at 400", d)
	}
	cw.LeavesFraction = 0.5
	if d := DecideCompactWait(cw, in); d.Wait || len(d.FitNodes) != 5 {
		t.Errorf("best-fewest, leaves fraction 0.5: %+v, want 3 + 2 now", d)
	}
}
