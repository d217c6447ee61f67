package cp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model/windowjson"
)

// TestPoolWholeUnit: n0 has its 2 GPUs free but 2 of 16 cores, n1 16
// cores but no GPU free until 600 s; a unit of 8 cores and 2 GPUs fits
// neither node before then. Each resource alone sees room (2 GPUs free on
// n0, 8 cores on n1); the threshold of the job's whole unit does not,
// so the pool releases the job at slot 10 (600 s on the 60 s grid), as m
// does.
func TestPoolWholeUnit(t *testing.T) {
	const doc = `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}},
 "idle": "",
 "running": [{"id": "r0", "nodes": "n0", "end": 6000, "select": "1:ncpus=14", "units": {"n0": 1}},
             {"id": "r1", "nodes": "n1", "end": 600, "select": "1:ncpus=1:ngpus=2", "units": {"n1": 1}}],
 "queues": {"q": {"expected_wait": 60}},
 "jobs": [{"id": "a", "nodes": 1, "walltime": 60, "select": "1:ncpus=8:ngpus=2", "queue": "q"}],
 "node_resources": {"default": {"ncpus": 16, "ngpus": 2}}}`
	m := buildDoc(t, doc)
	if got := m.Jobs[0].EST; got != 10 {
		t.Fatalf("EST of a = %d, want 10", got)
	}
	p := m.Pool(0)
	var whole bool
	for _, r := range p.Resources {
		whole = whole || strings.Contains(r, "&")
	}
	if !whole {
		t.Errorf("no whole-unit threshold among the pool's resources %v", p.Resources)
	}
	if got := p.Jobs[0].Options[0].Release[0]; got != 10 {
		t.Errorf("the pool releases a at slot %d, want 10 (m's EST)\n%s", got, p.Describe())
	}
}

// TestPoolExclusive: a waiting job with place=excl takes its nodes whole,
// so its demand on the pooled count of one-core units is an empty node's
// 16, not its 2 units' 2; a job that shares counts its units.
func TestPoolExclusive(t *testing.T) {
	const doc = `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}},
 "idle": "n[0-1]",
 "queues": {"q": {"expected_wait": 60}},
 "jobs": [{"id": "x", "nodes": 2, "walltime": 60, "select": "2:ncpus=1", "place": "excl", "queue": "q"},
          {"id": "y", "nodes": 1, "walltime": 60, "select": "1:ncpus=1", "queue": "q"}],
 "node_resources": {"default": {"ncpus": 16}}}`
	m := buildDoc(t, doc)
	p := m.Pool(0)
	r := slices.Index(p.Resources, "ncpus>=1@0")
	if r < 0 {
		t.Fatalf("no ncpus>=1 on all nodes among %v", p.Resources)
	}
	x, y := p.Jobs[0], p.Jobs[1]
	if got := int64(x.Units) * x.Req[r]; got != 16 {
		t.Errorf("excl job x takes %d one-core units, want 16 (a whole node)\n%s", got, p.Describe())
	}
	if got := int64(y.Units) * y.Req[r]; got != 1 {
		t.Errorf("job y takes %d one-core units, want 1", got)
	}
}

// buildDoc reads the window doc on the 60 s grid.
func buildDoc(t *testing.T, doc string) *cp.Model {
	t.Helper()
	w, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cp.Build(w, 60)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
