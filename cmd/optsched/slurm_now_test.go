package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSlurmPlanNow: `slurm plan --now` plans a snapshot as of the given
// time (RFC 3339 or Unix seconds, the same plan), that time reaches the
// decision (25 hours on, the first job that does not fit has waited past
// --starve-after 24h, which the plan says), and a bad value or --now with
// --apply is a usage error naming the flag.
func TestSlurmPlanNow(t *testing.T) {
	args := func(extra ...string) []string {
		return append([]string{"slurm", "plan", "--squeue", filepath.Join(slurmTestdata, "squeue.json"),
			"--sinfo", filepath.Join(slurmTestdata, "sinfo.json"),
			"--topology", filepath.Join(slurmTestdata, "scontrol-show-topology.txt"), "-o", "json"}, extra...)
	}
	plan := func(extra ...string) string {
		t.Helper()
		code, out, errs := optsched(t, "", args(extra...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		return goldenTimings.ReplaceAllString(out, "${1}T")
	}
	at := plan("--now", fixtureNow)
	if unix := plan("--now", "1795722400"); unix != at {
		t.Errorf("--now in Unix seconds plans otherwise than the same time in RFC 3339:\n%s\n%s", unix, at)
	}
	if scoped := plan("--now", fixtureNow, "--partitions", "batch", "--nodes", "n[01-08]"); strings.Contains(scoped, "--starve-after") {
		t.Errorf("--now %s: a job already past --starve-after:\n%s", fixtureNow, scoped)
	}
	later := plan("--now", "2026-11-27T20:46:40Z", "--partitions", "batch", "--nodes", "n[01-08]")
	if !strings.Contains(later, "has waited 25h") || !strings.Contains(later, "--starve-after 24h") {
		t.Errorf("--now 25 h after the snapshot: no job waits behind one past --starve-after:\n%s", later)
	}
	for _, bad := range [][]string{{"--now", "yesterday"}, {"--now", "0"}, {"--now", "-5"}, {"--now", fixtureNow, "--apply"}} {
		code, _, errs := optsched(t, "", args(bad...)...)
		if code != exitUsage || !strings.Contains(errs, "--now") {
			t.Errorf("%v: exit %d, %q; want a usage error naming --now", bad, code, errs)
		}
	}
}
