package model_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
)

// unitsWindow: n0–n4 on one leaf. n0, n1 idle; r1 uses 8 cores of n2
// until 100 (one unit of 1:ncpus=8); r2 uses n3 whole until 50; n4 is
// down. Capacities 16 cores and 2 GPUs, n1 only 8 cores. n0 is reserved
// over [200, 300).
const unitsWindow = `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 5}},
 "idle": "n[0-1]",
 "running": [{"id": "r1", "nodes": "n2", "end": 100, "select": "1:ncpus=8", "units": {"n2": 1}},
             {"id": "r2", "nodes": "n3", "end": 50}],
 "jobs": [{"id": "a", "nodes": 2, "walltime": 100, "select": "2:ncpus=8"},
          {"id": "b", "nodes": 1, "walltime": 50, "select": "1:ncpus=8:ngpus=2", "place": "excl"},
          {"id": "c", "nodes": 2, "walltime": 10},
          {"id": "d", "nodes": 2, "walltime": 10, "select": "1:ncpus=4+1:ncpus=2"},
          {"id": "e", "nodes": 3, "walltime": 10, "select": "3:ncpus=1", "place": "scatter"},
          {"id": "f", "nodes": 2, "walltime": 10, "select": "2:ncpus=1", "place": "pack"}],
 "node_resources": {"default": {"ncpus": 16, "ngpus": 2}, "n1": {"ncpus": 8}},
 "reservations": [{"id": "maint", "nodes": "n0", "start": 200, "end": 300}]}`

func TestCheckUnits(t *testing.T) {
	w := mustWindow(t, unitsWindow)
	type A = model.Allocation
	u := func(job int, start int64, units map[int]int) A {
		return A{Job: job, Nodes: slices.Sorted(maps.Keys(units)), Start: start, Units: units}
	}
	cases := []struct {
		name   string
		allocs []A
		want   string // "" when feasible
	}{
		{"two units on one node", []A{u(0, 0, map[int]int{0: 2})}, ""},
		{"beside a running job's units", []A{u(0, 0, map[int]int{0: 1, 2: 1})}, ""},
		{"over a node's capacity", []A{u(0, 0, map[int]int{1: 2})}, "node n1: at 0 the jobs on it use ncpus=16, above its capacity 8"},
		{"two jobs over capacity", []A{u(0, 0, map[int]int{0: 2}), u(5, 0, map[int]int{0: 2})}, "ncpus=18, above its capacity 16"},
		{"exclusive beside another job", []A{u(0, 0, map[int]int{0: 1, 1: 1}), u(1, 10, map[int]int{0: 1})}, "node n0: job a and job b share the node at 10, but job b is exclusive"},
		{"exclusive beside a running job", []A{u(1, 0, map[int]int{2: 1})}, "running job r1 and job b share the node at 0, but job b is exclusive"},
		{"exclusive after the running job", []A{u(1, 100, map[int]int{2: 1})}, ""},
		{"whole-node units on a busy node", []A{u(2, 0, map[int]int{0: 1, 3: 1})}, "node n3: running job r2 and job c share the node at 0"},
		{"whole-node units after the end", []A{u(2, 50, map[int]int{0: 1, 3: 1})}, ""},
		{"whole-node job, two units on a node", []A{u(2, 0, map[int]int{0: 2})}, "but it takes whole nodes"},
		{"two-chunk select", []A{u(3, 0, map[int]int{0: 2})}, "its select has 2 chunks"},
		{"scatter", []A{u(4, 0, map[int]int{0: 2, 1: 1})}, "place=scatter allows one per node"},
		{"pack", []A{u(5, 0, map[int]int{0: 1, 1: 1})}, "place=pack puts them on one"},
		{"too few units", []A{u(0, 0, map[int]int{0: 1})}, "job a: got 1 units, requested 2"},
		{"zero units on a node", []A{u(0, 0, map[int]int{0: 2, 1: 0})}, "0 units on node n1"},
		{"nodes are not the units' nodes", []A{{Job: 0, Nodes: []int{0, 1}, Start: 0, Units: map[int]int{0: 2}}}, "are not the nodes of its units"},
		{"one node not the unit's node", []A{{Job: 0, Nodes: []int{1}, Start: 0, Units: map[int]int{0: 2}}}, "nodes [1] are not the nodes of its units [0]"},
		{"down node", []A{u(0, 0, map[int]int{4: 2})}, "node n4 is neither idle nor freed"},
		{"unknown node", []A{u(0, 0, map[int]int{9: 2})}, "node id 9, which is not in the topology"},
		{"into a reservation", []A{u(0, 150, map[int]int{0: 2})}, "job a: node n0 is reserved (maint) over [200, 300), the job runs over [150, 250)"},
		{"after a reservation", []A{u(0, 300, map[int]int{0: 2})}, ""},
		{"whole-node allocation into a reservation", []A{{Job: 2, Nodes: []int{0, 1}, Start: 250}}, "job c: node n0 is reserved (maint)"},
		{"whole-node allocation beside units", []A{{Job: 2, Nodes: []int{0, 1}, Start: 0}, u(0, 5, map[int]int{0: 2})}, "node n0: job c and job a share the node at 5, but job c is exclusive"},
		{"one after the other", []A{u(0, 0, map[int]int{0: 2}), u(1, 100, map[int]int{0: 1})}, ""},
		{"units before the window", []A{u(0, -1, map[int]int{0: 2})}, "before the window time"},
	}
	for _, c := range cases {
		err := model.Check(w, c.allocs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: no error, want %q", c.name, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q, want %q", c.name, err, c.want)
		case c.want != "" && !errors.Is(err, model.ErrInfeasible):
			t.Errorf("%s: error does not wrap ErrInfeasible", c.name)
		}
	}
}

func TestParsePlace(t *testing.T) {
	for in, want := range map[string]model.Place{
		"free": {}, "shared": {}, "free:shared": {}, "excl": {Exclusive: true}, "exclhost": {Exclusive: true},
		"pack": {Arrangement: model.ArrangePack}, "scatter:excl": {Arrangement: model.ArrangeScatter, Exclusive: true},
		" excl : vscatter ": {Arrangement: model.ArrangeScatter, Exclusive: true},
	} {
		got, err := model.ParsePlace(in)
		if err != nil || got != want {
			t.Errorf("ParsePlace(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, err := model.ParsePlace(got.String()); got.String() != "" && (err != nil || again != got) {
			t.Errorf("ParsePlace(%q).String() = %q does not read back", in, got.String())
		}
	}
}
