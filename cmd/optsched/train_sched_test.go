package main

import (
	"bytes"
	"encoding/json"
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
		{"train", "sched", "--design", "joshh", "--trace", lublin, "--out", w, "--objective", "bsld"},
		{"simulate", "--trace", lublin, "--policy", "joshh", "--allocator", "slurm"},
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
	// The paper's flat picker (--picker flat): trained, read back and
	// measured on a validation sequence of a trace (--sequences, --length).
	flat := filepath.Join(dir, "flat.bin.gz")
	code, _, errs = optsched(t, "", "train", "sched", "--design", "rlschert", "--synthetic", "--picker", "flat",
		"--imitation", "2", "--epochs", "1", "--episodes", "1", "--seed", "5", "--out", flat)
	if code != exitOK || !strings.Contains(errs, "flat picker") {
		t.Fatalf("train --picker flat: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(flat); bytes.Equal(b, files[0]) {
		t.Error("the flat picker wrote the kernel's weights")
	}
	const lublin = "../../instances/traces/lublin_256.swf.gz"
	code, out, errs = optsched(t, "", "bench", "rlschert", "--trace", lublin, "--weights", flat, "--sequences", "6252", "--length", "832", "--policies", "rule,rlschert")
	if code != exitOK || !strings.Contains(out, "1 sequences of 832 jobs") || !strings.Contains(out, "rlschert") {
		t.Fatalf("bench --sequences: exit %d: %s %s", code, out, errs)
	}
	// The paper's design whole (--visible oldest) is still trainable; its
	// file differs from the queue design's. The rule rows take another
	// design (--rule-visible ...).
	paper := filepath.Join(dir, "paper.bin.gz")
	code, _, errs = optsched(t, "", "train", "sched", "--design", "rlschert", "--synthetic", "--visible", "oldest",
		"--imitation", "2", "--epochs", "1", "--episodes", "1", "--seed", "5", "--out", paper)
	if code != exitOK || !strings.Contains(errs, "design: paper") {
		t.Fatalf("train --visible oldest: exit %d: %s", code, errs)
	}
	code, out, errs = optsched(t, "", "bench", "rlschert", "--synthetic", "--seed", "5", "--weights", paper, "--policies", "saf,rule,rule-kill",
		"--rule-visible", "queue", "--rule-reserve", "key", "--rule-rank", "area-req", "-o", "json")
	if code != exitOK {
		t.Fatalf("bench --rule-visible: exit %d: %s %s", code, out, errs)
	}
	var rows []struct {
		Policy string  `json:"policy"`
		Mean   float64 `json:"mean_slowdown"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("bench json: %v %q", err, out)
	}
	// The synthetic requests are exact: the queue design's rule with a
	// reservation for the smallest request × nodes is SAF with EASY.
	if rows[0].Mean != rows[1].Mean {
		t.Errorf("the rule reserving for the smallest area scored %v, SAF (EASY) %v", rows[1].Mean, rows[0].Mean)
	}
	for _, args := range [][]string{
		{"train", "sched", "--design", "rlschert", "--synthetic", "--visible", "all", "--out", w},
		{"train", "sched", "--design", "rlschert", "--synthetic", "--reserve", "first", "--out", w},
		{"train", "sched", "--design", "rlschert", "--synthetic", "--rank", "nodes", "--out", w},
		{"train", "sched", "--design", "rlschert", "--synthetic", "--kill-elapsed", "2", "--out", w},
		{"bench", "rlschert", "--synthetic", "--rule-visible", "all"},
		{"bench", "rlschert", "--synthetic", "--rule-kill-margin", "-1"},
		{"train", "sched", "--design", "rlschert", "--synthetic", "--picker", "conv", "--out", w},
		{"bench", "rlschert", "--synthetic", "--sequences", "0"},
		{"bench", "rlschert", "--trace", lublin, "--length", "100"},
		{"bench", "rlschert", "--trace", lublin, "--sequences", "9990"},
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

// TestTrainJoSHHThenUse trains the joshh design for one epoch of one
// episode on the shipped Lublin-1 trace, twice with the same seed (the
// same weights file), then runs it in simulate (its allocation selector,
// then first-fit: the same schedule) and in bench joshh; simulate's JSON
// carries the slowdown and normalised turnaround.
func TestTrainJoSHHThenUse(t *testing.T) {
	const lublin = "../../instances/traces/lublin_256.swf.gz"
	dir := t.TempDir()
	var files [2][]byte
	for i := range files {
		w := filepath.Join(dir, "j"+string(rune('a'+i))+".bin.gz")
		code, out, errs := optsched(t, "", "train", "sched", "--design", "joshh", "--trace", lublin,
			"--epochs", "1", "--episodes", "1", "--seed", "3", "--out", w)
		if code != exitOK {
			t.Fatalf("train: exit %d: %s", code, errs)
		}
		if !strings.Contains(out, "trained joshh") || !strings.Contains(errs, "from 958 starts outside the test sequences (0–957)") {
			t.Errorf("train output: %q %q", out, errs)
		}
		var err error
		if files[i], err = os.ReadFile(w); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the same seed wrote different weights")
	}
	w := filepath.Join(dir, "ja.bin.gz")
	var sums [2]map[string]any
	for i, alloc := range []string{"", "first-fit"} {
		js := filepath.Join(dir, "s"+alloc+".json")
		args := []string{"simulate", "--trace", lublin, "--policy", "joshh", "--weights", w, "--max-trace-jobs", "400", "--json", js}
		if alloc != "" {
			args = append(args, "--allocator", alloc)
		}
		code, out, errs := optsched(t, "", args...)
		if code != exitOK || !strings.Contains(out, "policy joshh") || !strings.Contains(out, "normalised turnaround  ") {
			t.Fatalf("simulate: exit %d: %s %s", code, out, errs)
		}
		b, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sums[i]); err != nil {
			t.Fatal(err)
		}
		sd, ok1 := sums[i]["mean_slowdown"].(float64)
		nt, ok2 := sums[i]["mean_normalised_turnaround"].(float64)
		if !ok1 || !ok2 || sd < 1 || nt != sd {
			t.Errorf("JSON slowdown %v, normalised turnaround %v", sums[i]["mean_slowdown"], sums[i]["mean_normalised_turnaround"])
		}
	}
	if sums[0]["mean_wait_s"] != sums[1]["mean_wait_s"] {
		t.Errorf("first-fit placement changed the schedule: waits %v and %v", sums[0]["mean_wait_s"], sums[1]["mean_wait_s"])
	}
	code, out, errs := optsched(t, "", "bench", "joshh", "--trace", lublin, "--weights", w)
	if code != exitOK || !strings.Contains(out, "joshh+first-fit") || !strings.Contains(out, "4.5") || !strings.Contains(out, "joshh's window easy-shortest-strict") {
		t.Fatalf("bench joshh: exit %d: %s %s", code, out, errs)
	}
}

// TestLearnedColumnsInRLSchedulerBench runs every learned design as a
// column of bench rlscheduler with the shipped weights of each trace,
// then with weights of an arrival-window joshh trained here on episodes
// that avoid a validation sequence (--exclude); the output says which
// weights each column ran with.
func TestLearnedColumnsInRLSchedulerBench(t *testing.T) {
	const lublin = "../../instances/traces/lublin_256.swf.gz"
	const hpc2n = "../../instances/traces/HPC2N-2002-2.1-cln.swf.gz"
	for _, tr := range []string{lublin, hpc2n} {
		code, out, errs := optsched(t, "", "bench", "rlscheduler", "--trace", tr, "--policies", "sjf,rl-here,rlschert,rlschert-kill,joshh",
			"--sequences", "100", "--length", "200")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tr, code, errs)
		}
		for _, want := range []string{"  simulated", "rlschert-kill: the shipped rlschert weights of", "gap to bound", "rl-here: the shipped rlscheduler"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", tr, want, out)
			}
		}
	}
	w := filepath.Join(t.TempDir(), "arrival.bin.gz")
	code, _, errs := optsched(t, "", "train", "sched", "--design", "joshh", "--trace", lublin, "--window", "arrival",
		"--episode-len", "256", "--exclude", "6252", "--epochs", "1", "--episodes", "1", "--out", w)
	if code != exitOK || !strings.Contains(errs, "(0–1725)") {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	code, out, errs := optsched(t, "", "bench", "rlscheduler", "--trace", lublin, "--policies", "joshh", "--joshh-weights", w,
		"--sequences", "6252", "--length", "300", "--bound=false")
	if code != exitOK || !strings.Contains(out, "joshh: weights "+w) {
		t.Fatalf("bench: exit %d: %s %s", code, out, errs)
	}
	code, out, errs = optsched(t, "", "bench", "joshh", "--trace", lublin, "--weights", w, "--sequences", "6252", "--length", "300")
	if code != exitOK || !strings.Contains(out, "sequences of 300 jobs at [6252]") {
		t.Fatalf("bench joshh: exit %d: %s %s", code, out, errs)
	}
	for _, args := range [][]string{
		{"train", "sched", "--design", "joshh", "--trace", lublin, "--out", w, "--window", "last"},
		{"train", "sched", "--trace", lublin, "--out", w, "--min-load", "-1"},
		{"bench", "rlscheduler", "--trace", lublin, "--policies", "joshh", "--joshh-weights", w + ".missing"},
		{"bench", "rlscheduler", "--trace", lublin, "--policies", "rlschert", "--paper", "none"},
	} {
		if code, _, _ := optsched(t, "", args...); code == exitOK {
			t.Errorf("%v: exit 0, want an error", args)
		}
	}
}

// TestTrainSchedImitationValidation: the rlscheduler options of the
// shipped weights (feature set 2, imitation of F1, validation sequences)
// on a small run: training avoids the validation sequence, the weights
// written are a checkpoint the output names, they read back as feature
// set 2 in bench rlscheduler, and bad values are usage errors.
func TestTrainSchedImitationValidation(t *testing.T) {
	trainRLSchedulerThenBench(t, []string{"--features", "2", "--imitate", "f1", "--imitation", "2", "--imitation-passes", "2"},
		[]string{"0–1725, 6552–6829", "feature set 2", "warm start: imitation of f1 on 2 episodes", "imitation: 2 episodes", "written: the weights after epoch "},
		[][]string{{"--features", "3"}, {"--imitate", "best"}, {"--validate", "9990"}})
}

// TestTrainSchedResidual: train sched --residual f1 writes a residual
// policy whose file records it: its epoch-0 validation is F1's, and bench
// rlscheduler runs it; a residual with an imitation, over an
// unknown key or of a non-positive temperature is a usage error.
func TestTrainSchedResidual(t *testing.T) {
	trainRLSchedulerThenBench(t, []string{"--residual", "f1", "--temperature", "0.02"},
		[]string{"feature set 2", "residual policy over f1, temperature 0.02", "epoch 0: the residual policy before training (F1's choices), validation ", "written: the weights after epoch "},
		[][]string{{"--residual", "f1", "--imitate", "f1"}, {"--residual", "sjf"}, {"--residual", "f1", "--temperature", "0"}})
}

// trainRLSchedulerThenBench trains rlscheduler on Lublin-1 with args (one
// epoch of one episode, validated on one sequence at 6252), wants each of
// wantErr in what training says on stderr, runs the weights as bench
// rlscheduler's rl-here column, and wants each of usage (train sched
// arguments) to be a usage error.
func trainRLSchedulerThenBench(t *testing.T, args, wantErr []string, usage [][]string) {
	t.Helper()
	const lublin = "../../instances/traces/lublin_256.swf.gz"
	w := filepath.Join(t.TempDir(), "w.bin.gz")
	train := append([]string{"train", "sched", "--design", "rlscheduler", "--trace", lublin}, args...)
	train = append(train, "--validate", "6252", "--validate-len", "300", "--validate-every", "1",
		"--epochs", "1", "--episodes", "1", "--seed", "3", "--out", w)
	code, out, errs := optsched(t, "", train...)
	if code != exitOK {
		t.Fatalf("train: exit %d: %s", code, errs)
	}
	for _, want := range wantErr {
		if !strings.Contains(errs, want) {
			t.Errorf("train output lacks %q: %q", want, errs)
		}
	}
	if !strings.Contains(out, "trained rlscheduler") {
		t.Errorf("train output: %q", out)
	}
	code, out, errs = optsched(t, "", "bench", "rlscheduler", "--trace", lublin, "--policies", "f1,rl-here", "--weights", w,
		"--sequences", "6252", "--length", "300", "--bound=false")
	if code != exitOK || !strings.Contains(out, "rl-here") {
		t.Fatalf("bench: exit %d: %s %s", code, out, errs)
	}
	for _, u := range usage {
		args := append([]string{"train", "sched", "--trace", lublin, "--out", w}, u...)
		if code, _, _ := optsched(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want a usage error", args, code)
		}
	}
}
