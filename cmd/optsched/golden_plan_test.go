package main

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/optsched/optsched/sched/schedtest"
)

// goldenTimings matches the timings of a plan's documents, the one part of
// them that differs from run to run.
var goldenTimings = regexp.MustCompile(`("elapsed_ms": )[0-9.e+-]+|[0-9]+\.[0-9]{3} ms`)

const slurmTestdata = "../../slurmsched/testdata"

// fixtureNow is when slurmsched/testdata's squeue.json and sinfo.json
// were taken (a minute after the last time in them): a plan of them
// made at the time of reading would change as the fixtures age (a day
// on, the first job that does not fit has waited past --starve-after).
const fixtureNow = "2026-11-26T19:46:40Z"

// TestPlanGolden holds the outputs of `optsched pbs plan` and `optsched
// slurm plan` on the fixture documents, byte for byte but for the
// timings (rewrite them with -golden.update): the scheduler-neutral core (package sched) and the two
// adapters around it must keep every document unchanged.
func TestPlanGolden(t *testing.T) {
	slurm := func(extra ...string) []string {
		return append([]string{"slurm", "plan", "--squeue", filepath.Join(slurmTestdata, "squeue.json"),
			"--sinfo", filepath.Join(slurmTestdata, "sinfo.json"),
			"--topology", filepath.Join(slurmTestdata, "scontrol-show-topology.txt"), "--now", fixtureNow}, extra...)
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
			schedtest.Golden(t, filepath.Join("testdata", "golden", c.name), got, *updateGolden)
		})
	}
}
