package slurmsched

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/sched/schedtest"
)

var updateCheckText = flag.Bool("update-check-text", false, "rewrite testdata/check-errors/*.golden and testdata/apply-texts.golden")

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
		return &st.Nodes[slices.IndexFunc(st.Nodes, func(n Node) bool { return n.Name == name })]
	}
	job := func(st *State, id int64) *Job {
		return &st.Jobs[slices.IndexFunc(st.Jobs, func(j Job) bool { return j.ID == id })]
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
		schedtest.Golden(t, filepath.Join("testdata", "check-errors", strings.ReplaceAll(c.name, " ", "-")+".golden"), b.String(), *updateCheckText)
	}
}
