package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/output"
)

// TestTrainNSAThenSolve trains a few updates on a synthetic Lan-shaped
// trace, then solves the example with the written weights as heuristic
// and as fallback; the plot is a PNG.
func TestTrainNSAThenSolve(t *testing.T) {
	tr := writeLanTrace(t, 20000, 5)
	dir := t.TempDir()
	w, png := filepath.Join(dir, "w.bin.gz"), filepath.Join(dir, "curve.png")
	code, out, errs := optsched(t, "", "train", "nsa", "--trace", tr, "--epochs", "2", "--episodes", "96", "--batch", "32",
		"--arch", "fcn1", "--seed", "4", "--out", w, "--plot", png, "--checkpoint", filepath.Join(dir, "ck"))
	if code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "trained fcn1") || !strings.Contains(errs, "training windows") {
		t.Errorf("train output: %q %q", out, errs)
	}
	if b, err := os.ReadFile(png); err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Errorf("plot: %v", err)
	}
	if ck, _ := filepath.Glob(filepath.Join(dir, "ck", "*.bin.gz")); len(ck) != 1 {
		t.Errorf("checkpoints: %v", ck)
	}
	for _, args := range [][]string{
		{"--heuristic", "nsa", "--nsa-weights", w},
		{"--heuristic", "nsa", "--nsa-weights", w, "--nsa-sample"},
		{"--heuristic", "nsa"},
		{"--fallback", "nsa", "--nsa-weights", w, "--time-limit", "1ms"},
	} {
		code, out, errs := optsched(t, "", append(append([]string{"solve", "-o", "json"}, args...), example)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var d output.ResultDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil || d.Objective == nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
		if args[0] == "--heuristic" && d.Solver != "nsa" {
			t.Errorf("%v: solver %q", args, d.Solver)
		}
	}
}

// TestTrainNSAErrors: bad flags are usage errors; a bad weights file is
// an error naming the file and the field.
func TestTrainNSAErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.bin")
	if err := os.WriteFile(bad, []byte("NSAWGT01 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"train", "nsa", "--arch", "resnet"}, exitUsage, "--arch"},
		{[]string{"train", "nsa", "--episodes", "0"}, exitUsage, "--episodes"},
		{[]string{"train", "nsa", "--trace", filepath.Join(t.TempDir(), "none.txt")}, exitError, "not found"},
		{[]string{"solve", "--heuristic", "nsa", "--nsa-weights", bad, example}, exitError, "bad.bin"},
		{[]string{"solve", "--fallback", "nsa", "--nsa-weights", bad, example}, exitError, "bad weights file"},
		{[]string{"solve", "--fallback", "mystery", example}, exitUsage, "sa, nsa, none"},
	} {
		code, _, errs := optsched(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d mentioning %q", c.args, code, errs, c.code, c.want)
		}
	}
}
