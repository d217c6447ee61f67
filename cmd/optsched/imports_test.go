package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/optsched/optsched"

// allowedImports says which optsched packages each top-level package may
// import (the design's one-way flow). Sub-packages inherit the rule of
// their top-level folder and may import their own folder, except as
// selfContained says.
var allowedImports = map[string][]string{
	// The vocabulary and Check; its format adapters (model/windowjson,
	// model/slurm, model/hostlist, model/pbs) live under it.
	"model":      {},
	"encode":     {"model"},
	"solver":     {"encode", "model"},
	"heuristics": {"model", "solver"},
	"instances":  {"model"},
	// The catalogue builds every back end and preset by name.
	"catalog": {"model", "encode", "solver", "heuristics"},
	// The PBS scheduler: a library over the libraries, used by cmd (and
	// by nothing below it). pbsched/cycle (reading the server's state,
	// the lock, the audit log, the daemon loop) is under the same rule.
	"pbsched": {"model", "encode", "solver", "heuristics", "catalog", "output", "runloop", "sched"},
	// The Slurm scheduler, beside the PBS one and under the same rule;
	// slurmsched/cycle reads the cluster and runs the daemon loop.
	"slurmsched": {"model", "encode", "solver", "heuristics", "catalog", "output", "runloop", "sched"},
	// The scheduler-neutral pieces of a daemon (lock, audit line,
	// signals, loop): no optsched package at all.
	"runloop": {},
	// The scheduler-neutral core of a cycle (view, plan, check, recheck,
	// apply through a Runner): no optsched package at all; pbsched and
	// slurmsched are its adapters.
	"sched": {},
	// The documents optsched answers, their checks, the conversion of
	// the pipelines' answers and the tables for people.
	"output": {"model", "solver"},
	"bench":  {"*"},
	"cmd":    {"*"},
}

// selfContained are the folders whose top package imports no optsched
// package at all, not even one under it: model is the vocabulary, and the
// packages under it may import model and each other, never the reverse.
var selfContained = map[string]bool{"model": true}

// leaves are packages that import no optsched package at all: the
// learning core (layers, Adam, PPO) serves every learned design and
// depends on none.
var leaves = map[string]bool{"heuristics/learn": true}

func top(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	t, _, _ := strings.Cut(rel, "/")
	return t
}

// flowViolation says why package from may not import package imp, both
// optsched import paths; it is "" when the import follows the flow, or
// when from is in no known folder (reported apart).
func flowViolation(from, imp string) string {
	f, to := top(from), top(imp)
	allowed, known := allowedImports[f]
	switch {
	case !known:
		return ""
	case to == "cmd" && f != "cmd", to == "bench" && f != "bench" && f != "cmd":
		return "no library package may import cmd or bench"
	case leaves[strings.TrimPrefix(from, module+"/")]:
		return "imports no optsched package (a leaf: " + strings.TrimPrefix(from, module+"/") + ")"
	case selfContained[f] && from == module+"/"+f:
		return fmt.Sprintf("%s imports no optsched package, not even one under it (they may import it)", f)
	case to == f:
	case len(allowed) == 1 && allowed[0] == "*":
	case !slices.Contains(allowed, to):
		return fmt.Sprintf("against the flow (%s may import %v)", f, allowed)
	}
	return ""
}

// TestFlowRules checks flowViolation on imports the flow allows and
// forbids, so that TestImportFlow would catch them.
func TestFlowRules(t *testing.T) {
	for _, c := range []struct {
		from, imp string
		ok        bool
	}{
		{"model/windowjson", "model", true},
		{"model/windowjson", "model/slurm", true},
		{"model/pbs", "model/internal/jsonkind", true},
		{"model", "model/windowjson", false},
		// The verdict of validate: a checker beside Check, never a solver.
		{"model/verdict", "model", true},
		{"model/verdict", "solver", false},
		{"model/verdict", "encode", false},
		{"model", "model/verdict", false},
		{"output", "model/verdict", true},
		{"instances/traces", "bench/trace", false},
		{"model", "model/hostlist", false},
		{"model", "encode", false},
		{"model/windowjson", "solver", false},
		{"model/slurm", "instances", false},
		{"solver/sat", "solver", true},
		{"solver", "solver/sat", true},
		{"solver/sat", "encode/cnf", true},
		{"encode", "solver", false},
		{"instances", "model/windowjson", true},
		{"output", "model/windowjson", true},
		{"output", "heuristics", false},
		{"pbsched", "bench/sim", false},
		{"cmd/optsched", "bench/bridi", true},
		{"bench/bridi", "cmd/optsched", false},
		{"bench/cpolicy", "catalog", true},
		{"bench/cpolicy", "solver/sat", true},
		{"bench/sim", "bench/cpolicy", true},
		{"cmd/optsched", "bench/cpolicy", true},
		{"bench/cpolicy", "cmd/optsched", false},
		{"pbsched", "bench/cpolicy", false},
		{"catalog", "bench/cpolicy", false},
		{"pbsched/replay", "bench/replay", false},
		{"pbsched/replay", "model/replay", true},
		{"bench/replay", "model/replay", true},
		{"model/replay", "model", true},
		{"model/replay", "pbsched", false},
		{"pbsched/replay", "bench/trace", false},
		{"pbsched/replay", "bench/sim", false},
		{"pbsched", "bench/replay", false},
		{"pbsched/cycle", "bench/replay", false},
		{"cmd/optsched", "pbsched/replay", true},
		{"cmd/optsched", "slurmsched/replay", true},
		{"slurmsched/replay", "model/replay", true},
		{"slurmsched/replay", "slurmsched", true},
		{"slurmsched/replay", "runloop", true},
		{"slurmsched/replay", "bench/replay", false},
		{"slurmsched/replay", "pbsched/replay", false},
		{"pbsched/cycle", "runloop", true},
		{"slurmsched/cycle", "runloop", true},
		{"slurmsched", "model/slurm", true},
		{"slurmsched", "pbsched", false},
		{"pbsched", "slurmsched", false},
		{"runloop", "model", false},
		// The neutral core: the adapters import it, it imports none of
		// them (nor any optsched package).
		{"pbsched", "sched", true},
		{"slurmsched", "sched", true},
		{"pbsched/cycle", "sched", true},
		{"sched", "pbsched", false},
		{"sched", "slurmsched", false},
		{"sched", "model", false},
		{"sched", "runloop", false},
		{"runloop", "sched", false},
		{"cmd/optsched", "slurmsched/cycle", true},
		// The learning core: NSA and the learned designs train with it;
		// it imports no optsched package.
		{"heuristics/nsa", "heuristics/learn", true},
		{"bench/learned", "heuristics/learn", true},
		{"bench/learned", "bench/rlscheduler", true},
		// JoSHH runs in the simulator (which cannot import it back: Go
		// forbids the cycle).
		{"bench/learned", "bench/sim", true},
		{"heuristics/learn", "bench/learned", false},
		{"heuristics/learn", "solver", false},
		{"heuristics/learn", "model", false},
		{"cmd/optsched", "bench/learned", true},
		// The run-time predictor reads logs with bench/trace; no library
		// package may import it.
		{"bench/predict", "bench/trace", true},
		{"cmd/optsched", "bench/predict", true},
		{"bench/predict", "cmd/optsched", false},
		{"model", "bench/predict", false},
		{"heuristics/learn", "bench/predict", false},
		// rlschert's predictor is bench/predict's user-mape, run online
		// (bench/predict cannot import it back: Go forbids the cycle).
		{"bench/learned", "bench/predict", true},
		{"pbsched", "bench/predict", false},
	} {
		got := flowViolation(module+"/"+c.from, module+"/"+c.imp)
		if (got == "") != c.ok {
			t.Errorf("%s imports %s: violation %q, want allowed = %v", c.from, c.imp, got, c.ok)
		}
	}
}

// TestImportFlow runs `go list -deps` over the module and fails on any
// import against the flow, on an import of cmd or bench by a library
// package (the command may run the benchmarks), on an import by model of
// any optsched package (those under it included), and on a package
// outside the known folders.
func TestImportFlow(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(out)
	seen := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(p.ImportPath, module+"/") {
			continue
		}
		seen++
		if _, known := allowedImports[top(p.ImportPath)]; !known {
			t.Errorf("package %s is in no known top-level folder", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if why := flowViolation(p.ImportPath, imp); why != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, why)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if seen < 6 {
		t.Errorf("go list saw only %d optsched packages", seen)
	}
}
