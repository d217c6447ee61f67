package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
)

// TestPBSCycleTimeLimit is the time-limit contract of `optsched pbs
// plan`: a cycle on 10,000 vnodes with 5,000 queued jobs (each mix of
// scaleDocs) ends within --time-limit 1s plus 200 ms of wall time,
// measured in the process around the whole command (reading the files,
// parsing, planning, checkPlan, writing the script), and its plan passed
// checkPlan (exit status 0). It is timing-based by design; the inputs are
// built before the clock starts.
func TestPBSCycleTimeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000-vnode inputs; skipped with -short")
	}
	if raceSlowdown > 1 {
		t.Skip("a wall-time contract; the race detector slows the process down tenfold")
	}
	const nodes, queued = 10000, 5000
	const limit = time.Second
	const slack = 200 * time.Millisecond
	for _, mix := range []string{mixWhole, mixPartial, mixHalf} {
		t.Run("mix="+mix, func(t *testing.T) {
			args := writeScaleDocs(t, t.TempDir(), nodes, queued, mix)
			var out, errb strings.Builder
			start := time.Now()
			code := run(args, strings.NewReader(""), &out, &errb)
			elapsed := time.Since(start)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			starts := strings.Count(out.String(), " || rc=1\n")
			t.Logf("%d vnodes, %d queued (%s): %d starts in %v", nodes, queued, mix, starts, elapsed)
			if starts == 0 {
				t.Errorf("no job starts:\n%s", head(out.String(), 40))
			}
			if elapsed > limit+slack {
				t.Errorf("cycle took %v, more than --time-limit %v + %v", elapsed, limit, slack)
			}
		})
	}
}

// head returns the first n lines of s.
func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines[n] = fmt.Sprintf("... (%d more bytes)", len(s)-len(strings.Join(lines[:n], "\n")))
	}
	return strings.Join(lines, "\n")
}

// TestPBSClusterCachesMatch: neverFits and cpEligible, which keep their
// answers by job shape and place, answer what the uncached first fit on
// the empty vnodes and the scan over the free vnodes answer, for every
// candidate of random clusters (asked twice, so that the cached answers
// are compared too).
func TestPBSClusterCachesMatch(t *testing.T) {
	compared := 0
	for seed := range uint64(400) {
		c := randomClusterView(t, seed)
		for range 2 {
			for _, cand := range c.cands {
				want := ""
				if cand.whole {
					if n := len(cand.units); n > len(c.vnodes) {
						want = fmt.Sprintf("needs %s, optsched has %d", plural(n, "whole vnode"), len(c.vnodes))
					}
				} else {
					_, _, want = newFitState(c, true).place(cand, math.MaxInt)
				}
				if got := c.neverFits(cand); got != want {
					t.Fatalf("seed %d, job %s: neverFits %q, uncached %q", seed, cand.job.ID, got, want)
				}
				want = ""
				for _, v := range c.vnodes {
					if v.free && v.n.Queue == "" && exclusiveOn(v.n, cand.job.Place) {
						want = "it is exclusive on vnode " + v.n.Name
						break
					}
				}
				if got := c.cpEligible(cand); len(cand.chunks) == 1 && cand.job.Place.Group == "" && !strings.HasPrefix(got, "its chunks") && got != want {
					t.Fatalf("seed %d, job %s: cpEligible %q, uncached %q", seed, cand.job.ID, got, want)
				}
				compared++
			}
		}
	}
	t.Logf("%d answers compared", compared)
}

// TestUnitFitsMatchesMisfit: unitFits answers unitMisfit(...) == "" for
// every unit of every candidate (and the units of their packed chunks)
// on every vnode of random clusters.
func TestUnitFitsMatchesMisfit(t *testing.T) {
	compared := 0
	for seed := range uint64(300) {
		c := randomClusterView(t, seed)
		for _, cand := range c.cands {
			units := slices.Clone(cand.chunks)
			for _, u := range cand.chunks {
				all := chunkReq{amounts: model.Resources{}, labels: u.labels}
				for k, a := range u.amounts {
					all.amounts[k] = 3 * a
				}
				units = append(units, all)
			}
			for _, u := range units {
				for _, v := range c.vnodes {
					if got, want := unitFits(c, v, u, cand.job), unitMisfit(c, v, u, cand.job); got != (want == "") {
						t.Fatalf("seed %d, job %s, vnode %s: unitFits %v, unitMisfit %q", seed, cand.job.ID, v.n.Name, got, want)
					}
					compared++
				}
			}
		}
	}
	t.Logf("%d answers compared", compared)
}

// randomClusterView builds the cluster of newRandomCluster(seed).
func randomClusterView(t *testing.T, seed uint64) *cluster {
	t.Helper()
	rc := newRandomCluster(rand.New(rand.NewPCG(seed, 77)))
	st := &pbsState{digest: "test"}
	var err error
	if st.jobs, err = pbs.ParseJobs(rc.qstat, time.UTC); err != nil {
		t.Fatal(err)
	}
	if st.nodes, err = pbs.ParseNodes(rc.nodes); err != nil {
		t.Fatal(err)
	}
	if st.queues, err = pbs.ParseQueues(rc.queues); err != nil {
		t.Fatal(err)
	}
	st.now = st.jobs.Timestamp
	c, err := buildCluster(st, &pbsScope{levels: []string{"tier0", "tier1"}, period: 60})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
