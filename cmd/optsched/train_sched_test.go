package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainSchedThenUse trains the rlscheduler design for one small epoch
// on the shipped Lublin-1 trace, twice with the same seed (the same
// weights file), then runs its column in bench rlscheduler and simulate
// with the weights.
func TestTrainSchedThenUse(t *testing.T) {
	const lublin = "../../instances/traces/lublin_256.swf.gz"
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		w := filepath.Join(dir, "w"+string(rune('a'+i))+".bin.gz")
		code, out, errs := optsched(t, "", "train", "sched", "--design", "rlscheduler", "--trace", lublin,
			"--epochs", "1", "--episodes", "2", "--seed", "3", "--out", w)
		if code != exitOK {
			t.Fatalf("train: exit %d: %s", code, errs)
		}
		if !strings.Contains(out, "trained rlscheduler") || !strings.Contains(errs, "0–1725, 6252–6829") {
			t.Errorf("train output: %q %q", out, errs)
		}
		png := strings.TrimSuffix(w, ".bin.gz") + ".png"
		if b, err := os.ReadFile(png); err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Errorf("plot %s: %v", png, err)
		}
		var err error
		if files[i], err = os.ReadFile(w); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the same seed wrote different weights")
	}
	w := filepath.Join(dir, "wa.bin.gz")
	code, out, errs := optsched(t, "", "bench", "rlscheduler", "--trace", lublin, "--policies", "f1,rl-here", "--weights", w,
		"--sequences", "0", "--length", "200", "--bound=false")
	if code != exitOK || !strings.Contains(out, "rl-here") {
		t.Fatalf("bench: exit %d: %s %s", code, out, errs)
	}
	code, out, errs = optsched(t, "", "simulate", "--trace", lublin, "--policy", "rlscheduler", "--weights", w, "--max-trace-jobs", "300")
	if code != exitOK || !strings.Contains(out, "policy rlscheduler") {
		t.Fatalf("simulate: exit %d: %s %s", code, out, errs)
	}
	for _, args := range [][]string{
		{"train", "sched", "--design", "joshh", "--trace", lublin, "--out", w},
		{"train", "sched", "--trace", lublin},
		{"train", "sched", "--trace", lublin, "--out", w, "--objective", "wait"},
		{"simulate", "--trace", lublin, "--policy", "easy", "--weights", w},
	} {
		if code, _, _ := optsched(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want a usage error", args, code)
		}
	}
}

// TestTrainSchertThenUse trains the rlschert design briefly on the
// synthetic workload, twice with the same seed (the same weights file),
// then measures it with bench rlschert and runs it in simulate with
// --kill on a shipped trace with the shipped weights.
func TestTrainSchertThenUse(t *testing.T) {
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		w := filepath.Join(dir, "s"+string(rune('a'+i))+".bin.gz")
		code, out, errs := optsched(t, "", "train", "sched", "--design", "rlschert", "--synthetic",
			"--imitation", "2", "--epochs", "1", "--episodes", "2", "--seed", "5", "--out", w)
		if code != exitOK {
			t.Fatalf("train: exit %d: %s", code, errs)
		}
		if !strings.Contains(out, "trained rlschert") || !strings.Contains(errs, "imitation:") {
			t.Errorf("train output: %q %q", out, errs)
		}
		png := strings.TrimSuffix(w, ".bin.gz") + ".png"
		if b, err := os.ReadFile(png); err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Errorf("plot %s: %v", png, err)
		}
		var err error
		if files[i], err = os.ReadFile(w); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the same seed wrote different weights")
	}
	w := filepath.Join(dir, "sa.bin.gz")
	code, out, errs := optsched(t, "", "bench", "rlschert", "--synthetic", "--seed", "5", "--weights", w, "--policies", "sjf-5,rlschert,rlschert-kill")
	if code != exitOK || !strings.Contains(out, "rlschert-kill") || !strings.Contains(out, "Table 7") {
		t.Fatalf("bench: exit %d: %s %s", code, out, errs)
	}
	const kth = "../../instances/traces/KTH-SP2-1996-2.1-cln.swf.gz"
	code, out, errs = optsched(t, "", "simulate", "--trace", kth, "--policy", "rlschert", "--kill", "--max-trace-jobs", "400")
	if code != exitOK || !strings.Contains(out, "policy rlschert") || !strings.Contains(out, "kills") {
		t.Fatalf("simulate: exit %d: %s %s", code, out, errs)
	}
	for _, args := range [][]string{
		{"train", "sched", "--design", "rlschert", "--out", w},
		{"train", "sched", "--design", "rlschert", "--synthetic", "--out", w, "--objective", "bsld"},
		{"train", "sched", "--design", "rlscheduler", "--synthetic", "--out", w},
		{"simulate", "--trace", kth, "--policy", "easy", "--kill"},
		{"bench", "rlschert"},
	} {
		if code, _, _ := optsched(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want a usage error", args, code)
		}
	}
}
