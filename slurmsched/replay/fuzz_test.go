package replay_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/optsched/optsched/slurmsched/replay"
)

// FuzzParseRecords: any squeue --json text gives records or an error,
// never a panic; every record keeps the rules Compute relies on.
func FuzzParseRecords(f *testing.F) {
	// Seeds: single real records of the fixtures (whole documents of
	// 55 kB stall the fuzzer's mutator).
	for _, name := range []string{"testdata/squeue-replay.json", "../testdata/squeue.json"} {
		var doc struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := json.Unmarshal(fixture(f, name), &doc); err != nil {
			f.Fatal(err)
		}
		for _, i := range []int{1, 2, 5, len(doc.Jobs) - 1} {
			f.Add([]byte(`{"jobs":[` + string(doc.Jobs[i]) + `]}`))
		}
	}
	f.Add([]byte(`{"jobs":[{"job_id":5,"name":"a","job_state":"COMPLETED","submit_time":10,"start_time":11,"end_time":12,"nodes":"n[01-03]","exit_code":9,"restart_cnt":2}]}`))
	f.Add([]byte(`{"jobs":[{"job_id":6,"job_state":"CANCELLED","submit_time":10,"start_time":10,"end_time":10,"nodes":"","exit_code":0}]}`))
	f.Add([]byte(`{"jobs":[{"job_id":7,"job_state":"TIMEOUT","start_time":-1,"nodes":"x[9-1]"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := replay.ParseRecords(data, nil)
		if err != nil {
			return
		}
		for _, r := range recs {
			if n, err := strconv.ParseInt(r.ID, 10, 64); err != nil || n <= 0 {
				t.Fatalf("id %q", r.ID)
			}
			if r.Start > 0 && len(r.Nodes) == 0 || r.End > 0 && (!r.Done || r.Start == 0) || r.HasExit && !r.Done ||
				r.Queued < 0 || r.Start < 0 || r.End < 0 || (r.Starts > 0) != (len(r.Nodes) > 0) {
				t.Fatalf("record %+v", r)
			}
			if !slices.IsSorted(r.Nodes) || len(slices.Compact(slices.Clone(r.Nodes))) != len(r.Nodes) {
				t.Fatalf("nodes %v not sorted and distinct", r.Nodes)
			}
		}
	})
}

// FuzzParseSbatch: an accepted answer is a positive job number.
func FuzzParseSbatch(f *testing.F) {
	for _, s := range []string{"17\n", "18;c\n", "", "x", "0", "1\n2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := replay.ParseSbatch(s)
		if err != nil {
			return
		}
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
			t.Fatalf("%q gave id %q", s, id)
		}
	})
}
