package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeLanTrace writes a seeded n-job trace in the paper's shape (gaps
// 5–30 s, runtimes 10–1800 s, 1–40 nodes) and returns its path.
func writeLanTrace(t *testing.T, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2023))
	var b strings.Builder
	at := int64(0)
	for i := range n {
		at += 5 + rng.Int64N(26)
		fmt.Fprintf(&b, "%d %d %d %d\n", i+1, at, 10+rng.Int64N(1791), 1+rng.IntN(40))
	}
	p := filepath.Join(t.TempDir(), "trace.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBenchLan2023Fig6 runs the command on a synthetic trace with two
// window periods and checks the tables, the JSON and the CSV.
func TestBenchLan2023Fig6(t *testing.T) {
	tr := writeLanTrace(t, 100, 6)
	dir := t.TempDir()
	js, cs := filepath.Join(dir, "f.json"), filepath.Join(dir, "f.csv")
	code, out, errs := optsched(t, "", "bench", "lan2023", "fig6", "--trace", tr, "--epochs", "2", "--slice", "40",
		"--taus", "10,1m", "--json", js, "--csv", cs, "--plot", filepath.Join(dir, "fig"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"fig6-cost.png", "fig6-cost.svg", "fig6-wait.png", "fig6-wait.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "fig", f)); err != nil || st.Size() < 500 {
			t.Errorf("--plot: %s: %v", f, err)
		}
	}
	for _, want := range []string{"## Fig. 6 — FCFS and BF (exact)", "2 epochs of 40 consecutive jobs",
		"| 1 | 0–39 |", "| 2 | 40–79 |", "FCFS: no published figures to compare with",
		"## Fig. 6 — window-based against FCFS and BF", "| τ = 10 s |", "| τ = 60 s |", "Shape (mean over epochs)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "fig6: FCFS and BF in") {
		t.Errorf("no timing line on stderr: %q", errs)
	}
	var doc struct {
		Epochs int `json:"epochs"`
		FCFS   []struct {
			Epoch int   `json:"epoch"`
			Jobs  int   `json:"jobs"`
			Cost  int64 `json:"cost"`
		} `json:"fcfs"`
		BF     []struct{} `json:"bf"`
		Window []struct {
			Tau     int64      `json:"tau_s"`
			Epochs  []struct{} `json:"epochs"`
			Windows int        `json:"windows"`
		} `json:"window"`
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Epochs != 2 || len(doc.FCFS) != 2 || len(doc.BF) != 2 || doc.FCFS[1].Epoch != 2 || doc.FCFS[1].Jobs != 40 || doc.FCFS[0].Cost < 1 ||
		len(doc.Window) != 2 || doc.Window[1].Tau != 60 || len(doc.Window[1].Epochs) != 2 || doc.Window[0].Windows == 0 {
		t.Errorf("JSON: %s", data)
	}
	f, err := os.Open(cs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+4*2 || rows[0][0] != "policy" || rows[1][0] != "fcfs" || rows[3][0] != "bf" || rows[5][0] != "window" || rows[7][1] != "60" {
		t.Errorf("CSV: %q", rows)
	}

	// Without window periods only FCFS and BF run.
	code, out, errs = optsched(t, "", "bench", "lan2023", "fig6", "--trace", tr, "--epochs", "1", "--slice", "50", "--taus", "")
	if code != exitOK || strings.Contains(out, "window-based") || !strings.Contains(out, "| 1 | 0–49 |") {
		t.Errorf("--taus \"\": exit %d, %s%s", code, out, errs)
	}
}

// TestBenchLan2023Fig6PaperTrace checks the published epoch-1 figures
// through the command (FCFS and BF only, the window sweep is tested in
// bench/lan2023).
func TestBenchLan2023Fig6PaperTrace(t *testing.T) {
	const tr = "../../" + lan2023Fig6DefaultTrace
	if _, err := os.Stat(tr); errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the trace the repository ships (instances/traces) cannot be read: %v", tr)
	}
	code, out, errs := optsched(t, "", "bench", "lan2023", "fig6", "--trace", tr, "--taus", "")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"| 1 | 0–299 | 35077 | 93 | 35077 / 93 (same) | 35077 | 93 | 35077 / 93 (same) |",
		"FCFS: all 10 epochs compared equal the published figures.",
		"BF: all 10 epochs compared equal the published figures.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchLan2023Fig6Errors(t *testing.T) {
	tr := writeLanTrace(t, 30, 6)
	missing := filepath.Join(t.TempDir(), "nope.txt")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--trace", missing}, exitError, "trace " + missing + " not found: pass --trace FILE"},
		{[]string{"--trace", tr, "--epochs", "0"}, exitUsage, "--epochs and --slice must be at least 1"},
		{[]string{"--trace", tr, "--taus", "1500ms"}, exitUsage, "whole number of seconds"},
		{[]string{"--trace", tr, "--taus", "-10s"}, exitUsage, "whole number of seconds"},
		{[]string{"--trace", tr, "--taus", "0"}, exitUsage, "whole number of seconds"},
		{[]string{"--trace", tr, "--taus", "ten"}, exitUsage, "whole number of seconds"},
		{[]string{"--trace", tr, "--epochs", "2", "--slice", "20"}, exitError, "2 epochs of 20 jobs need 40 jobs, the trace has 30"},
		{[]string{"--trace", tr, "extra"}, exitUsage, "want 0 argument(s)"},
	} {
		code, _, errs := optsched(t, "", append([]string{"bench", "lan2023", "fig6"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestBenchLan2023Fig6Flags checks the defaults through runF.
func TestBenchLan2023Fig6Flags(t *testing.T) {
	var got *benchLan2023Fig6Options
	cmd := newBenchLan2023Fig6CmdRun(&streams{}, func(o *benchLan2023Fig6Options) error { got = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.trace != lan2023Fig6DefaultTrace || got.epochs != 10 || got.slice != 300 || strings.Join(got.taus, ",") != "10s,20s,30s,40s,50s,60s" {
		t.Errorf("defaults: %+v", got)
	}
}
