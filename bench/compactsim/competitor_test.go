package compactsim

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/bench/replay"
)

func freeMap(ids ...int) []bool {
	f := make([]bool, Vnodes)
	for _, id := range ids {
		f[id] = true
	}
	return f
}

// TestPsetsPlace: the placement-set rule on quads of 4: the quad with
// the fewest free vnodes that holds the job, its first free vnodes; a
// job of 4 or fewer that no quad holds now does not run, however many
// vnodes are free; a larger one spans, on the first free vnodes.
func TestPsetsPlace(t *testing.T) {
	for _, c := range []struct {
		name string
		free []bool
		k    int
		want []int
	}{
		{"best-fit quad", freeMap(0, 1, 2, 3, 5, 6, 7, 9, 10), 2, []int{9, 10}},
		{"fewest free that holds 3", freeMap(0, 1, 2, 3, 5, 6, 7, 9, 10), 3, []int{5, 6, 7}},
		{"no quad holds it: waits", freeMap(0, 1, 4, 5, 8, 9, 12, 13), 3, nil},
		{"whole quad", freeMap(0, 1, 2, 3, 4, 5, 6, 7), 4, []int{0, 1, 2, 3}},
		{"larger than a quad spans", freeMap(1, 3, 5, 7, 9, 11, 13), 5, []int{1, 3, 5, 7, 9}},
		{"larger than a quad, too few free", freeMap(1, 3, 5, 7), 5, nil},
	} {
		if got := psetsPlace(c.free, c.k); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSlurmPlace: topology/tree's best fit on leaves of 4: the fullest
// leaf that holds the job; across leaves, the largest first and the rest
// on the leaf that holds it with the fewest free nodes; nil when too few
// nodes are free.
func TestSlurmPlace(t *testing.T) {
	topo, err := SlurmTopology()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		free []bool
		k    int
		want []int
	}{
		{"best-fit leaf", freeMap(0, 1, 2, 3, 5, 6, 7, 9, 10), 2, []int{9, 10}},
		{"across leaves: largest, then the tightest", freeMap(0, 1, 2, 5, 6, 9, 12, 13), 4, []int{0, 1, 2, 9}},
		{"too few", freeMap(0, 5), 3, nil},
	} {
		got, err := slurmPlace(topo, c.free, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestModelsOnFragmented: on fragmented() (a 4-vnode job arriving when
// it fits only across quads, quad 0 empty at 3 s), pbs_sched as installed
// spreads it at once and placement sets wait for quad 0; every job runs
// once (the simulator refuses a start on a busy vnode).
func TestModelsOnFragmented(t *testing.T) {
	ctx := context.Background()
	plain, _, err := Simulate(ctx, fragmented(), Options{Server: ServerPBSSched})
	if err != nil {
		t.Fatal(err)
	}
	psets, sum, err := Simulate(ctx, fragmented(), Options{Server: ServerPsets})
	if err != nil {
		t.Fatal(err)
	}
	quads := func(vs []string) map[int]bool {
		q := map[int]bool{}
		for _, v := range vs {
			q[nodeID(v)/4] = true
		}
		return q
	}
	if j := plain[4]; len(quads(j.Vnodes)) < 2 || j.Wait > 0.5 {
		t.Errorf("pbs_sched: %+v", j)
	}
	if j := psets[4]; len(quads(j.Vnodes)) != 1 || !quads(j.Vnodes)[0] || j.Wait < 2 || j.Wait > 3 {
		t.Errorf("placement sets: %+v", j)
	}
	for _, r := range append(plain, psets...) {
		if r.Start < r.Submit || len(r.Vnodes) != r.Job.Chunks {
			t.Errorf("job %d: %+v", r.Job.K, r)
		}
	}
	if sum.MultiNode != 5 {
		t.Errorf("summary %+v", sum)
	}
}

// TestSlurmModelBackfill: A (12 nodes, 100 s, a 2-minute limit) runs; B
// (8 nodes) cannot start before A ends, and the main scheduler stops at
// it, so C (2 nodes, 10 s, a 1-minute limit, ending before A's limit)
// starts only at the next backfill pass, 30 s after the one that planned
// B, and B starts when A ends.
func TestSlurmModelBackfill(t *testing.T) {
	job := func(k int, at float64, chunks int, run, wall int64) replay.Job {
		return replay.Job{K: k, At: time.Duration(at * float64(time.Second)), Chunks: chunks, Sleep: run, Walltime: wall, NCPUs: 4}
	}
	jobs := []replay.Job{job(0, 0, 12, 100, 110), job(1, 0.5, 8, 10, 20), job(2, 1, 2, 10, 20)}
	rs, _, err := Simulate(context.Background(), jobs, Options{Server: ServerSlurmBackfill})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := rs[0], rs[1], rs[2]
	if a.Start != 0 || b.Start < a.End || b.Start > a.End+0.5 {
		t.Errorf("A %+v, B %+v", a, b)
	}
	if c.Start < 30 || c.Start > 32 || c.End > b.Start {
		t.Errorf("C %+v (B planned at %.1f s)", c, b.Submit)
	}
}
