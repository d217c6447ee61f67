package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// updateGolden rewrites the golden files of TestPlanGolden from the
// current outputs (go test ./cmd/optsched -run TestPlanGolden -update).
var updateGolden = flag.Bool("update", false, "rewrite the golden plan outputs")

// goldenTimings matches the timings of a plan's documents, the one part of
// them that differs from run to run.
var goldenTimings = regexp.MustCompile(`("elapsed_ms": )[0-9.e+-]+|[0-9]+\.[0-9]{3} ms`)

const slurmTestdata = "../../slurmsched/testdata"

// TestPlanGolden holds the outputs of `optsched pbs plan` and `optsched
// slurm plan` on the fixture documents, byte for byte but for the
// timings: the scheduler-neutral core (package sched) and the two
// adapters around it must keep every document unchanged.
func TestPlanGolden(t *testing.T) {
	slurm := func(extra ...string) []string {
		return append([]string{"slurm", "plan", "--squeue", filepath.Join(slurmTestdata, "squeue.json"),
			"--sinfo", filepath.Join(slurmTestdata, "sinfo.json"),
			"--topology", filepath.Join(slurmTestdata, "scontrol-show-topology.txt")}, extra...)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"pbs-plan.sh", fixtureArgs()},
		{"pbs-plan.json", fixtureArgs("-o", "json")},
		{"pbs-plan-first-fit.json", fixtureArgs("--partial", "first-fit", "-o", "json")},
		{"pbs-plan-lan2023.json", fixtureArgs("--selection", "lan2023", "-o", "json")},
		{"pbs-plan-nodes.sh", fixtureArgs("--nodes", "n001,n002,n003,n004,n005,n009,n010")},
		{"slurm-plan.txt", slurm()},
		{"slurm-plan.json", slurm("-o", "json")},
		{"slurm-plan-scope.json", slurm("--partitions", "batch", "--nodes", "n[01-08]", "-o", "json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := optsched(t, "", c.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			got := goldenTimings.ReplaceAllString(out, "${1}T")
			path := filepath.Join("testdata", "golden", c.name)
			if *updateGolden {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s:\n%s", path, got)
			}
		})
	}
}
