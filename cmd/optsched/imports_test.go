package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/optsched/optsched"

// allowedImports says which optsched packages each top-level package may
// import (the design's one-way flow). Sub-packages inherit the rule of
// their top-level folder and may import their own folder.
var allowedImports = map[string][]string{
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
	"pbsched": {"model", "encode", "solver", "heuristics", "catalog", "output"},
	// The documents optsched answers, their checks, the conversion of
	// the pipelines' answers and the tables for people.
	"output": {"model", "solver"},
	"bench":  {"*"},
	"cmd":    {"*"},
}

func top(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	t, _, _ := strings.Cut(rel, "/")
	return t
}

// TestImportFlow runs `go list -deps` over the module and fails on any
// import against the flow, on an import of cmd or bench by a library
// package (the command may run the benchmarks), and on a package outside
// the known folders.
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
		from := top(p.ImportPath)
		allowed, known := allowedImports[from]
		if !known {
			t.Errorf("package %s is in no known top-level folder", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := top(imp)
			switch {
			case to == "cmd" && from != "cmd", to == "bench" && from != "bench" && from != "cmd":
				t.Errorf("%s imports %s: no library package may import cmd or bench", p.ImportPath, imp)
			case to == from:
			case len(allowed) == 1 && allowed[0] == "*":
			default:
				ok := false
				for _, a := range allowed {
					ok = ok || a == to
				}
				if !ok {
					t.Errorf("%s imports %s, against the flow (%s may import %v)", p.ImportPath, imp, from, allowed)
				}
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
