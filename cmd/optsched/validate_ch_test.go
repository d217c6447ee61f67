package main

import (
	"io"
	"os"
	"testing"

	"github.com/optsched/optsched/model/windowjson"
)

// FuzzValidateScheduleCH feeds arbitrary schedule documents, with and
// without ch_weight, to validate's check of cp schedules against the
// Eurora example window: it may reject them, but never panic.
func FuzzValidateScheduleCH(f *testing.F) {
	data, err := os.ReadFile(euroraExample)
	if err != nil {
		f.Skip(err)
	}
	w, err := windowjson.Parse(data, windowjson.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"status": "optimal", "objective": 1.5, "ch_weight": 0.001, "allocations": [{"job": "j0", "nodes": ["n0", "n1"], "units": {"n0": 1, "n1": 1}, "start": 99960}]}`))
	f.Add([]byte(`{"objective": 2, "ch_weight": -1, "allocations": []}`))
	f.Add([]byte(`{"objective": 2, "ch_weight": 1e308, "bound": 3, "allocations": [{"job": "j6", "nodes": ["n35"], "units": {"n35": 1}, "start": 99960}]}`))
	opts := &validateOptions{streams: &streams{in: nil, out: io.Discard, err: io.Discard}, result: "fuzz.json", maxJobs: -1} // -1: no --max-jobs, which a schedule refuses
	f.Fuzz(func(t *testing.T, doc []byte) {
		_ = validateAnswer(opts, w, doc, scheduleJudging(opts, w))
	})
}
