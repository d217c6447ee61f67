package slurmsched

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCheckText = flag.Bool("update-check-text", false, "rewrite testdata/check-errors/*.golden")

// TestCheckTexts holds the whole text of Check's and Recheck's answers on
// broken plans, several rules broken at once among them (the golden files
// was written by the Check of before package sched, and the adapter over
// sched must word every violation, in the same order, the same way).
func TestCheckTexts(t *testing.T) {
	none := "none"
	edit := func(f func(st *State)) *State {
		st := fixture(t)
		f(st)
		return st
	}
	node := func(st *State, name string) *Node {
		for i := range st.Nodes {
			if st.Nodes[i].Name == name {
				return &st.Nodes[i]
			}
		}
		t.Fatalf("no node %s", name)
		return nil
	}
	job := func(st *State, id int64) *Job {
		for i := range st.Jobs {
			if st.Jobs[i].ID == id {
				return &st.Jobs[i]
			}
		}
		t.Fatalf("no job %d", id)
		return nil
	}
	batch := &Scope{Partitions: []string{"batch"}}
	for _, c := range []struct {
		name   string
		st     *State
		sc     *Scope
		starts []*Start
	}{
		{"many at once", fixture(t), batch, []*Start{
			{Job: "15", Nodes: []string{"n09", "n11", "n99"}},
			{Job: "15", Nodes: []string{"n12", "n12"}},
			{Job: "13", Nodes: []string{"n04", "n09"}},
			{Job: "7_3", Nodes: []string{"n04"}}, {Job: "7_9", Nodes: []string{"n04"}},
			{Job: "4", Nodes: []string{"n12"}}, {Job: "4", Nodes: []string{"n12"}},
			{Job: "11", Nodes: []string{"n12"}}, {Job: "7", Nodes: []string{"n12"}},
		}},
		{"node list and count", fixture(t), batch, []*Start{{Job: "15", Nodes: []string{"n12"}, NodeList: "n[12-14]"}, {Job: "13", Nodes: []string{"n12", "n13"}, NodeList: "n[12-14]"}}},
		{"scope", fixture(t), &Scope{Partitions: []string{"batch"}, Nodes: map[string]bool{"n12": true}}, []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}}},
		{"partition", edit(func(st *State) { node(st, "n13").Partitions = []string{"other"} }), batch, []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}}},
		{"excluded", edit(func(st *State) { job(st, 15).ExcludedNodes = "n[12-13]" }), batch, []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}}},
		{"excluded unreadable", edit(func(st *State) { job(st, 15).ExcludedNodes = "n[12-" }), batch, []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}, {Job: "15", Nodes: []string{"n12"}}}},
		{"exclusive", edit(func(st *State) { job(st, 15).Shared = &none }), batch, []*Start{{Job: "15", Nodes: []string{"n05", "n12"}}, {Job: "13", Nodes: []string{"n12", "n13"}}}},
		{"in flight", edit(func(st *State) {
			j := job(st, 13)
			j.Priority, j.AdminComment, j.RequiredNodes, j.Shared = 1, PlacedMark, "n[12-13]", &none
		}), batch, []*Start{{Job: "15", Nodes: []string{"n12", "n14"}}}},
		{"memory", edit(func(st *State) {
			n := node(st, "n12")
			n.State, n.AllocMemory, n.AllocCPUs = "mixed", 7000, 1
		}), batch, []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}, {Job: "13", Nodes: []string{"n12", "n14"}}}},
	} {
		var b strings.Builder
		fmt.Fprintf(&b, "== %s\ncheck: %v\n", c.name, Check(c.st, c.sc, &Plan{Starts: c.starts}))
		p := &Plan{Starts: c.starts}
		Recheck(c.st, c.sc, p)
		for _, s := range p.Starts {
			fmt.Fprintf(&b, "kept: %s %v\n", s.Job, s.Nodes)
		}
		for _, d := range p.Dropped {
			fmt.Fprintf(&b, "dropped: %s: %s\n", d.Job, d.Reason)
		}
		got := b.String()
		path := filepath.Join("testdata", "check-errors", strings.ReplaceAll(c.name, " ", "-")+".golden")
		if *updateCheckText {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, want)
		}
	}
}
