package model_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

// checkWindow: 2 pods × 2 leaves × 4 nodes; n0–n5 idle; n6–n7 run r1
// until 200; n8–n15 neither idle nor running (e.g. down).
const checkWindow = `{"time": 100, "topology": {"layout": {"pods": 2, "leaves_per_pod": 2, "nodes_per_leaf": 4}},
 "idle": "n[0-5]", "running": [{"id": "r1", "nodes": "n[6-7]", "end": 200}],
 "jobs": [{"id": "a", "nodes": 2, "walltime": 50}, {"id": "b", "nodes": 3, "walltime": 500}, {"id": "c", "nodes": 1, "walltime": 10}]}`

func mustWindow(t *testing.T, doc string) *model.Window {
	t.Helper()
	w, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestCheck(t *testing.T) {
	w := mustWindow(t, checkWindow)
	type A = model.Allocation
	cases := []struct {
		name   string
		allocs []A
		want   string // "" when feasible
	}{
		{"empty", nil, ""},
		{"all on idle nodes", []A{{0, []int{0, 1}, 100, nil}, {1, []int{2, 3, 4}, 100, nil}, {2, []int{5}, 100, nil}}, ""},
		{"after a running job ends", []A{{0, []int{6, 7}, 200, nil}}, ""},
		{"sequential reuse of a node", []A{{0, []int{0, 1}, 100, nil}, {2, []int{0}, 150, nil}}, ""},
		{"unknown job", []A{{7, []int{0}, 100, nil}}, "unknown job index 7"},
		{"negative job", []A{{-1, []int{0}, 100, nil}}, "unknown job index -1"},
		{"job twice", []A{{2, []int{0}, 100, nil}, {2, []int{1}, 100, nil}}, "job c: allocated twice"},
		{"too few nodes", []A{{1, []int{0, 1}, 100, nil}}, "job b: got 2 nodes, requested 3"},
		{"too many nodes", []A{{0, []int{0, 1, 2}, 100, nil}}, "job a: got 3 nodes, requested 2"},
		{"node out of range", []A{{0, []int{0, 99}, 100, nil}}, "node id 99 is not in the topology"},
		{"node twice in a job", []A{{0, []int{1, 1}, 100, nil}}, "node n1 given twice"},
		{"start before window", []A{{2, []int{0}, 99, nil}}, "starts at 99, before the window time 100"},
		{"busy node", []A{{0, []int{5, 6}, 100, nil}}, "node n6 is busy until 200"},
		{"down node", []A{{2, []int{9}, 100, nil}}, "node n9 is neither idle nor freed"},
		{"node shared now", []A{{0, []int{0, 1}, 100, nil}, {1, []int{1, 2, 3}, 100, nil}}, "node n1: jobs a and b overlap"},
		{"overlap behind a short job", []A{{1, []int{0, 1, 2}, 100, nil}, {0, []int{3, 4}, 100, nil}, {2, []int{0}, 300, nil}}, "node n0: jobs b and c overlap"},
	}
	for _, c := range cases {
		err := model.Check(w, c.allocs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: no error, want %q", c.name, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q, want %q", c.name, err, c.want)
		case c.want != "" && !errors.Is(err, model.ErrInfeasible):
			t.Errorf("%s: error does not wrap ErrInfeasible", c.name)
		}
	}
}

func TestCheckListsSeveralProblems(t *testing.T) {
	w := mustWindow(t, checkWindow)
	err := model.Check(w, []model.Allocation{{Job: 0, Nodes: []int{8, 9}, Start: 100}, {Job: 1, Nodes: []int{0}, Start: 0}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"n8", "n9", "got 1 nodes", "before the window time"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestSelectJobs(t *testing.T) {
	// 10 idle nodes. Order: nwp desc, then size asc, then window order:
	// e(nwp 2, 6) d(1) a(2) c(2) b(5) f(3)… with e first.
	doc := `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 8}},
	 "idle": "n[0-9]",
	 "jobs": [{"id": "a", "nodes": 2, "walltime": 1}, {"id": "b", "nodes": 5, "walltime": 1},
	          {"id": "c", "nodes": 2, "walltime": 1}, {"id": "d", "nodes": 1, "walltime": 1},
	          {"id": "e", "nodes": 6, "walltime": 1, "nwp": 2}, {"id": "f", "nodes": 1, "walltime": 1, "nwp": 0},
	          {"id": "g", "nodes": 99, "walltime": 1}]}`
	w := mustWindow(t, doc)
	ids := func(idx []int) string {
		var s []string
		for _, i := range idx {
			s = append(s, w.Jobs[i].ID)
		}
		return strings.Join(s, " ")
	}
	if got := ids(model.Order(w)); got != "e d f a c b g" {
		t.Errorf("order = %q", got)
	}
	// e(6)+d(1)+f(1)+a(2) = 10 fit; c does not and stops the selection.
	s := model.SelectJobs(w, 0)
	if ids(s.Multi) != "e a" || ids(s.Single) != "d f" {
		t.Errorf("multi %q single %q", ids(s.Multi), ids(s.Single))
	}
	var def []string
	for _, d := range s.Deferred {
		def = append(def, w.Jobs[d.Job].ID)
	}
	if strings.Join(def, " ") != "c b g" {
		t.Errorf("deferred = %v", def)
	}
	if !strings.Contains(s.Deferred[0].Reason, "needs 2 nodes, 0 idle") || !strings.Contains(s.Deferred[1].Reason, "behind job c") {
		t.Errorf("reasons: %+v", s.Deferred)
	}
	// A cap of one multi-node job stops at a, the second multi-node job.
	s = model.SelectJobs(w, 1)
	if ids(s.Multi) != "e" || ids(s.Single) != "d f" || len(s.Deferred) != 4 ||
		!strings.Contains(s.Deferred[0].Reason, "maximum of 1 multi-node") {
		t.Errorf("with cap: multi %q single %q deferred %+v", ids(s.Multi), ids(s.Single), s.Deferred)
	}
	// A job larger than the cluster says so.
	w2 := mustWindow(t, `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 4}},
	 "idle": "n[0-3]", "jobs": [{"id": "huge", "nodes": 5, "walltime": 1}]}`)
	if s := model.SelectJobs(w2, 0); len(s.Deferred) != 1 || !strings.Contains(s.Deferred[0].Reason, "more than the 4 the cluster has") {
		t.Errorf("huge job: %+v", s.Deferred)
	}
}

func TestParseSelectAndSize(t *testing.T) {
	s, err := model.ParseSelect("2:ncpus=8:ngpus=1+mem=2gb:host=n3")
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s.Units() != 3 || s[1].Count != 1 || s[1].Amounts["mem"] != 2<<30 || s[1].Labels["host"] != "n3" {
		t.Errorf("parsed %+v", s)
	}
	if got := s.String(); got != "2:ncpus=8:ngpus=1+1:mem=2147483648:host=n3" {
		t.Errorf("String() = %q", got)
	}
	back, err := model.ParseSelect(s.String())
	if err != nil || back.String() != s.String() {
		t.Errorf("String does not round-trip: %v %v", back, err)
	}
	for _, bad := range []string{"", "0:ncpus=1", "x:ncpus=1", "2:ncpus", "2:ncpus=1:ncpus=2", "1:ncpus=-1", "1:mem=3xb", "1:n cpus=2", "99999999:ncpus=1"} {
		if _, err := model.ParseSelect(bad); err == nil {
			t.Errorf("ParseSelect(%q): no error", bad)
		}
	}
	sizes := map[string]int64{"0": 0, "10": 10, "10b": 10, "4kb": 4096, "2MB": 2 << 20, "64gb": 64 << 30, "1tb": 1 << 40, "1pb": 1 << 50, "2w": 16, "1kw": 8192}
	for in, want := range sizes {
		if got, err := model.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "gb", "-1", "1.5gb", "4zb", "99999999999pb"} {
		if _, err := model.ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q): no error", bad)
		}
	}
}

func FuzzParseSelect(f *testing.F) {
	for _, s := range []string{"2:ncpus=8:ngpus=1", "1:mem=64gb+3:ncpus=2:arch=x86", "ncpus=4", "", "2:ncpus"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := model.ParseSelect(s)
		if err != nil {
			return
		}
		if sel.Units() < 1 {
			t.Fatalf("accepted %q with %d units", s, sel.Units())
		}
		if _, err := model.ParseSelect(sel.String()); err != nil {
			t.Fatalf("String() of %q = %q does not parse: %v", s, sel.String(), err)
		}
	})
}
