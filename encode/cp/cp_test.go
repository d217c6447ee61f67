package cp_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// window: n0–n4 on one leaf; n0, n1 idle; r1 uses 8 of n2's 16 cores
// until 100; r2 uses n3 whole until 50; n4 is down; n0 is reserved over
// [200, 300); n1 has 8 cores.
const window = `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 5}},
 "idle": "n[0-1]",
 "running": [{"id": "r1", "nodes": "n2", "end": 100, "select": "1:ncpus=8", "units": {"n2": 1}},
             {"id": "r2", "nodes": "n3", "end": 50}],
 "queues": {"q1": {"expected_wait": 60}, "q2": {"expected_wait": 90}},
 "jobs": [{"id": "a", "nodes": 2, "walltime": 100, "select": "2:ncpus=8", "queue": "q1"},
          {"id": "b", "nodes": 1, "walltime": 50, "select": "1:ncpus=8:ngpus=2", "place": "excl", "queue": "q2"},
          {"id": "c", "nodes": 2, "walltime": 10, "queue": "q1"},
          {"id": "d", "nodes": 2, "walltime": 10, "select": "1:ncpus=4+1:ncpus=2", "queue": "q1"},
          {"id": "e", "nodes": 3, "walltime": 10, "select": "3:ncpus=32", "queue": "q1"}],
 "node_resources": {"default": {"ncpus": 16, "ngpus": 2}, "n1": {"ncpus": 8}},
 "reservations": [{"id": "maint", "nodes": "n0", "start": 200, "end": 300}]}`

func build(t *testing.T, g int64) *cp.Model {
	t.Helper()
	w, err := windowjson.Parse([]byte(window), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cp.Build(w, g)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func option(t *testing.T, m *cp.Model, job, node string) *cp.Option {
	t.Helper()
	for i := range m.Jobs {
		if m.Jobs[i].ID != job {
			continue
		}
		for o := range m.Jobs[i].Options {
			if m.Window.Topology.Name(m.Nodes[m.Jobs[i].Options[o].Node].ID) == node {
				return &m.Jobs[i].Options[o]
			}
		}
	}
	return nil
}

func TestBuild(t *testing.T) {
	m := build(t, 10)
	if !slices.Equal(m.Resources, []string{"ncpus", "ngpus"}) {
		t.Errorf("resources %v", m.Resources)
	}
	if len(m.Nodes) != 4 {
		t.Errorf("%d usable nodes, want 4 (n4 is down)", len(m.Nodes))
	}
	if !m.GridExact || !m.ExactWeights || m.Scale != 180 {
		t.Errorf("grid exact %v, weights exact %v, scale %d", m.GridExact, m.ExactWeights, m.Scale)
	}
	ids := []string{}
	for _, j := range m.Jobs {
		ids = append(ids, j.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) || len(m.Deferred) != 2 ||
		!strings.Contains(m.Deferred[0].Reason, "2 chunks") || !strings.Contains(m.Deferred[1].Reason, "never fit") {
		t.Errorf("jobs %v, deferred %v", ids, m.Deferred)
	}
	if w := m.Jobs[0].Weight; w != 3 || m.Jobs[1].Weight != 2 {
		t.Errorf("weights %d %d, want 3 and 2 (180/60, 180/90)", w, m.Jobs[1].Weight)
	}
	// a: two 8-core units; n0 holds 2, n1 one; on n2 one fits beside r1
	// now and two after it ends at 100 (slot 10).
	if o := option(t, m, "a", "n0"); o == nil || o.MaxUnits != 2 || !slices.Equal(o.Release, []int{0, 0}) {
		t.Errorf("a on n0: %+v", o)
	}
	if o := option(t, m, "a", "n1"); o == nil || o.MaxUnits != 1 {
		t.Errorf("a on n1: %+v", o)
	}
	if o := option(t, m, "a", "n2"); o == nil || !slices.Equal(o.Release, []int{0, 10}) {
		t.Errorf("a on n2: %+v", o)
	}
	if o := option(t, m, "a", "n3"); o == nil || !slices.Equal(o.Release, []int{5, 5}) {
		t.Errorf("a on n3 (r2 whole until 50): %+v", o)
	}
	// The reservation [200, 300) excludes a (100 s) from slots 11–29 on n0.
	if o := option(t, m, "a", "n0"); o == nil || !slices.Equal(o.Forbid, [][2]int{{11, 29}}) {
		t.Errorf("a on n0 forbid %v, want [[11 29]]", o.Forbid)
	}
	// b: exclusive, two GPUs: on n1 (its GPUs come from "default") now;
	// on n2 only after r1, exclusive as it is.
	if o := option(t, m, "b", "n1"); o == nil || !slices.Equal(o.Release, []int{0}) {
		t.Errorf("b on n1: %+v", o)
	}
	if o := option(t, m, "b", "n2"); o == nil || !slices.Equal(o.Release, []int{10}) {
		t.Errorf("b on n2: %+v", o)
	}
	// c: two whole nodes, one per node, exclusive; EST 0 (n0 and n1 idle).
	c := m.Jobs[2]
	if !c.Whole || !c.Excl || c.Units != 2 || c.EST != 0 {
		t.Errorf("c %+v", c)
	}
	for _, o := range c.Options {
		if o.MaxUnits != 1 {
			t.Errorf("c: %d units on node %d", o.MaxUnits, o.Node)
		}
	}
	if !strings.Contains(m.Describe(), "alternative(a, [n0≤2 n1≤1 n2≤2 n3≤2], 2)") {
		t.Errorf("describe:\n%s", m.Describe())
	}
	// A 30 s grid: walltimes of 100 and 50 s are off it.
	if m := build(t, 30); m.GridExact || m.Jobs[0].Dur != 4 {
		t.Errorf("grid 30: exact %v, a's duration %d slots (want 4)", m.GridExact, m.Jobs[0].Dur)
	}
}

// TestCHMin: on random node sets of random jobs of Eurora-like windows,
// CHMin is at most the cost model's price (less 1) of every node set that
// can hold the job's units, and positive for jobs that need several
// nodes.
func TestCHMin(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	positive := 0
	for seed := range uint64(6) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 20})
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []model.CostKind{model.CostLanCode, model.CostLanPaper} {
			w.Cost.Kind = kind
			m, err := cp.Build(w, 60)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.SetCHWeight(0.001); err != nil {
				t.Fatal(err)
			}
			for i, j := range m.Jobs {
				least := m.CHMin(i)
				if least > 0 {
					positive++
				}
				for range 50 {
					// Random units per option adding up to the job's units.
					units := make([]int, len(j.Options))
					left := j.Units
					for left > 0 {
						o := rng.IntN(len(j.Options))
						if units[o] < j.Options[o].MaxUnits && (!j.Pack || units[o] > 0 || slices.Max(units) == 0) {
							units[o]++
							left--
						}
					}
					if got := m.CH(i, units); got < least {
						t.Fatalf("job %s (%d units): CH − 1 = %d of %v below CHMin %d", j.ID, j.Units, got, m.CHNodes(i, units), least)
					}
				}
			}
		}
	}
	if positive < 10 {
		t.Errorf("CHMin positive for only %d jobs", positive)
	}
}

// TestAllocationsEncodeRoundTrip: Encode inverts Allocations on Eurora
// windows (each job at its EST, its units on its first options), and
// refuses a start off the grid, a start before the EST, units on a node
// the job may not use, and a missing job, naming the job.
func TestAllocationsEncodeRoundTrip(t *testing.T) {
	for seed := range uint64(5) {
		w, err := instances.Eurora(instances.EuroraConfig{Seed: seed, Jobs: 12})
		if err != nil {
			t.Fatal(err)
		}
		m, err := cp.Build(w, 60)
		if err != nil {
			t.Fatal(err)
		}
		slots, units := make([]int, len(m.Jobs)), make([][]int, len(m.Jobs))
		for i, j := range m.Jobs {
			slots[i], units[i] = j.EST, make([]int, len(j.Options))
			left := j.Units
			for o := range j.Options {
				u := min(left, j.Options[o].MaxUnits)
				units[i][o], left = u, left-u
			}
		}
		allocs := m.Allocations(slots, units)
		s2, u2, err := m.Encode(allocs)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !slices.Equal(s2, slots) || !slices.EqualFunc(u2, units, slices.Equal) {
			t.Fatalf("seed %d: round trip changed the schedule", seed)
		}
		if len(m.Jobs) == 0 {
			continue
		}
		id := m.Jobs[0].ID
		bad := func(name, want string, edit func(a []model.Allocation) []model.Allocation) {
			a := edit(m.Allocations(slots, units))
			if _, _, err := m.Encode(a); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), id) {
				t.Errorf("seed %d, %s: error %v, want %q about job %s", seed, name, err, want, id)
			}
		}
		bad("off the grid", "off the grid", func(a []model.Allocation) []model.Allocation { a[0].Start++; return a })
		bad("missing", "not scheduled", func(a []model.Allocation) []model.Allocation { return a[1:] })
		bad("too many units", "does not allow", func(a []model.Allocation) []model.Allocation {
			for n := range a[0].Units {
				a[0].Units[n] = 1 << 20
			}
			return a
		})
		if m.Jobs[0].EST > 0 {
			bad("before EST", "before its earliest", func(a []model.Allocation) []model.Allocation { a[0].Start = w.Time; return a })
		}
	}
}

// TestCHWeightRange: a CH weight whose coefficient rounds to 0 (the docs'
// 0.001 on a generated window with no queues, so each job weighs
// Scale/1) or passes 2^40 is refused with the range of weights that work
// and the remedy, and the least weight of that range is accepted.
func TestCHWeightRange(t *testing.T) {
	cfg := instances.PaperGenConfig()
	cfg.Seed = 3
	w, err := instances.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cp.Build(w, 60)
	if err != nil {
		t.Fatal(err)
	}
	err = m.SetCHWeight(1e-12)
	if err == nil || !strings.Contains(err.Error(), "too small") || !strings.Contains(err.Error(), "--granularity") {
		t.Fatalf("tiny weight: %v", err)
	}
	var least, most float64
	if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "["):], "[%g, %g]", &least, &most); serr != nil || !(least > 0 && most > least) {
		t.Fatalf("no range in %q: %v", err, serr)
	}
	for _, W := range []float64{least * 1.001, most * 0.999} {
		m, _ := cp.Build(w, 60)
		if err := m.SetCHWeight(W); err != nil {
			t.Errorf("weight %g inside the stated range [%g, %g]: %v", W, least, most, err)
		}
	}
	m, _ = cp.Build(w, 60)
	if err := m.SetCHWeight(most * 10); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("huge weight: %v", err)
	}
}
