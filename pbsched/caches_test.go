package pbsched

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
	"github.com/optsched/optsched/pbsched/pbstest"
)

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

// randomClusterView builds the cluster of pbstest.NewRandomCluster(seed).
func randomClusterView(t *testing.T, seed uint64) *cluster {
	t.Helper()
	rc := pbstest.NewRandomCluster(rand.New(rand.NewPCG(seed, 77)))
	st := &State{Digest: "test"}
	var err error
	if st.Jobs, err = pbs.ParseJobs(rc.Qstat, time.UTC); err != nil {
		t.Fatal(err)
	}
	if st.Nodes, err = pbs.ParseNodes(rc.Nodes); err != nil {
		t.Fatal(err)
	}
	if st.Queues, err = pbs.ParseQueues(rc.Queues); err != nil {
		t.Fatal(err)
	}
	st.Now = st.Jobs.Timestamp
	c, err := buildCluster(st, &Scope{Levels: []string{"tier0", "tier1"}, Period: 60})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestUnitMisfitReasonStable: a chunk that misses several resources of a
// vnode is told the first of them by name, the same on every call (the
// chunk's amounts are a map; ranging over it gave any of them).
func TestUnitMisfitReasonStable(t *testing.T) {
	tested := 0
	for seed := range uint64(100) {
		c := randomClusterView(t, seed)
		for _, cand := range c.cands {
			for _, u := range cand.chunks {
				all := chunkReq{amounts: model.Resources{}, labels: u.labels}
				for k, a := range u.amounts {
					all.amounts[k] = 1000 * (a + 1)
				}
				if len(all.amounts) < 2 {
					continue
				}
				for _, v := range c.vnodes {
					first := unitMisfit(c, v, all, cand.job)
					if !strings.Contains(first, "wanted") || strings.HasPrefix(first, "vnode belongs") {
						continue
					}
					var missing []string
					for k, want := range all.amounts {
						if c.checks(k) && v.n.Available[k] < want {
							missing = append(missing, k)
						}
					}
					if len(missing) < 2 {
						continue
					}
					if k := slices.Min(missing); !strings.HasPrefix(first, k+"=") {
						t.Fatalf("seed %d, job %s, vnode %s: %q, want the reason of %s (first of %v by name)", seed, cand.job.ID, v.n.Name, first, k, missing)
					}
					for range 20 {
						if again := unitMisfit(c, v, all, cand.job); again != first {
							t.Fatalf("seed %d, job %s, vnode %s: %q, then %q", seed, cand.job.ID, v.n.Name, first, again)
						}
					}
					tested++
				}
			}
		}
	}
	if tested == 0 {
		t.Fatal("no chunk missed two resources: the test tests nothing")
	}
	t.Logf("%d reasons repeated", tested)
}
