package heuristics

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
)

// quads is the test servers' tree: 16 nodes, pairs (leaves) under quads
// (pods) under one core.
func quads(t *testing.T) *model.Topology {
	t.Helper()
	topo, err := model.NewLayout(4, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// compactCase: nodes 0,1 (quad 0) and 4 (quad 1) and 8 (quad 2) free now;
// quad 0's nodes 2 and 3 empty at now+20 and now+100; every other node
// at now+50.
func compactCase(t *testing.T) CompactInput {
	const now = 1000
	in := CompactInput{Topo: quads(t), Now: now, Submit: now - 5, Walltime: 200, Nodes: 4,
		Free: make([]bool, 16), EmptyAt: make([]int64, 16)}
	for id := range 16 {
		in.EmptyAt[id] = now + 50
	}
	for _, id := range []int{0, 1, 4, 8} {
		in.Free[id], in.EmptyAt[id] = true, now
	}
	in.EmptyAt[2], in.EmptyAt[3] = now+20, now+100
	return in
}

func TestCompactWaitFires(t *testing.T) {
	cw := CompactWait{Max: time.Hour, Fraction: 0.5} // bound: 0.5 × 200 s = 100 s
	in := compactCase(t)
	d := DecideCompactWait(cw, in)
	// Quad 0 has 4 empty at now+100 (node 3), quad 1, 2, 3 at now+50:
	// quad 1 (pod1) is the soonest (ties: lower index; same extra).
	if !d.Wait || in.Topo.Switch(d.Switch).Name != "pod1" || d.At != in.Now+50 || d.Bound != 100 || d.Waited != 5 {
		t.Fatalf("decision %+v", d)
	}
	if !slices.Equal(d.Nodes, []int{4, 5, 6, 7}) || d.Extra != 0 {
		t.Errorf("nodes %v extra %d", d.Nodes, d.Extra)
	}
	if !strings.Contains(d.Reason, "waiting up to 1m35s more") || !strings.Contains(d.Reason, "switch pod1 (4 nodes) will have them empty in 50s") {
		t.Errorf("reason %q", d.Reason)
	}
	// A 3-node job: quad 0 has 3 empty at now+20.
	in.Nodes = 3
	if d := DecideCompactWait(cw, in); !d.Wait || in.Topo.Switch(d.Switch).Name != "pod0" || d.At != in.Now+20 {
		t.Errorf("3 nodes: %+v", d)
	}
}

func TestCompactWaitNeverWhenOneSwitchFitsNow(t *testing.T) {
	cw := CompactWait{Max: time.Hour, Fraction: 0.5}
	in := compactCase(t)
	in.Free[2] = true
	in.Nodes = 3
	if d := DecideCompactWait(cw, in); d.Wait || !strings.Contains(d.Reason, "fits now within switch pod0") {
		t.Errorf("%+v", d)
	}
}

func TestCompactWaitOffAndSmall(t *testing.T) {
	in := compactCase(t)
	if d := DecideCompactWait(CompactWait{}, in); d.Wait || d.Reason != "the compact wait is off" {
		t.Errorf("off: %+v", d)
	}
	in.Nodes = 2
	if d := DecideCompactWait(CompactWait{Max: time.Hour}, in); d.Wait {
		t.Errorf("2 nodes, default min 3: %+v", d)
	}
	// With MinNodes 2, a 2-node job waits for a pair: none is free now
	// (0,1 are; pair 0 fits now), so it fits.
	if d := DecideCompactWait(CompactWait{Max: time.Hour, MinNodes: 2}, in); d.Wait || !strings.Contains(d.Reason, "fits now within switch leaf0") {
		t.Errorf("2 nodes, min 2: %+v", d)
	}
	// More nodes than any switch short of the core: never waits.
	in.Nodes = 5
	if d := DecideCompactWait(CompactWait{Max: time.Hour}, in); d.Wait || !strings.Contains(d.Reason, "no switch short of the whole cluster") {
		t.Errorf("5 nodes: %+v", d)
	}
}

func TestCompactWaitBound(t *testing.T) {
	in := compactCase(t)
	// Bound min(30 s, 100 s) = 30 s: the soonest quad (now+50) comes after
	// submit + 30.
	if d := DecideCompactWait(CompactWait{Max: 30 * time.Second, Fraction: 0.5}, in); d.Wait || d.Bound != 30 || !strings.Contains(d.Reason, "comes after its compact-wait bound 30s") {
		t.Errorf("cap: %+v", d)
	}
	// Fraction 0.1 of 200 s: 20 s.
	if d := DecideCompactWait(CompactWait{Max: time.Hour, Fraction: 0.1}, in); d.Wait || d.Bound != 20 {
		t.Errorf("fraction: %+v", d)
	}
	// Waited the bound: placed.
	in.Submit = in.Now - 100
	if d := DecideCompactWait(CompactWait{Max: time.Hour, Fraction: 0.5}, in); d.Wait || !strings.Contains(d.Reason, "has waited 1m40s, its compact-wait bound 1m40s") {
		t.Errorf("past the bound: %+v", d)
	}
	// Unknown times everywhere but the free nodes: nothing to wait for.
	in = compactCase(t)
	for id := range in.EmptyAt {
		if !in.Free[id] {
			in.EmptyAt[id] = CompactNever
		}
	}
	if d := DecideCompactWait(CompactWait{Max: time.Hour}, in); d.Wait || !strings.Contains(d.Reason, "no switch will ever have") {
		t.Errorf("never: %+v", d)
	}
}

// TestCompactWaitPerWait: with PerWait, Fraction × walltime bounds each
// predicted wait and Max the wait since submission.
func TestCompactWaitPerWait(t *testing.T) {
	in := compactCase(t) // soonest quad at now + 50; walltime 200 s
	for _, c := range []struct {
		max      time.Duration
		fraction float64
		waited   int64
		wait     bool
	}{
		{time.Hour, 0.2, 5, false},         // 40 s < 50 s
		{time.Hour, 0.25, 5, true},         // 50 s
		{time.Hour, 0.25, 500, true},       // waited long, still under Max
		{300 * time.Second, 1, 300, false}, // past Max
		{60 * time.Second, 1, 5, true},     // by submit + 60 = now + 55
		{50 * time.Second, 1, 5, false},    // by submit + 50 = now + 45
	} {
		in.Submit = in.Now - c.waited
		d := DecideCompactWait(CompactWait{Max: c.max, Fraction: c.fraction, PerWait: true}, in)
		if d.Wait != c.wait || d.Bound != int64(c.max/time.Second) {
			t.Errorf("max %v, fraction %v, waited %d s: %+v", c.max, c.fraction, c.waited, d)
		}
	}
}

// TestCompactWaitProperties, on random states: the rule never holds a
// job back when it is off, past its bound, or when one switch that can
// hold it has the nodes free now; when it does, the switch it names has
// the job's nodes empty at At, no later than submit + bound, and holds at
// least as many nodes as the job.
func TestCompactWaitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 34))
	topo := quads(t)
	size := switchSizes(topo)
	waits := 0
	for range 3000 {
		const now = 10_000
		in := CompactInput{Topo: topo, Now: now, Submit: now - int64(r.IntN(300)), Walltime: int64(1 + r.IntN(600)),
			Nodes: 1 + r.IntN(8)}
		randomNodes(r, &in, 16, 1, 4)
		cw := CompactWait{Max: time.Duration(r.IntN(400)) * time.Second, Fraction: r.Float64(), MinNodes: r.IntN(4), PerWait: r.IntN(2) == 0}
		d := DecideCompactWait(cw, in)
		if !d.Wait {
			continue
		}
		waits++
		bound, limit := cw.Bound(in.Walltime), in.Submit+cw.Bound(in.Walltime)
		if cw.PerWait {
			bound = int64(cw.Max / time.Second)
			limit = min(in.Submit+bound, now+cw.Bound(in.Walltime))
		}
		if !cw.On() || d.Waited >= bound || in.Nodes < cw.minNodes() || d.At > limit {
			t.Fatalf("waits off, past the bound, too small or too long: %+v %+v", cw, d)
		}
		for _, s := range CompactSwitches(topo, in.Nodes) {
			n := 0
			for _, id := range switchNodes(topo, s) {
				if in.Free[id] {
					n++
				}
			}
			if n >= in.Nodes {
				t.Fatalf("waits though switch %d has %d free for %d nodes: %+v", s, n, in.Nodes, d)
			}
		}
		empty := 0
		for _, id := range d.Nodes {
			if in.EmptyAt[id] <= d.At {
				empty++
			}
		}
		if size[d.Switch] < in.Nodes || empty != in.Nodes+d.Extra || d.At > in.Submit+d.Bound || d.At < now {
			t.Fatalf("switch %d (size %d): %d empty by %d, %+v", d.Switch, size[d.Switch], empty, d.At, d)
		}
	}
	if waits < 50 {
		t.Errorf("the rule fired %d times in 3000 random states; the test exercises too little", waits)
	}
}

// TestCompactWaitBlind: with Blind the job waits out its bound even when
// the soonest switch empties (by the walltimes) after it, and is placed
// once it has waited the bound.
func TestCompactWaitBlind(t *testing.T) {
	in := compactCase(t)
	cw := CompactWait{Max: 30 * time.Second, Fraction: 0.5, Blind: true}
	// The soonest quad (now+50) comes after submit + 30: without Blind
	// the job is spread (TestCompactWaitBound); with it, it waits.
	d := DecideCompactWait(cw, in)
	if !d.Wait || d.Bound != 30 || in.Topo.Switch(d.Switch).Name != "pod1" || !strings.Contains(d.Reason, "waits out its bound all the same") {
		t.Fatalf("blind: %+v", d)
	}
	in.Submit = in.Now - 30
	if d := DecideCompactWait(cw, in); d.Wait || !strings.Contains(d.Reason, "has waited 30s, its compact-wait bound 30s") {
		t.Errorf("blind, past the bound: %+v", d)
	}
	// Nothing will ever empty: it does not wait, blind or not.
	in = compactCase(t)
	for id := range in.EmptyAt {
		if !in.Free[id] {
			in.EmptyAt[id] = CompactNever
		}
	}
	if d := DecideCompactWait(cw, in); d.Wait {
		t.Errorf("blind, never: %+v", d)
	}
}

// switchNodes lists the node ids under switch s.
func switchNodes(t *model.Topology, s int) []int {
	return nodesUnder(t, []int{s})[s]
}

// TestCompactWaitSwitchNodes: a 2-node job (MinNodes 2) with nodes 4
// and 6 free (quad 1, two pairs) and no free pair: it waits for a pair
// by default; with SwitchNodes 4 it fits now within quad 1; with nodes 4
// and 8 free (two quads) it waits for a quad.
func TestCompactWaitSwitchNodes(t *testing.T) {
	in := compactCase(t)
	in.Free = make([]bool, 16)
	for id := range 16 {
		in.EmptyAt[id] = in.Now + 50
	}
	in.Free[4], in.Free[6] = true, true
	in.EmptyAt[4], in.EmptyAt[6] = in.Now, in.Now
	in.Nodes = 2
	cw := CompactWait{Max: time.Hour, MinNodes: 2}
	if d := DecideCompactWait(cw, in); !d.Wait || in.Topo.Switch(d.Switch).Level != 1 {
		t.Errorf("pairs: %+v", d)
	}
	cw.SwitchNodes = 4
	if d := DecideCompactWait(cw, in); d.Wait || !strings.Contains(d.Reason, "fits now within switch pod1") {
		t.Errorf("quads, fits: %+v", d)
	}
	in.Free[6], in.EmptyAt[6] = false, in.Now+50
	in.Free[8], in.EmptyAt[8] = true, in.Now
	if d := DecideCompactWait(cw, in); !d.Wait || in.Topo.Switch(d.Switch).Level != 2 || len(d.Nodes) != 4 {
		t.Errorf("quads, waits: %+v", d)
	}
}

// TestCompactPredictEnd: the walltime's end when Elapsed is 0 or the
// start unknown; now + Elapsed × elapsed (1 s at least) otherwise, never
// past the walltime's end.
func TestCompactPredictEnd(t *testing.T) {
	for _, c := range []struct {
		el                    float64
		now, start, end, want int64
	}{
		{0, 100, 40, 500, 500}, {1, 100, 0, 500, 500}, {1, 100, 150, 500, 500},
		{1, 100, 40, 500, 160}, {2, 100, 40, 500, 220}, {1, 100, 40, 130, 130},
		{1, 100, 100, 500, 101}, {0.5, 100, 99, 500, 101},
	} {
		if got := (CompactWait{Max: time.Hour, Elapsed: c.el}).PredictEnd(c.now, c.start, c.end); got != c.want {
			t.Errorf("%+v: %d", c, got)
		}
	}
}

// TestCompactWaitFitBestFit: a 2-node job (MinNodes 2, SwitchNodes 4)
// that fits now in quad 0 (2 free) and quad 1 (4 free) is reported as
// fitting in quad 0, the fuller, with its first two free nodes
// (CompactDecision.Fit, FitNodes); a job that waits, or that the rule
// does not look at, has Fit -1 and no FitNodes.
func TestCompactWaitFitBestFit(t *testing.T) {
	in := compactCase(t)
	in.Free = make([]bool, 16)
	for _, id := range []int{2, 3, 4, 5, 6, 7} {
		in.Free[id], in.EmptyAt[id] = true, in.Now
	}
	in.Nodes = 2
	cw := CompactWait{Max: time.Hour, MinNodes: 2, SwitchNodes: 4}
	d := DecideCompactWait(cw, in)
	if d.Wait || d.Fit < 0 || in.Topo.Switch(d.Fit).Name != "pod0" || !slices.Equal(d.FitNodes, []int{2, 3}) || !strings.Contains(d.Reason, "fits now within switch pod0") {
		t.Errorf("best fit: %+v", d)
	}
	// Three nodes: only quad 1 holds them now.
	in.Nodes = 3
	if d := DecideCompactWait(cw, in); d.Wait || in.Topo.Switch(d.Fit).Name != "pod1" || !slices.Equal(d.FitNodes, []int{4, 5, 6}) {
		t.Errorf("3 nodes: %+v", d)
	}
	// Waiting (compactCase: no quad has 4 free): no Fit.
	if d := DecideCompactWait(CompactWait{Max: time.Hour, Fraction: 0.5}, compactCase(t)); !d.Wait || d.Fit != -1 || d.FitNodes != nil {
		t.Errorf("waits: %+v", d)
	}
	// Below MinNodes: no Fit.
	in.Nodes = 2
	if d := DecideCompactWait(CompactWait{Max: time.Hour}, in); d.Wait || d.Fit != -1 || d.FitNodes != nil {
		t.Errorf("small: %+v", d)
	}
}

// TestCompactWaitFitRandom: on random inputs, when the rule lets a job
// start because it fits now within a switch, FitNodes are Nodes free
// nodes under Fit, and no switch the job could wait for has fewer free
// nodes that still hold it.
func TestCompactWaitFitRandom(t *testing.T) {
	topo := quads(t)
	r := rand.New(rand.NewPCG(7, 34))
	fits := 0
	for range 2000 {
		in := CompactInput{Topo: topo, Now: 1000, Submit: 990, Walltime: 100, Nodes: 2 + r.IntN(3),
			Free: make([]bool, 16), EmptyAt: make([]int64, 16)}
		for id := range 16 {
			in.Free[id] = r.IntN(2) == 0
			in.EmptyAt[id] = in.Now
			if !in.Free[id] {
				in.EmptyAt[id] = in.Now + int64(r.IntN(200))
			}
		}
		cw := CompactWait{Max: time.Hour, MinNodes: 2, SwitchNodes: 2 * r.IntN(3)}
		d := DecideCompactWait(cw, in)
		if d.Fit < 0 {
			continue
		}
		fits++
		under := switchNodes(topo, d.Fit)
		freeIn := func(s int) int {
			n := 0
			for _, id := range switchNodes(topo, s) {
				if in.Free[id] {
					n++
				}
			}
			return n
		}
		if d.Wait || len(d.FitNodes) != in.Nodes {
			t.Fatalf("%+v", d)
		}
		for _, id := range d.FitNodes {
			if !in.Free[id] || !slices.Contains(under, id) {
				t.Fatalf("node %d of %+v", id, d)
			}
		}
		for _, s := range CompactSwitches(topo, max(in.Nodes, cw.SwitchNodes)) {
			if n := freeIn(s); n >= in.Nodes && n < freeIn(d.Fit) {
				t.Fatalf("switch %d has %d free, fit %d has %d: %+v", s, n, d.Fit, freeIn(d.Fit), d)
			}
		}
	}
	if fits == 0 {
		t.Error("no input fitted: the test exercises nothing")
	}
}

// randomNodes fills in.Free and in.EmptyAt for n nodes at random: of
// every `of` draws, pFree free now, one never empty (CompactNever), the
// rest empty within 400 s of now.
func randomNodes(r *rand.Rand, in *CompactInput, n, pFree, of int) {
	in.Free, in.EmptyAt = make([]bool, n), make([]int64, n)
	for id := range n {
		switch x := r.IntN(of); {
		case x < pFree:
			in.Free[id], in.EmptyAt[id] = true, in.Now
		case x == pFree:
			in.EmptyAt[id] = CompactNever
		default:
			in.EmptyAt[id] = in.Now + 1 + int64(r.IntN(400))
		}
	}
}
