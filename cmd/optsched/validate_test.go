package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/output"
)

// TestValidateCatchesIssue36Answers runs validate on the two wrong
// answers of issue 36 against the example window (proven optimum
// 107,102): a result that defers job g although it fits and claims
// optimal 106,602, and one that defers all eight jobs and claims optimal
// 0. Both must exit 3, and -o json must say which checks failed.
func TestValidateCatchesIssue36Answers(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, edit func(d *output.ResultDoc)) string {
		var d output.ResultDoc
		if err := json.Unmarshal([]byte(out0(t)), &d); err != nil {
			t.Fatal(err)
		}
		edit(&d)
		data, _ := json.Marshal(d)
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noG := write("no-g", func(d *output.ResultDoc) {
		for i, a := range d.Allocations {
			if a.Job == "g" {
				*d.Objective -= a.Cost
				d.Allocations = append(d.Allocations[:i], d.Allocations[i+1:]...)
				break
			}
		}
		b := float64(*d.Objective)
		d.Bound = &b
		d.Deferred = append(d.Deferred, output.DeferralDoc{Job: "g", Reason: "deferred"})
	})
	none := write("none", func(d *output.ResultDoc) {
		for _, a := range d.Allocations {
			d.Deferred = append(d.Deferred, output.DeferralDoc{Job: a.Job, Reason: "deferred"})
		}
		d.Allocations = nil
		zero, zf := int64(0), 0.0
		d.Objective, d.Bound, d.Gap = &zero, &zf, &zf
		d.Cost, d.MaxJobs = nil, nil // as an older document
	})
	for _, c := range []struct {
		path   string
		obj    int64
		failed []string
	}{
		{noG, 106602, []string{"selection"}},
		{none, 0, []string{"selection", "optimality"}},
	} {
		code, _, errs := optsched(t, "", "validate", example, c.path)
		if code != exitInfeasible || !strings.Contains(errs, "job g") {
			t.Errorf("%s: exit %d, stderr %q; want exit 3 naming job g", c.path, code, errs)
		}
		code, out, _ := optsched(t, "", "validate", "-o", "json", example, c.path)
		var rep struct {
			Valid     bool
			Objective int64
			Checks    []struct {
				Name string
				OK   bool
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitInfeasible || rep.Valid {
			t.Fatalf("%s: -o json: exit %d, %v, %s", c.path, code, err, out)
		}
		var failed []string
		for _, ch := range rep.Checks {
			if !ch.OK {
				failed = append(failed, ch.Name)
			}
		}
		if fmt.Sprint(failed) != fmt.Sprint(c.failed) || rep.Objective != c.obj {
			t.Errorf("%s: failed checks %v, objective %d; want %v and %d", c.path, failed, rep.Objective, c.failed, c.obj)
		}
	}
}

// TestValidateCostRoundTrip is the README's round trip with --cost on
// generated windows: the result records its cost model, validate honours
// it, --cost must agree unless --override, and a document without the
// field (written before it was recorded) is judged with --cost.
func TestValidateCostRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for seed := 1; seed <= 20; seed++ {
		code, win, errs := optsched(t, "", "gen", "--seed", fmt.Sprint(seed))
		if code != exitOK {
			t.Fatalf("gen: %s", errs)
		}
		w := filepath.Join(dir, fmt.Sprintf("w%d.json", seed))
		os.WriteFile(w, []byte(win), 0o644)
		code, res, errs := optsched(t, "", "solve", "-o", "json", "--time-limit", "2s", "--cost", "lan-paper", w)
		if code != exitOK {
			t.Fatalf("seed %d: solve: %s", seed, errs)
		}
		r := filepath.Join(dir, fmt.Sprintf("r%d.json", seed))
		os.WriteFile(r, []byte(res), 0o644)
		if code, out, errs := optsched(t, "", "validate", w, r); code != exitOK || !strings.Contains(out, "cost model lan-paper") {
			t.Errorf("seed %d: validate: exit %d %s %s", seed, code, out, errs)
		}
		if seed > 3 {
			continue
		}
		if code, _, errs := optsched(t, "", "validate", "--cost", "lan-paper", w, r); code != exitOK {
			t.Errorf("seed %d: --cost agreeing: exit %d %s", seed, code, errs)
		}
		if code, _, errs := optsched(t, "", "validate", "--cost", "lan-code", w, r); code != exitUsage || !strings.Contains(errs, "--override") {
			t.Errorf("seed %d: --cost disagreeing: exit %d %s", seed, code, errs)
		}
		if code, _, errs := optsched(t, "", "validate", "--cost", "lan-code", "--override", w, r); code != exitInfeasible || !strings.Contains(errs, "reported cost") {
			t.Errorf("seed %d: --override to lan-code: exit %d %s", seed, code, errs)
		}
		var d map[string]any
		json.Unmarshal([]byte(res), &d)
		delete(d, "cost")
		old, _ := json.Marshal(d)
		o := filepath.Join(dir, fmt.Sprintf("old%d.json", seed))
		os.WriteFile(o, old, 0o644)
		if code, _, errs := optsched(t, "", "validate", w, o); code != exitInfeasible || !strings.Contains(errs, "give --cost") {
			t.Errorf("seed %d: old document without --cost: exit %d %s", seed, code, errs)
		}
		if code, _, errs := optsched(t, "", "validate", "--cost", "lan-paper", w, o); code != exitOK {
			t.Errorf("seed %d: old document with --cost: exit %d %s", seed, code, errs)
		}
	}
}

// TestValidateMaxJobs: the cap a result records is the one its selection
// is judged with; --max-jobs must agree with it; a document without it is
// judged with no cap or the cap its allocation implies.
func TestValidateMaxJobs(t *testing.T) {
	dir := t.TempDir()
	code, res, errs := optsched(t, "", "solve", "-o", "json", "--max-jobs", "2", example)
	if code != exitOK {
		t.Fatal(errs)
	}
	r := filepath.Join(dir, "r.json")
	os.WriteFile(r, []byte(res), 0o644)
	if code, _, errs := optsched(t, "", "validate", example, r); code != exitOK {
		t.Errorf("capped result: exit %d %s", code, errs)
	}
	if code, _, errs := optsched(t, "", "validate", "--max-jobs", "3", example, r); code != exitUsage {
		t.Errorf("--max-jobs disagreeing: exit %d %s", code, errs)
	}
	if code, _, errs := optsched(t, "", "validate", "--max-jobs", "0", "--override", example, r); code != exitInfeasible || !strings.Contains(errs, "selection") {
		t.Errorf("--max-jobs 0 --override: exit %d %s", code, errs)
	}
	var d map[string]any
	json.Unmarshal([]byte(res), &d)
	delete(d, "max_jobs")
	old, _ := json.Marshal(d)
	os.WriteFile(r, old, 0o644)
	if code, _, errs := optsched(t, "", "validate", example, r); code != exitOK {
		t.Errorf("capped result without max_jobs: exit %d %s", code, errs)
	}
}
