package output_test

import (
	"os"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/verdict"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/output"
)

// FuzzParseResult feeds arbitrary result documents for the example window
// to Parse (the whole-node model), Check and the verdict of validate (verdict.Judge): none
// may panic, and a document Judge finds valid passes Check.
func FuzzParseResult(f *testing.F) {
	data, err := os.ReadFile("../instances/example-window.json")
	if err != nil {
		f.Fatal(err)
	}
	w, err := windowjson.Parse(data, windowjson.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"status": "feasible", "objective": 1, "allocations": [{"job": "a", "nodes": ["n3", "n4"], "start": 7200, "cost": 500}], "deferred": [{"job": "f", "reason": "x"}]}`))
	f.Add([]byte(`{"allocations": [{"job": "a", "nodes": ["n3", "n3"], "start": -5}]}`))
	f.Add([]byte(`{"allocations": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, allocs, err := output.Parse[int64](w, data)
		if err != nil {
			return
		}
		checkErr := model.Check(w, allocs)
		ans := verdict.Answer{Status: doc.Status, Objective: doc.Objective, Bound: doc.Bound, Allocations: allocs}
		for _, a := range doc.Allocations {
			ans.Costs = append(ans.Costs, a.Cost)
		}
		for _, d := range doc.Deferred {
			j, _ := w.JobIndex(d.Job)
			ans.Deferred = append(ans.Deferred, model.Deferral{Job: j, Reason: d.Reason})
		}
		if doc.MaxJobs != nil && *doc.MaxJobs >= 0 {
			ans.MaxJobs, ans.MaxJobsKnown = *doc.MaxJobs, true
		}
		if v := verdict.Judge(w, ans); v.Valid && checkErr != nil {
			t.Fatalf("judged valid, but Check says %v", checkErr)
		}
	})
}

// FuzzParseSchedule feeds arbitrary schedule documents for unitsWindow to
// Parse (the time-and-resource model) and Check: neither may panic.
func FuzzParseSchedule(f *testing.F) {
	w, err := windowjson.Load("../instances/eurora-example.json") // units, select, place, queues
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"status": "optimal", "objective": 1.5, "bound": 1.5, "gap": 0, "encoding": "cp", "allocations": [{"job": "j6", "nodes": ["n19"], "units": {"n19": 2}, "start": 0, "cost": 1}]}`))
	f.Add([]byte(`{"allocations": [{"job": "j1", "nodes": ["n19", "n34"], "start": 250}], "deferred": [{"job": "j8", "reason": "x"}]}`))
	f.Add([]byte(`{"allocations": [{"job": "j2", "nodes": ["n19"], "units": {"n99": -2}, "start": 0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, allocs, err := output.Parse[float64](w, data)
		if err != nil {
			return
		}
		_ = model.Check(w, allocs)
	})
}
