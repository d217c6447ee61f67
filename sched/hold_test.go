package sched

import (
	"slices"
	"testing"
)

// TestStackAndWholeOn: chunks of a stacking job add up on one node; a
// node the job takes whole by its own policy takes no other start.
func TestStackAndWholeOn(t *testing.T) {
	v := twoNodes()
	v.Jobs = append(v.Jobs,
		Job{ID: "s", Chunks: []Resources{{"cpus": 3}, {"cpus": 3}}, Pool: "p", Stack: true},
		Job{ID: "t", Chunks: []Resources{{"cpus": 5}, {"cpus": 4}}, Pool: "p", Stack: true},
		Job{ID: "x", Chunks: []Resources{{"cpus": 1}}, Pool: "p", WholeOn: map[string]bool{"n2": true}},
		Job{ID: "y", Chunks: []Resources{{"cpus": 5}, {"cpus": 5}}, Pool: "p", Stack: true, WholeOn: map[string]bool{"n2": true}})
	for _, c := range []struct {
		name   string
		starts []Start
		want   []Kind
	}{
		{"stack fits", []Start{{Job: "s", Nodes: []string{"n2", "n2"}}}, nil},
		{"stack over, once", []Start{{Job: "t", Nodes: []string{"n2", "n2"}}}, []Kind{Over}},
		{"no stack", []Start{{Job: "a", Nodes: []string{"n2", "n2"}}}, []Kind{NodeTwice}},
		{"whole on n2 alone", []Start{{Job: "x", Nodes: []string{"n2"}}}, nil},
		{"whole on n2, then another", []Start{{Job: "x", Nodes: []string{"n2"}}, {Job: "h", Nodes: []string{"n2"}}}, []Kind{Over, NotWhole}},
		// A node taken whole still has to hold the start's amounts.
		{"whole, amounts over", []Start{{Job: "y", Nodes: []string{"n2", "n2"}}}, []Kind{Over}},
		{"not whole on busy n1", []Start{{Job: "x", Nodes: []string{"n1"}}}, nil},
	} {
		if got := kinds(Check(v, Plan{Starts: c.starts})); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCheckHold: a job ahead of the held one delays the nodes it takes;
// a job behind it that ends after the shadow time may take only the extra
// nodes; the held job may not start.
func TestCheckHold(t *testing.T) {
	// Nodes a and b are empty now, c at 100, d at 300; H needs 3 nodes:
	// the shadow time is 100 and no node is extra.
	h := Hold{Job: "H", Need: 3, Now: 0, Empty: map[string]int64{"a": 0, "b": 0, "c": 100, "d": 300},
		Rank: map[string]int{"A": 0, "H": 1, "S": 2, "L": 3},
		Wall: func(j string) int64 { return map[string]int64{"A": 50, "S": 100, "L": 500}[j] }}
	check := func(starts ...Start) []HoldViolation { return CheckHold(h, Plan{Starts: starts}) }
	if vs := check(Start{Job: "S", Nodes: []string{"a"}}); len(vs) != 0 {
		t.Errorf("short job behind: %+v", vs)
	}
	if vs := check(Start{Job: "L", Nodes: []string{"a"}}); len(vs) != 1 || !vs[0].Delays || vs[0].Shadow != 100 || vs[0].Extra != 0 {
		t.Errorf("long job behind: %+v", vs)
	}
	if vs := check(Start{Job: "L", Nodes: []string{"d"}}); len(vs) != 0 {
		t.Errorf("long job on a node empty after the shadow: %+v", vs)
	}
	if vs := check(Start{Job: "H", Nodes: []string{"a"}}); len(vs) != 1 || vs[0].Delays {
		t.Errorf("held job starts: %+v", vs)
	}
	// A job ahead on c until 150 moves the shadow to 150: S (ends at 100)
	// is still fine; with Need 4 (all) the shadow is 300 and one node of
	// four is extra... none: all four are needed.
	if vs := check(Start{Job: "A", Nodes: []string{"c"}}, Start{Job: "S", Nodes: []string{"a"}}); len(vs) != 0 {
		t.Errorf("ahead and short behind: %+v", vs)
	}
	h.All = true
	if vs := check(Start{Job: "L", Nodes: []string{"a"}}); len(vs) != 1 || vs[0].Shadow != 300 {
		t.Errorf("all nodes: %+v", vs)
	}
	h.All, h.Need = false, 9
	if vs := check(Start{Job: "L", Nodes: []string{"a"}}); len(vs) != 0 {
		t.Errorf("a start that never comes is not delayed: %+v", vs)
	}
}
