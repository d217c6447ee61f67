package main

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/pbsched/pbstest"
)

// TestPBSFakeQrunNeverGetsUnavailableVnodes runs the command end to end
// on random clusters, the state from fake qstat and pbsnodes on PATH, and
// checks what the fake qrun was actually asked.
func TestPBSFakeQrunNeverGetsUnavailableVnodes(t *testing.T) {
	calls := 0
	for seed := uint64(1); seed <= 30; seed++ {
		rc := pbstest.NewRandomCluster(rand.New(rand.NewPCG(seed, 66)))
		q, n, qs := rc.Write(t)
		_, callsFile := pbstest.FakePBS(t, q, n, qs)
		dir := t.TempDir()
		code, _, errs := optsched(t, "", "pbs", "plan", "--apply", "--timezone", "UTC", "--time-limit", "200ms",
			"--lock", filepath.Join(dir, "l"), "--log", filepath.Join(dir, "a.jsonl"))
		if code != exitOK {
			t.Fatalf("seed %d: exit %d: %s", seed, code, errs)
		}
		var starts []pbstest.Start
		for _, c := range pbstest.QrunCalls(t, callsFile) {
			f := strings.Fields(c)
			if len(f) != 5 || f[1] != "-H" || f[3] != "--" {
				t.Fatalf("seed %d: qrun called as %q", seed, c)
			}
			starts = append(starts, pbstest.Start{Job: f[4], ExecVnode: f[2]})
		}
		calls += len(starts)
		rc.Verify(t, seed, starts)
	}
	if calls < 20 {
		t.Errorf("only %d qrun calls on 30 random clusters", calls)
	}
}
