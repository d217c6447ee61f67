package model_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
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

func TestParseWindowCPFields(t *testing.T) {
	w := mustWindow(t, unitsWindow)
	if got := w.Jobs[1].Place; !got.Exclusive || got.Arrange() != model.ArrangeFree {
		t.Errorf("b: place %+v, want free:excl", got)
	}
	if got := w.Jobs[4].Place.Arrangement; got != model.ArrangeScatter {
		t.Errorf("e: arrangement %q", got)
	}
	if got := w.Running[0].Units; !maps.Equal(got, map[int]int{2: 1}) {
		t.Errorf("r1 units %v", got)
	}
	if len(w.Reservations) != 1 || w.Reservations[0].ID != "maint" || !slices.Equal(w.Reservations[0].Nodes, []int{0}) ||
		w.Reservations[0].Start != 200 || w.Reservations[0].End != 300 {
		t.Errorf("reservations %+v", w.Reservations)
	}
	data, err := windowjson.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	w2 := mustWindow(t, string(data))
	if !slices.EqualFunc(w.Jobs, w2.Jobs, func(a, b model.Job) bool { return a.Place == b.Place }) ||
		!slices.EqualFunc(w.Running, w2.Running, func(a, b model.RunningJob) bool { return a.Place == b.Place && maps.Equal(a.Units, b.Units) }) ||
		!slices.EqualFunc(w.Reservations, w2.Reservations, func(a, b model.Reservation) bool {
			return a.ID == b.ID && a.Start == b.Start && a.End == b.End && slices.Equal(a.Nodes, b.Nodes)
		}) {
		t.Errorf("round trip changed the cp fields:\n%s", data)
	}
}

func TestParseWindowCPErrors(t *testing.T) {
	base := func(running, job, extra string) string {
		return fmt.Sprintf(`{"time": 10, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 4}},
		 "idle": "n0", "running": [%s], "jobs": [%s]%s}`, running, job, extra)
	}
	okRun := `{"id": "r", "nodes": "n[1-2]", "end": 20, "select": "2:ncpus=1", "units": {"n1": 1, "n2": 1}}`
	okJob := `{"id": "a", "nodes": 1, "walltime": 5, "place": "pack:excl"}`
	if _, err := model.ParseWindow([]byte(base(okRun, okJob, "")), model.ParseOptions{}); err != nil {
		t.Fatalf("valid window: %v", err)
	}
	cases := []struct{ doc, want string }{
		{base(okRun, `{"id": "a", "nodes": 1, "walltime": 5, "place": ""}`, ""), "jobs[0].place: must not be empty"},
		{base(okRun, `{"id": "a", "nodes": 1, "walltime": 5, "place": "pack:scatter"}`, ""), "jobs[0].place: \"pack:scatter\" gives two arrangements"},
		{base(okRun, `{"id": "a", "nodes": 1, "walltime": 5, "place": "group=switch"}`, ""), "grouping (group=…) is not supported"},
		{base(okRun, `{"id": "a", "nodes": 1, "walltime": 5, "place": 3}`, ""), "jobs[0].place: must be a string"},
		{base(`{"id": "r", "nodes": "n1", "end": 20, "place": "bogus"}`, okJob, ""), "running[0].place: \"bogus\": unknown value"},
		{base(`{"id": "r", "nodes": "n1", "end": 20, "units": {"n1": 1}}`, okJob, ""), "running[0].units: needs the job's select"},
		{base(`{"id": "r", "nodes": "n1", "end": 20, "select": "1:ncpus=1+1:ngpus=1", "units": {"n1": 2}}`, okJob, ""), "running[0].units: needs a select of one chunk, got 2 chunks"},
		{base(`{"id": "r", "nodes": "n1", "end": 20, "select": "1:ncpus=1", "units": {"n2": 1}}`, okJob, ""), `running[0].units["n2"]: node "n2" is not one of the job's nodes`},
		{base(`{"id": "r", "nodes": "n1", "end": 20, "select": "1:ncpus=1", "units": {"x9": 1}}`, okJob, ""), `running[0].units["x9"]: node "x9" is not in the topology`},
		{base(`{"id": "r", "nodes": "n[1-2]", "end": 20, "select": "2:ncpus=1", "units": {"n1": 2}}`, okJob, ""), `running[0].units: node "n2" of the job has no units entry`},
		{base(`{"id": "r", "nodes": "n[1-2]", "end": 20, "select": "3:ncpus=1", "units": {"n1": 1, "n2": 1}}`, okJob, ""), "running[0].units: the units add up to 2, the select has 3"},
		{base(`{"id": "r", "nodes": "n1", "end": 20, "select": "1:ncpus=1", "units": {"n1": 0}}`, okJob, ""), `running[0].units["n1"]: must be between 1 and`},
		{base(`{"id": "r", "nodes": "n1", "end": 20, "select": "1:ncpus=1", "units": [1]}`, okJob, ""), "running[0].units: must be an object, got a list"},
		{base(okRun, okJob, `, "reservations": [{"nodes": "n0", "start": 5, "end": 5}]`), "reservations[0].end: must be after start 5"},
		{base(okRun, okJob, `, "reservations": [{"nodes": "n0", "start": 0, "end": 10}]`), "reservations[0].end: must be after the window time 10"},
		{base(okRun, okJob, `, "reservations": [{"nodes": [], "start": 0, "end": 30}]`), "reservations[0].nodes: must name at least one node"},
		{base(okRun, okJob, `, "reservations": [{"start": 0, "end": 30}]`), "reservations[0].nodes: required"},
		{base(okRun, okJob, `, "reservations": [{"nodes": "n9", "start": 0, "end": 30}]`), `reservations[0].nodes: node "n9" is not in the topology`},
		{base(okRun, okJob, `, "reservations": [{"nodes": "n0", "end": 30}]`), "reservations[0].start: required"},
		{base(okRun, okJob, `, "reservations": [{"nodes": "n0", "start": 0, "end": 30, "why": "x"}]`), "reservations[0].why: unknown field"},
		{base(okRun, okJob, `, "reservations": {"nodes": "n0"}`), "reservations: must be a list, got an object"},
		{base(okRun, okJob, `, "reservations": [{"id": 7, "nodes": "n0", "start": 0, "end": 30}]`), "reservations[0].id: must be a string"},
	}
	for _, c := range cases {
		_, err := model.ParseWindow([]byte(c.doc), model.ParseOptions{})
		var fe *model.FieldError
		switch {
		case err == nil:
			t.Errorf("no error, want %q in\n%s", c.want, c.doc)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("error %q, want %q", err, c.want)
		case !errors.As(err, &fe):
			t.Errorf("error %q is not a *FieldError", err)
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

// FuzzParseWindowCP fuzzes the window reader from seeds that use the
// fields of the time-and-resource model (place, running units,
// reservations): it must never panic, errors are *FieldErrors, and an
// accepted window keeps the invariants solvers rely on and reads back
// from its own JSON unchanged in those fields. Check must not panic on it.
func FuzzParseWindowCP(f *testing.F) {
	f.Add([]byte(unitsWindow))
	f.Add([]byte(`{"time": 10, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 4}}, "idle": "n0",
	 "running": [{"id": "r", "nodes": "n[1-2]", "end": 20, "select": "2:ncpus=1", "units": {"n1": 1, "n2": 1}, "place": "scatter:excl"}],
	 "jobs": [{"id": "a", "nodes": 1, "walltime": 5, "place": "pack:excl", "select": "2:ncpus=2:mem=1gb"}],
	 "reservations": [{"id": "m", "nodes": ["n0", "n3"], "start": 0, "end": 30}], "node_resources": {"default": {"ncpus": 4, "mem": "2gb"}}}`))
	f.Add([]byte(`{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}}, "idle": [], "running": [{"id": 1, "nodes": "n[0-1]", "end": 5, "select": "3:a=1", "units": {"n0": 2, "n1": 1}}], "jobs": [], "reservations": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := model.ParseWindow(data, model.ParseOptions{})
		if err != nil {
			var fe *model.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %q is not a *FieldError", err)
			}
			return
		}
		for _, r := range w.Reservations {
			if len(r.Nodes) == 0 || r.End <= r.Start || r.End <= w.Time {
				t.Fatalf("bad reservation accepted: %+v", r)
			}
		}
		for _, r := range w.Running {
			if r.Units == nil {
				continue
			}
			total := 0
			for k, u := range r.Units {
				if u < 1 || !slices.Contains(r.Nodes, k) {
					t.Fatalf("bad units accepted: %+v", r)
				}
				total += u
			}
			if len(r.Units) != len(r.Nodes) || len(r.Select) != 1 || total != r.Select.Units() {
				t.Fatalf("units do not match nodes and select: %+v", r)
			}
		}
		out, err := windowjson.Marshal(w)
		if err != nil {
			t.Fatalf("accepted window cannot be written: %v", err)
		}
		w2, err := model.ParseWindow(out, model.ParseOptions{})
		if err != nil {
			t.Fatalf("written window does not parse: %v\n%s", err, out)
		}
		if !slices.EqualFunc(w.Jobs, w2.Jobs, func(a, b model.Job) bool { return a.Place == b.Place }) ||
			!slices.EqualFunc(w.Running, w2.Running, func(a, b model.RunningJob) bool { return a.Place == b.Place && maps.Equal(a.Units, b.Units) }) ||
			!slices.EqualFunc(w.Reservations, w2.Reservations, func(a, b model.Reservation) bool {
				return a.ID == b.ID && a.Start == b.Start && a.End == b.End && slices.Equal(a.Nodes, b.Nodes)
			}) {
			t.Fatalf("round trip changed the cp fields:\n%s", out)
		}
		// Check on a units allocation of every job on the first idle node.
		if len(w.Idle) > 0 {
			var allocs []model.Allocation
			for j := range w.Jobs {
				allocs = append(allocs, model.Allocation{Job: j, Nodes: []int{w.Idle[0]}, Start: w.Time, Units: map[int]int{w.Idle[0]: max(1, w.Jobs[j].Select.Units())}})
			}
			_ = model.Check(w, allocs)
		}
	})
}
