package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
)

const euroraExample = "../../instances/eurora-example.json"

// TestSolveCPThenValidate: solve --encoding cp proves the Eurora example
// optimal, its JSON has the contract's fields and units, validate accepts
// it, and a tampered schedule is rejected.
func TestSolveCPThenValidate(t *testing.T) {
	code, out, errs := optsched(t, "", "solve", "--encoding", "cp", "-o", "json", euroraExample)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc model.ScheduleDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Status != "optimal" || doc.Encoding != "cp" || doc.Solver != "sat" || doc.Objective == nil || doc.Gap == nil || *doc.Gap != 0 || doc.Granularity != 60 {
		t.Errorf("doc %+v", doc)
	}
	if len(doc.Allocations) != 10 || len(doc.Allocations[0].Units) == 0 {
		t.Errorf("allocations %+v", doc.Allocations)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	for _, k := range []string{"status", "objective", "bound", "gap", "encoding", "solver", "elapsed_ms", "granularity_s", "allocations", "deferred"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, []byte(out), 0o644)
	if code, out, errs := optsched(t, "", "validate", euroraExample, p); code != exitOK || !strings.Contains(out, "schedule ok: 10 jobs") {
		t.Errorf("validate: exit %d %s %s", code, out, errs)
	}
	tamper := func(name string, edit func(d *model.ScheduleDoc), want string) {
		var d model.ScheduleDoc
		json.Unmarshal([]byte(out), &d)
		edit(&d)
		data, _ := json.Marshal(d)
		os.WriteFile(p, data, 0o644)
		code, _, errs := optsched(t, "", "validate", euroraExample, p)
		if code != exitInfeasible || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", name, code, errs, want)
		}
	}
	tamper("objective", func(d *model.ScheduleDoc) { *d.Objective -= 0.5 }, "objective: reported")
	tamper("early", func(d *model.ScheduleDoc) { d.Allocations[0].Start -= 60 }, "before the window time")
	tamper("units", func(d *model.ScheduleDoc) {
		for n := range d.Allocations[0].Units {
			d.Allocations[0].Units[n] += 1
		}
	}, "units")
}

func TestSolveCPOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"solve", "--encoding", "cp", "-o", "table", euroraExample}, exitOK, "status optimal"},
		{[]string{"solve", "--solver", "sat", "-o", "table", euroraExample}, exitOK, "encoding cp"},
		{[]string{"solve", "--heuristic", "pbs-fifo", "-o", "table", euroraExample}, exitOK, "solver pbs-fifo"},
		{[]string{"solve", "--heuristic", "pbs-walltime", "--encoding", "cp", "-o", "json", euroraExample}, exitOK, `"solver": "pbs-walltime"`},
		{[]string{"solve", "--encoding", "cp", "--granularity", "30s", "-o", "json", euroraExample}, exitOK, `"granularity_s": 30`},
		{[]string{"solve", "--encoding", "cp", "--fallback", "none", "--time-limit", "1s", "-o", "json", euroraExample}, exitOK, `"solver": "sat"`},
		{[]string{"solve", "--encoding", "cp", "--granularity", "1500ms", euroraExample}, exitUsage, "--granularity must be a whole number of seconds"},
		{[]string{"solve", "--encoding", "cp", "--max-jobs", "3", euroraExample}, exitUsage, "--max-jobs applies to the whole-node model"},
		{[]string{"solve", "--encoding", "cp", "--solver", "csp", euroraExample}, exitUsage, "does not schedule the cp encoding"},
		{[]string{"solve", euroraExample}, exitUsage, "use --encoding cp"},
		{[]string{"solve", "--solver", "sat", "--encoding", "scas", euroraExample}, exitUsage, "sat solves the cp encoding"},
	} {
		code, out, errs := optsched(t, "", c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%v: exit %d, want %d and %q; out %.300s err %s", c.args, code, c.code, c.want, out, errs)
		}
	}
}

// TestSolveCPTimeLimits: whatever the limit, the answer is a valid status
// and, with a schedule, one that validate accepts.
func TestSolveCPTimeLimits(t *testing.T) {
	dir := t.TempDir()
	for _, limit := range []string{"1us", "10ms", "1s"} {
		code, out, errs := optsched(t, "", "solve", "--encoding", "cp", "-o", "json", "--time-limit", limit, euroraExample)
		var d model.ScheduleDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%s: %v (exit %d, %s)", limit, err, code, errs)
		}
		switch d.Status {
		case "unknown":
			if code != exitError || len(d.Allocations) != 0 {
				t.Errorf("%s: unknown with exit %d and %d allocations", limit, code, len(d.Allocations))
			}
			continue
		case "optimal", "feasible", "fallback":
		default:
			t.Fatalf("%s: status %s", limit, d.Status)
		}
		p := filepath.Join(dir, "s.json")
		os.WriteFile(p, []byte(out), 0o644)
		if code, _, errs := optsched(t, "", "validate", euroraExample, p); code != exitOK {
			t.Errorf("%s: validate: %s", limit, errs)
		}
	}
}

func TestExportCNF(t *testing.T) {
	code, out, errs := optsched(t, "", "export", "--format", "cnf", euroraExample)
	if code != exitOK || !strings.Contains(out, "\np cnf ") || !strings.Contains(out, "c job j6 weight") {
		t.Fatalf("export cnf: exit %d %s\n%.500s", code, errs, out)
	}
	code, _, errs = optsched(t, "", "export", "--format", "cnf", "--max-jobs", "2", euroraExample)
	if code != exitUsage {
		t.Errorf("--max-jobs with cnf: exit %d %s", code, errs)
	}
}

func TestBenchBridi(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b.json")
	code, out, errs := optsched(t, "", "bench", "bridi", "--jobs", "30", "--interarrival", "60", "--time-limit", "100ms", "--json", p)
	if code != exitOK || !strings.Contains(out, "119.77") || !strings.Contains(out, "pbs-fifo") {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	if data, err := os.ReadFile(p); err != nil || !strings.Contains(string(data), `"Policy": "cp"`) {
		t.Errorf("json: %v %.200s", err, data)
	}
	if code, _, _ := optsched(t, "", "bench", "bridi", "--jobs", "0"); code != exitUsage {
		t.Errorf("--jobs 0: exit %d", code)
	}
}
