package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/trace"
	"github.com/optsched/optsched/instances/traces"
)

func TestBenchLan2023Tables(t *testing.T) {
	tr := writeLanTrace(t, 300, 11)
	dir := t.TempDir()
	js, cs := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.csv")
	code, out, errs := optsched(t, "", "bench", "lan2023", "table3", "--trace", tr, "--epochs", "2", "--periods", "5", "--free-limit", "10s",
		"--json", js, "--csv", cs, "--plot", filepath.Join(dir, "fig"))
	if code != exitOK {
		t.Fatalf("table3: exit %d: %s", code, errs)
	}
	for _, f := range []string{"table3-cost.png", "table3-cost.svg", "table4-time.png", "table4-time.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "fig", f)); err != nil || st.Size() < 500 {
			t.Errorf("--plot: %s: %v", f, err)
		}
	}
	for _, want := range []string{"## Table III", "NSA-500 against the other methods", "105023.5", "exact-30 s (paper: SCIP-30 s)",
		"Where and why we differ", "2 epochs × 5 periods of τ = 60 s on 1000 nodes"} {
		if !strings.Contains(out, want) {
			t.Errorf("table3 output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "## Table IV") {
		t.Errorf("table3 printed Table IV:\n%s", out)
	}
	var doc struct {
		Epochs []struct {
			Rows []struct {
				Method string  `json:"method"`
				Cost   float64 `json:"cost"`
			} `json:"rows"`
		} `json:"epochs"`
		Windows int `json:"windows"`
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Epochs) != 2 || doc.Windows == 0 {
		t.Fatalf("JSON %v: %s", err, data)
	}
	for _, ep := range doc.Epochs {
		if ep.Rows[0].Method != "Seq" || ep.Rows[5].Method != "exact" || ep.Rows[5].Cost > ep.Rows[0].Cost {
			t.Errorf("epoch rows %+v: want Seq first, exact sixth, exact ≤ Seq", ep.Rows)
		}
	}
	f, err := os.Open(cs)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 1+3*8 || recs[0][3] != "method" {
		t.Errorf("CSV: %v, %d records", err, len(recs))
	}

	code, out, errs = optsched(t, "", "bench", "lan2023", "table4", "--trace", tr, "--epochs", "1", "--periods", "4", "--seed", "3")
	if code != exitOK || !strings.Contains(out, "## Table IV") || !strings.Contains(out, "paper / ours") ||
		!strings.Contains(out, "18.96 s") || strings.Contains(out, "## Table III") {
		t.Errorf("table4: exit %d\n%s%s", code, out, errs)
	}
}

func TestBenchLan2023TablesErrors(t *testing.T) {
	tr := writeLanTrace(t, 50, 11)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--trace", filepath.Join(t.TempDir(), "none.txt")}, exitError, "not found: pass --trace FILE"},
		{[]string{"--trace", tr, "--epochs", "0"}, exitUsage, "at least 1"},
		{[]string{"--trace", tr, "--periods", "-1"}, exitUsage, "at least 1"},
		{[]string{"--trace", tr, "--tau", "1500ms"}, exitUsage, "whole number of seconds"},
		{[]string{"--trace", tr, "--limit30", "0s"}, exitUsage, "--limit30 must be positive"},
		{[]string{"--trace", tr, "--periods", "1000"}, exitError, "less than an epoch"},
		{[]string{"--trace", tr, "extra"}, exitUsage, "argument"},
		{[]string{"--trace", tr, "--workers", "-1"}, exitUsage, "--workers must be at least 0"},
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("1 0 100\n"), 0o644)
	cases = append(cases, struct {
		args []string
		code int
		want string
	}{[]string{"--trace", bad}, exitError, "lan line 1: want 4 fields"})
	for _, c := range cases {
		code, _, errs := optsched(t, "", append([]string{"bench", "lan2023", "table3"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestBenchLan2023TablesFlags checks the flags' defaults and parsing.
func TestBenchLan2023TablesFlags(t *testing.T) {
	var got *benchLan2023TableOptions
	s := &streams{}
	cmd := newBenchLan2023TableCmdRun(s, "table4", func(o *benchLan2023TableOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--epochs", "3", "--limit30", "2s", "--paper-compat", "--workers", "2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.which != "table4" || got.epochs != 3 || got.periods != 100 || got.seed != 1 ||
		got.limit != 2*time.Second || got.tau != time.Minute || got.maxJobs != 5 || !got.paperCompat ||
		got.trace != "instances/traces/lan2023_trace_1800_40.txt.gz" || got.workers != 2 {
		t.Errorf("options %+v", got)
	}
}

// TestBenchLan2023TablesRealTrace runs one short epoch on the paper's
// trace when it is beside the checkout.
func TestBenchLan2023TablesRealTrace(t *testing.T) {
	const path = "../../instances/traces/lan2023_trace_1800_40.txt.gz"
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", err)
	}
	code, out, errs := optsched(t, "", "bench", "lan2023", "table3", "--trace", path, "--epochs", "1", "--periods", "10")
	if code != exitOK || !strings.Contains(out, "100000 jobs") || !strings.Contains(out, "| 0.0 % | 2 % |") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

// TestBenchLan2023TablesShardMerge runs table3 in two shards and merges
// them: the Table III rows equal those of the whole run.
func TestBenchLan2023TablesShardMerge(t *testing.T) {
	tr := writeLanTrace(t, 300, 11)
	dir := t.TempDir()
	args := []string{"bench", "lan2023", "table3", "--trace", tr, "--epochs", "3", "--periods", "4"}
	var files []string
	for i, sh := range []string{"0/2", "1/2"} {
		js := filepath.Join(dir, strings.ReplaceAll(sh, "/", "-")+".json")
		// The shards run with other worker counts: they still merge.
		code, out, errs := optsched(t, "", append(args, "--shard", sh, "--json", js, "--workers", strconv.Itoa(i+1))...)
		if code != exitOK || !strings.Contains(out, "shard "+sh+":") {
			t.Fatalf("--shard %s: exit %d\n%s%s", sh, code, out, errs)
		}
		files = append(files, js)
	}
	_, whole, _ := optsched(t, "", args...)
	code, merged, errs := optsched(t, "", append([]string{"bench", "merge"}, files...)...)
	if code != exitOK || !strings.Contains(merged, "2 reports merged: 3 of 3 epochs") {
		t.Fatalf("merge: exit %d\n%s%s", code, merged, errs)
	}
	table3 := func(s string) string { // the rows of Table III's first table
		s = s[strings.Index(s, "## Table III"):]
		s = s[strings.Index(s, "\n|"):]
		s = s[:strings.Index(s, "\n\n")]
		// SA-eq runs for NSA's measured wall time: it is time-dependent
		// by construction, so it is left out of the comparison.
		var keep []string
		for _, line := range strings.Split(s, "\n") {
			if !strings.HasPrefix(line, "| SA-eq") {
				keep = append(keep, line)
			}
		}
		return strings.Join(keep, "\n")
	}
	if table3(merged) != table3(whole) {
		t.Errorf("merged Table III differs from the whole run's:\n%s\n---\n%s", table3(merged), table3(whole))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "merge", files[0], files[0]}, "epoch 0 is in reports 1 and 2"},
		{append(args, "--shard", "2/2"), "--shard: want i/n"},
	} {
		code, _, errs := optsched(t, "", c.args...)
		if code == exitOK || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errs, c.want)
		}
	}
	bad := filepath.Join(dir, "other.json")
	os.WriteFile(bad, []byte(`{"benchmark":"fig6"}`), 0o644)
	if code, _, errs := optsched(t, "", "bench", "merge", bad); code == exitOK || !strings.Contains(errs, `benchmark "fig6"`) {
		t.Errorf("merge of a fig6 report: exit %d, %q", code, errs)
	}
}

// TestDefaultTraceAwayFromCheckout: bench lan2023 and train nsa read their
// default trace from the copy in the binary when run away from a checkout
// (issue 36: they failed after go install); another missing path is still
// an error.
func TestDefaultTraceAwayFromCheckout(t *testing.T) {
	t.Chdir(t.TempDir())
	tr, err := openLanTrace(traces.Lan2023Name, trace.Options{MaxJobs: 500})
	if err != nil || len(tr.Jobs) != 500 {
		t.Fatalf("default trace away from a checkout: %v", err)
	}
	if _, err := openLanTrace("instances/traces/nope.txt.gz", trace.Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing trace: %v", err)
	}
	for _, c := range []*cobra.Command{newTrainCmd(&streams{}), newBenchCmd(&streams{})} {
		for _, sub := range append([]*cobra.Command{c}, allCommands(c)...) {
			if f := sub.Flags().Lookup("trace"); f != nil && strings.Contains(f.DefValue, "lan2023") && f.DefValue != traces.Lan2023Name {
				t.Errorf("%s: --trace default %q", sub.CommandPath(), f.DefValue)
			}
		}
	}
}

// allCommands returns every command under c.
func allCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		out = append(out, s)
		out = append(out, allCommands(s)...)
	}
	return out
}
