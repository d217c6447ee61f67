package windowjson_test

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

// The fields of the time-and-resource model of [Bridi16] in the window:
// place statements, the units of running jobs, reservations.

// unitsWindow (the window of model's TestCheckUnits): n0–n4 on one leaf. n0, n1 idle; r1 uses 8 cores of n2
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

func mustWindow(t *testing.T, doc string) *model.Window {
	t.Helper()
	w, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
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
	if _, err := windowjson.Parse([]byte(base(okRun, okJob, "")), windowjson.Options{}); err != nil {
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
		_, err := windowjson.Parse([]byte(c.doc), windowjson.Options{})
		var fe *windowjson.FieldError
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
		w, err := windowjson.Parse(data, windowjson.Options{})
		if err != nil {
			var fe *windowjson.FieldError
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
		w2, err := windowjson.Parse(out, windowjson.Options{})
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
