package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/optsched/optsched/bench/predict"
)

// TestBenchPredict: on the shipped KTH SP2 log, bench predict prints every
// predictor's MAPE at 0 % and 50 % elapsed beside the published figures,
// and the same as JSON; a log without wait times (Lublin-1) and bad flags
// are errors.
func TestBenchPredict(t *testing.T) {
	const kth = "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz"
	code, out, errs := optsched(t, "", "bench", "predict", "--trace", kth)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"request-left", "user-last", "user-ratio ", "user-ratio-cond", "user-mape", "MAPE % at 0%", "MAPE % at 50%", "110.8", "39.8", "other data", "first 19594 by submit"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = optsched(t, "", "bench", "predict", "--trace", kth, "-o", "json")
	if code != exitOK {
		t.Fatalf("-o json: exit %d: %s", code, errs)
	}
	var rep predict.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if rep.Jobs != 27992 || rep.Evaluated == 0 || len(rep.Results) != 10 || len(rep.Published) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, r := range rep.Results {
		if r.Jobs != rep.Evaluated || !(r.MAPE > 0) || !(r.MedianAPE > 0) {
			t.Errorf("result %+v", r)
		}
	}
	code, _, errs = optsched(t, "", "bench", "predict", "--trace", "../../instances/traces/lublin_256.swf.gz")
	if code == exitOK || !strings.Contains(errs, "no job's wait and run time") {
		t.Errorf("Lublin-1: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{{}, {"--trace", kth, "-o", "csv"}, {"--trace", kth, "--k", "0"}} {
		code, _, errs = optsched(t, "", append([]string{"bench", "predict"}, args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, errs)
		}
	}
}
