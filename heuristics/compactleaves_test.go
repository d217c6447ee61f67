package heuristics

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
)

// leaves4 is the Slurm test cluster's tree: 16 nodes in leaves of 4
// under one root.
func leaves4(t *testing.T) *model.Topology {
	t.Helper()
	specs := []model.SwitchSpec{{Name: "root"}}
	for l := range 4 {
		s := model.SwitchSpec{Name: fmt.Sprintf("l%d", l)}
		for i := 4 * l; i < 4*l+4; i++ {
			s.Nodes = append(s.Nodes, fmt.Sprintf("c%02d", i))
		}
		specs = append(specs, s)
		specs[0].Switches = append(specs[0].Switches, s.Name)
	}
	topo, err := model.BuildTopology(specs)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// bestPairs is, by brute force, the most node pairs within a leaf and
// the fewest leaves of any way to take k nodes from leaves of cnt
// available nodes (-1 when fewer than k are available).
func bestPairs(cnt []int, k int) (pairs, leaves int) {
	pairs, leaves = -1, -1
	var rec func(i, r, p, l int)
	rec = func(i, r, p, l int) {
		if r == 0 {
			pairs = max(pairs, p)
			if leaves < 0 || l < leaves {
				leaves = l
			}
			return
		}
		if i == len(cnt) {
			return
		}
		for a := 0; a <= min(cnt[i], r); a++ {
			rec(i+1, r-a, p+a*(a-1)/2, l+min(a, 1))
		}
	}
	rec(0, k, 0, 0)
	return pairs, leaves
}

// TestLeafShapeBrute: leafShape takes as many pairs within a leaf, and
// as few leaves, as the best of all ways (brute force), takes no more
// of a leaf than it has, and exactly k nodes.
func TestLeafShapeBrute(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 7))
	for range 3000 {
		cnt := make([]int, 1+r.IntN(6))
		for i := range cnt {
			cnt[i] = r.IntN(6)
		}
		k := 1 + r.IntN(16)
		got, pairs := leafShape(cnt, k)
		wantPairs, wantLeaves := bestPairs(cnt, k)
		if wantPairs < 0 {
			if got != nil {
				t.Fatalf("cnt %v k %d: %v, want nil (too few)", cnt, k, got)
			}
			continue
		}
		n, used := 0, map[int]bool{}
		for _, x := range got {
			if x.n < 1 || x.n > cnt[x.leaf] || used[x.leaf] {
				t.Fatalf("cnt %v k %d: take %+v of %v", cnt, k, x, got)
			}
			used[x.leaf] = true
			n += x.n
		}
		if n != k || pairs != wantPairs || len(got) != wantLeaves {
			t.Fatalf("cnt %v k %d: %v (%d nodes, %d pairs, %d leaves), want %d pairs on %d leaves", cnt, k, got, n, pairs, len(got), wantPairs, wantLeaves)
		}
	}
}

// leavesCase: leaves of 4, now 1000. Free now: c00–c02 (leaf 0), c04–c06
// (leaf 1), c08 (leaf 2); c03 empties at +20, c07 at +40, c09–c11 at
// +60, leaf 3 at +500.
func leavesCase(t *testing.T) CompactInput {
	const now = 1000
	in := CompactInput{Topo: leaves4(t), Now: now, Submit: now - 5, Walltime: 600, Nodes: 6,
		Free: make([]bool, 16), EmptyAt: make([]int64, 16)}
	for id := range 16 {
		in.EmptyAt[id] = now + 500
	}
	for _, id := range []int{0, 1, 2, 4, 5, 6, 8} {
		in.Free[id], in.EmptyAt[id] = true, now
	}
	in.EmptyAt[3], in.EmptyAt[7] = now+20, now+40
	in.EmptyAt[9], in.EmptyAt[10], in.EmptyAt[11] = now+60, now+60, now+60
	return in
}

// TestCompactWaitLeaves: a 6-node job fits now on two leaves (3 + 3):
// under LeavesFewest it starts; under LeavesBest it waits for a whole
// leaf and 2 more (leaf 0 whole at +20); an 8-node job waits for two
// whole leaves under both (leaf 0 at +20, leaf 1 at +40: +40); with the
// rule's leaves off, or past its bound, or with the wait after the
// bound, it does not wait.
func TestCompactWaitLeaves(t *testing.T) {
	cw := CompactWait{Max: time.Hour, Fraction: 1, PerWait: true, Leaves: LeavesFewest}
	in := leavesCase(t)
	d := DecideCompactWait(cw, in)
	if d.Wait || d.Fit != 0 || len(d.FitNodes) != 6 || !strings.Contains(d.Reason, "fits now in its fewest shape") {
		t.Fatalf("fewest, 6 nodes: %+v", d)
	}
	cw.Leaves = LeavesBest
	d = DecideCompactWait(cw, in)
	if !d.Wait || d.At != in.Now+20 || in.Topo.Switch(d.Switch).Name != "root" || !strings.Contains(d.Reason, "4 on l0 + 2 on l") {
		t.Fatalf("best, 6 nodes: %+v", d)
	}
	for _, id := range []int{0, 1, 2, 3} {
		if !slices.Contains(d.Nodes, id) {
			t.Errorf("best, 6 nodes: nodes %v without leaf 0's", d.Nodes)
		}
	}
	in.Nodes = 8
	for _, shape := range []LeafShape{LeavesFewest, LeavesBest} {
		cw.Leaves = shape
		d = DecideCompactWait(cw, in)
		if !d.Wait || d.At != in.Now+40 || !slices.Equal(d.Nodes, []int{0, 1, 2, 3, 4, 5, 6, 7}) || !strings.HasPrefix(d.Reason, "waiting up to") {
			t.Errorf("%s, 8 nodes: %+v", shape, d)
		}
	}
	for name, c := range map[string]struct {
		cw CompactWait
		in func(*CompactInput)
	}{
		"leaves off":  {CompactWait{Max: time.Hour, Fraction: 1, PerWait: true}, nil},
		"past bound":  {CompactWait{Max: 5 * time.Second, Fraction: 1, PerWait: true, Leaves: LeavesBest}, nil},
		"after bound": {CompactWait{Max: time.Hour, Fraction: 0.05, PerWait: true, Leaves: LeavesBest}, nil}, // 0.05 × 600 s = 30 s < 40 s
		"never": {CompactWait{Max: time.Hour, Fraction: 1, PerWait: true, Leaves: LeavesBest}, func(in *CompactInput) {
			for _, id := range []int{3, 7, 9, 10, 11, 12, 13, 14, 15} {
				in.EmptyAt[id] = CompactNever // 7 nodes ever usable
			}
		}},
		"3-node small": {CompactWait{Max: time.Hour, Fraction: 1, PerWait: true, Leaves: LeavesBest, MinNodes: 9}, nil},
	} {
		in := leavesCase(t)
		in.Nodes = 8
		if c.in != nil {
			c.in(&in)
		}
		if d := DecideCompactWait(c.cw, in); d.Wait || d.Fit >= 0 {
			t.Errorf("%s: %+v", name, d)
		}
	}
	// Blind waits out its bound even when the shape comes after it.
	in = leavesCase(t)
	in.Nodes = 8
	if d := DecideCompactWait(CompactWait{Max: time.Hour, Fraction: 0.05, Blind: true, Leaves: LeavesBest}, in); !d.Wait || !strings.Contains(d.Reason, "after the bound") {
		t.Errorf("blind: %+v", d)
	}
}

// TestCompactWaitLeavesRandom: on random leaves-of-4 clusters, a job of
// 5–12 nodes under either shape: when it fits now, FitNodes are k
// distinct free nodes in the wanted shape (brute force on the free
// counts); when it waits, At is the soonest time at which the nodes
// empty by then (EmptyAt) give it the shape, its Nodes hold k such
// nodes in the shape, and At is within its limit; and it never waits
// when it fits now.
func TestCompactWaitLeavesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 37))
	topo := leaves4(t)
	waits, fits := 0, 0
	for iter := range 2000 {
		const now = 1000
		in := CompactInput{Topo: topo, Now: now, Submit: now - int64(r.IntN(100)), Walltime: 50 + int64(r.IntN(600)), Nodes: 5 + r.IntN(8)}
		randomNodes(r, &in, 16, 2, 5)
		shape := LeafShape(1 + iter%2)
		cw := CompactWait{Max: time.Duration(60+r.IntN(600)) * time.Second, Fraction: 1, PerWait: iter%3 == 0, Leaves: shape}
		// The wanted shape on the nodes ever usable.
		usable := make([]int, 4)
		for id := range 16 {
			if in.EmptyAt[id] != CompactNever {
				usable[id/4]++
			}
		}
		wantPairs, wantLeaves := bestPairs(usable, in.Nodes)
		ok := func(cnt []int) bool {
			p, l := bestPairs(cnt, in.Nodes)
			if shape == LeavesFewest {
				return l >= 0 && l <= wantLeaves
			}
			return p >= 0 && p >= wantPairs
		}
		countBy := func(t int64, within []int) []int {
			cnt := make([]int, 4)
			for _, id := range within {
				if in.Free[id] || t > now && in.EmptyAt[id] <= t {
					cnt[id/4]++
				}
			}
			return cnt
		}
		all := make([]int, 16)
		for i := range all {
			all[i] = i
		}
		d := DecideCompactWait(cw, in)
		fitsNow := wantPairs >= 0 && ok(countBy(now, all))
		switch {
		case fitsNow:
			fits++
			if d.Wait || len(d.FitNodes) != in.Nodes {
				t.Fatalf("iteration %d: fits now, %+v", iter, d)
			}
			seen := map[int]bool{}
			for _, id := range d.FitNodes {
				if !in.Free[id] || seen[id] {
					t.Fatalf("iteration %d: fit nodes %v", iter, d.FitNodes)
				}
				seen[id] = true
			}
			if !ok(countBy(now, d.FitNodes)) {
				t.Fatalf("iteration %d: fit nodes %v not in the %s shape", iter, d.FitNodes, shape)
			}
		case d.Wait:
			waits++
			if !ok(countBy(d.At, d.Nodes)) || d.At < now {
				t.Fatalf("iteration %d: waits for %v at %d, not the %s shape then", iter, d.Nodes, d.At, shape)
			}
			for _, e := range in.EmptyAt {
				if e > now && e < d.At && ok(countBy(e, all)) {
					t.Fatalf("iteration %d: waits until %d, the shape is there at %d", iter, d.At, e)
				}
			}
			limit := in.Submit + int64(cw.Max/time.Second)
			if cw.PerWait {
				limit = min(limit, now+cw.Bound(in.Walltime))
			} else {
				limit = in.Submit + cw.Bound(in.Walltime)
			}
			if d.At > limit || d.Waited >= d.Bound {
				t.Fatalf("iteration %d: waits until %d past its limit %d: %+v", iter, d.At, limit, d)
			}
		}
	}
	if waits < 100 || fits < 100 {
		t.Fatalf("%d waits, %d fits in 2000: the test exercises too little", waits, fits)
	}
}
