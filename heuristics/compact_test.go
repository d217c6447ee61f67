package heuristics

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
)

// compactNowReference is compactNow as it was first written: every move
// is kept when model.Check accepts the whole schedule. The incremental
// compactNow must make the same moves.
func compactNowReference(w *model.Window, allocs []model.Allocation) {
	inUse := func(k int, self int) bool {
		if !w.IsIdle(k) {
			return true
		}
		for i, a := range allocs {
			if i != self && a.Start == w.Time && a.Units[k] > 0 {
				return true
			}
		}
		return false
	}
	usable := slices.Clone(w.Idle)
	for _, r := range w.Running {
		usable = append(usable, r.Nodes...)
	}
	slices.Sort(usable)
	usable = slices.Compact(usable)
	for i := range allocs {
		a := &allocs[i]
		if a.Start != w.Time {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(a.Units)) {
			if inUse(k, i) {
				continue
			}
			for _, m := range usable {
				if m == k || !inUse(m, i) {
					continue
				}
				old := a.Units
				moved := maps.Clone(old)
				moved[m] += moved[k]
				delete(moved, k)
				a.Units, a.Nodes = moved, slices.Sorted(maps.Keys(moved))
				if model.Check(w, allocs) == nil {
					break
				}
				a.Units, a.Nodes = old, slices.Sorted(maps.Keys(old))
			}
		}
	}
}

// randomCompactWindow builds a small time-and-resource window with idle,
// running (shared, exclusive, whole-node, with and without units) and
// down nodes, capacities that differ, reservations, and waiting jobs of
// every place (and a few whole-node ones), and a random feasible schedule
// of it that starts many units alone on idle nodes.
func randomCompactWindow(t *testing.T, r *rand.Rand) (*model.Window, []model.Allocation) {
	t.Helper()
	nodes := 3 + r.IntN(8)
	topo, err := model.NewLayout(1, 1+r.IntN(2), nodes)
	if err != nil {
		t.Fatal(err)
	}
	n := topo.NumNodes()
	const now = 1_000_000
	w := &model.Window{Time: now, Topology: topo, Cost: model.DefaultCostModel, Resources: make([]model.Resources, n)}
	for k := range n {
		w.Resources[k] = model.Resources{"ncpus": int64(4 * (1 + r.IntN(4)))}
		if r.IntN(3) > 0 {
			w.Resources[k]["ngpus"] = int64(r.IntN(3))
		}
		switch r.IntN(6) {
		case 0: // down
		case 1, 2:
			rj := model.RunningJob{ID: "r" + string(rune('a'+k)), Nodes: []int{k}, End: now + int64(60*(1+r.IntN(20)))}
			switch r.IntN(5) {
			case 0: // whole-node
			case 1:
				rj.Select = model.Select{{Count: 1, Amounts: model.Resources{"ncpus": int64(1 + r.IntN(4))}}}
			default:
				rj.Select = model.Select{{Count: 1, Amounts: model.Resources{"ncpus": int64(1 + r.IntN(3))}}}
				rj.Units = map[int]int{k: 1 + r.IntN(2)}
				rj.Place.Exclusive = r.IntN(6) == 0
			}
			w.Running = append(w.Running, rj)
		default:
			w.Idle = append(w.Idle, k)
		}
	}
	if r.IntN(3) == 0 && n > 0 {
		k := r.IntN(n)
		start := now + int64(60*r.IntN(10)) - 120
		w.Reservations = append(w.Reservations, model.Reservation{ID: "R1", Nodes: []int{k}, Start: start, End: start + int64(60*(1+r.IntN(10)))})
	}
	jobs := 2 + r.IntN(10)
	for j := range jobs {
		job := model.Job{ID: "j" + string(rune('a'+j)), Walltime: int64(60 * (1 + r.IntN(15))), Submit: now - int64(r.IntN(1000))}
		if r.IntN(8) == 0 {
			job.Nodes = 1 + r.IntN(2)
		} else {
			amounts := model.Resources{"ncpus": int64(1 + r.IntN(6))}
			if r.IntN(3) == 0 {
				amounts["ngpus"] = 1
			}
			job.Select = model.Select{{Count: 1 + r.IntN(3), Amounts: amounts}}
			job.Nodes = job.Select[0].Count
			job.Place.Arrangement = []string{"", model.ArrangePack, model.ArrangeScatter}[r.IntN(3)]
			job.Place.Exclusive = r.IntN(8) == 0
		}
		w.Jobs = append(w.Jobs, job)
	}
	usable := slices.Clone(w.Idle)
	for _, rj := range w.Running {
		usable = append(usable, rj.Nodes...)
	}
	// Random feasible placements, idle nodes first, most of them now.
	var allocs []model.Allocation
	for _, j := range r.Perm(jobs) {
		job := &w.Jobs[j]
		units := job.Nodes
		for try := 0; try < 20; try++ {
			start := int64(now)
			if r.IntN(4) == 0 {
				start += int64(60 * r.IntN(10))
			}
			a := model.Allocation{Job: j, Start: start, Units: map[int]int{}}
			pool := w.Idle
			if len(pool) == 0 || r.IntN(4) == 0 {
				pool = usable
			}
			if len(pool) == 0 {
				break
			}
			for range units {
				a.Units[pool[r.IntN(len(pool))]]++
			}
			a.Nodes = slices.Sorted(maps.Keys(a.Units))
			if model.Check(w, append(slices.Clone(allocs), a)) == nil {
				allocs = append(allocs, a)
				break
			}
		}
	}
	return w, allocs
}

func cloneAllocs(allocs []model.Allocation) []model.Allocation {
	out := slices.Clone(allocs)
	for i := range out {
		out[i].Units = maps.Clone(out[i].Units)
		out[i].Nodes = slices.Clone(out[i].Nodes)
	}
	return out
}

// TestCompactNowMatchesReference: on random feasible schedules, the
// incremental compactNow makes exactly the moves of the model.Check-per-move
// reference, and its schedule passes model.Check.
func TestCompactNowMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	moved, windows := 0, 0
	for range 3000 {
		w, allocs := randomCompactWindow(t, r)
		if len(allocs) == 0 {
			continue
		}
		windows++
		want := cloneAllocs(allocs)
		compactNowReference(w, want)
		got := cloneAllocs(allocs)
		if !CompactNow(w, got, time.Time{}) {
			t.Fatal("stopped without a deadline")
		}
		if err := model.Check(w, got); err != nil {
			t.Fatalf("compacted schedule fails model.Check: %v", err)
		}
		for i := range want {
			if !maps.Equal(want[i].Units, got[i].Units) || !slices.Equal(want[i].Nodes, got[i].Nodes) {
				t.Fatalf("allocation %d (job %s): got units %v, the reference %v (before %v)", i, w.Jobs[want[i].Job].ID,
					got[i].Units, want[i].Units, allocs[i].Units)
			}
			if !maps.Equal(want[i].Units, allocs[i].Units) {
				moved++
			}
		}
	}
	t.Logf("%d windows, %d allocations changed", windows, moved)
	if moved < 100 {
		t.Errorf("only %d allocations changed: the windows do not exercise compaction", moved)
	}
}

// TestCompactNowDeadline: a passed deadline stops compaction before any
// move, leaving the schedule as it was.
func TestCompactNowDeadline(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 200 {
		w, allocs := randomCompactWindow(t, r)
		got := cloneAllocs(allocs)
		CompactNow(w, got, time.Now().Add(-time.Second))
		for i := range got {
			if !maps.Equal(got[i].Units, allocs[i].Units) {
				t.Fatalf("allocation %d moved after the deadline: %v → %v", i, allocs[i].Units, got[i].Units)
			}
		}
	}
}
