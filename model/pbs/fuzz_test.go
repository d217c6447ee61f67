package pbs

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The fuzz targets hold the readers to their contract on any input: no
// panic, an *Error on failure, and on success values that keep the
// documented invariants.

// The seeds are small documents with the fixtures' features: the fuzzer
// minimises each new input it finds, which takes long on the full
// fixtures (the unit tests read those).

func FuzzParseJobs(f *testing.F) {
	f.Add([]byte(`{"timestamp":1700000000,"pbs_version":"2022.1.1","pbs_server":"s","Jobs":{"7.s":{"Job_Name":"a","job_state":"Q","queue":"workq",` +
		`"qtime":"Tue Nov 14 22:00:00 2023","eligible_time":"8199:09:40","array":"False","Resource_List":{"select":"3:ncpus=64:mem=200gb+1:ngpus=2",` +
		`"nodect":4,"ncpus":194,"place":"scatter:excl","walltime":"04:00:00"}},"8[].s":{"job_state":"B","queue":"q","array":"True"}}}`))
	f.Add([]byte(`{"Jobs":{"1.s":{"job_state":"R","queue":"q","exec_vnode":"(a:ncpus=1)+(b:mem=1kb)","Resource_List":{"select":"2:ncpus=1","place":"scatter:excl","walltime":"1:00:00"},"eligible_time":"10:00"}}}`))
	f.Add([]byte(`{"Jobs":{"1.s":{"Job_Name":inf,"job_state":"Q","queue":007}}}`))
	f.Add([]byte(`{"timestamp":-1}`))
	f.Add([]byte(`{"Jobs":{"0.s":{"job_state":"F","queue":"workq","stime":1795728001,"obittime":"Tue Nov 24 03:36:37 2026","mtime":1795728009,` +
		`"exec_vnode":"(pbshost[7]:ncpus=1)","Exit_status":-29,"run_count":2,"resources_used":{"walltime":"00:00:08","cput":"x"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		js, err := ParseJobs(data, time.UTC)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *pbs.Error", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, j := range js.Jobs {
			if !ValidName(j.ID) || seen[j.ID] {
				t.Fatalf("bad or repeated job id %q", j.ID)
			}
			seen[j.ID] = true
			if len(j.State) != 1 || j.Queue == "" || j.Walltime < 0 || j.Walltime > maxTime || j.EligibleTime < 0 ||
				j.UsedWalltime < 0 || j.UsedWalltime > maxTime || j.RunCount < 0 {
				t.Fatalf("job %+v breaks the invariants", j)
			}
			if j.Select != nil && (j.Select.Units() < 1 || j.Select.Units() > 1<<20) {
				t.Fatalf("job %s: %d units", j.ID, j.Select.Units())
			}
			for _, c := range j.ExecVnode {
				for _, u := range c {
					if !ValidName(u.Vnode) {
						t.Fatalf("job %s: vnode %q", j.ID, u.Vnode)
					}
				}
			}
		}
	})
}

func FuzzParseNodes(f *testing.F) {
	f.Add([]byte(`{"timestamp":1700000002,"nodes":{"n001":{"Mom":"n001","state":"job-exclusive","pcpus":64,"jobs":["100.s/0"],` +
		`"resources_available":{"host":"n001","mem":"263856320kb","ncpus":64,"ngpus":4,"tier0":"x1000","tier1":"x1000c0"},` +
		`"resources_assigned":{"mem":"209715200kb","ncpus":64},"sharing":"default_shared","last_state_change_time":1699990001},` +
		`"n002":{"state":"free","resources_available":{"mem":"257680mb","ncpus":64,"tier0":"x1000","tier1":"x1000c1"}}}}`))
	f.Add([]byte(`{"nodes":{"a":{"state":"down,offline","jobs":"1.s/0, 2.s/1","resources_available":{"mem":"1gb","ncpus":4,"x":1.5}}}}`))
	f.Add([]byte(`{"nodes":{"a":{"state":"free","sharing":"force_excl","resources_assigned":{"ncpus":0}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ns, err := ParseNodes(data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *pbs.Error", err)
			}
			return
		}
		for _, n := range ns.Nodes {
			if !ValidName(n.Name) || len(n.State) == 0 {
				t.Fatalf("node %+v breaks the invariants", n)
			}
			if n.Free() && n.StateText() != "free" {
				t.Fatalf("node %s: Free with state %q", n.Name, n.StateText())
			}
			for k, v := range n.Available {
				if v < 0 {
					t.Fatalf("node %s: %s=%d", n.Name, k, v)
				}
			}
			for _, j := range n.Jobs {
				if !ValidName(j) || strings.Contains(j, "/") {
					t.Fatalf("node %s: job %q", n.Name, j)
				}
			}
		}
		// A topology from whatever tiers the nodes have never panics.
		TierTopology(ns.Nodes, []string{"tier0", "tier1"})
	})
}

func FuzzParseQueues(f *testing.F) {
	f.Add([]byte(`{"Queue":{"workq":{"queue_type":"Execution","resources_default":{"walltime":"01:00:00"},"enabled":"True","started":"True"},"prod":{"queue_type":"Route","route_destinations":"workq"}}}`))
	f.Add(readFixture(f, "qstat_Qf.txt"))
	f.Add([]byte("Queue: a\n    queue_type = E\n    started = True\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, err := ParseQueues(data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *pbs.Error", err)
			}
			return
		}
		for _, q := range qs.Queues {
			if q.Type != "Execution" && q.Type != "Route" {
				t.Fatalf("queue %+v", q)
			}
		}
	})
}

func FuzzParseExecVnode(f *testing.F) {
	f.Add("(n1:ncpus=16:mem=4gb)+(host[0]:ncpus=8+host[1]:ncpus=8)")
	f.Add("(a)")
	f.Fuzz(func(t *testing.T, s string) {
		chunks, err := ParseExecVnode(s)
		if err != nil {
			return
		}
		if len(chunks) == 0 {
			t.Fatal("no chunks and no error")
		}
		for _, c := range chunks {
			for _, u := range c {
				if !ValidName(u.Vnode) {
					t.Fatalf("vnode %q", u.Vnode)
				}
			}
		}
	})
}

// FuzzMembers holds the object splitter to encoding/json: on any input it
// does not panic, and on a valid JSON object without repeated keys it
// returns the same keys, in order, with values that decode to the same
// thing.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"a": 1, "b\"c": {"x": [1, "]", {"y": "}"}]}, "d": null}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"a":"\\","b":-1.5e3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, _, err := members(data)
		if err != nil || !json.Valid(data) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("members accepted a non-object %q", data)
		}
		for i := 0; dec.More(); i++ {
			tok, _ := dec.Token()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if i >= len(ms) || ms[i].key != tok.(string) {
				t.Fatalf("member %d: got %+v, encoding/json has key %q", i, ms, tok)
			}
			var w any
			if err := json.Unmarshal(ms[i].val, &w); err != nil || !reflect.DeepEqual(v, w) {
				t.Fatalf("member %q: value %s decodes to %v, want %v (%v)", tok, ms[i].val, w, v, err)
			}
		}
	})
}
