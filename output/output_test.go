package output_test

import (
	"os"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/output"
)

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

// FuzzParseResult feeds arbitrary result documents for the example window
// to ParseResult and Check: neither may panic.
func FuzzParseResult(f *testing.F) {
	data, err := os.ReadFile("../instances/example-window.json")
	if err != nil {
		f.Fatal(err)
	}
	w, err := model.ParseWindow(data, model.ParseOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"status": "feasible", "objective": 1, "allocations": [{"job": "a", "nodes": ["n3", "n4"], "start": 7200, "cost": 500}], "deferred": [{"job": "f", "reason": "x"}]}`))
	f.Add([]byte(`{"allocations": [{"job": "a", "nodes": ["n3", "n3"], "start": -5}]}`))
	f.Add([]byte(`{"allocations": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, allocs, err := output.ParseResult(w, data)
		if err != nil {
			return
		}
		_ = model.Check(w, allocs)
	})
}

// FuzzParseSchedule feeds arbitrary schedule documents for unitsWindow to
// ParseSchedule and Check: neither may panic.
func FuzzParseSchedule(f *testing.F) {
	w, err := model.ParseWindow([]byte(unitsWindow), model.ParseOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"status": "optimal", "objective": 1.5, "bound": 1.5, "gap": 0, "encoding": "cp", "allocations": [{"job": "a", "nodes": ["n0"], "units": {"n0": 2}, "start": 0, "cost": 1}]}`))
	f.Add([]byte(`{"allocations": [{"job": "c", "nodes": ["n0", "n1"], "start": 250}], "deferred": [{"job": "b", "reason": "x"}]}`))
	f.Add([]byte(`{"allocations": [{"job": "a", "nodes": ["n0"], "units": {"n9": -2}, "start": 0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, allocs, err := output.ParseSchedule(w, data)
		if err != nil {
			return
		}
		_ = model.Check(w, allocs)
	})
}
