package pbsched

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
)

// singlesCluster: 16 vnodes in quads (tier1) of pairs (tier0). Job R.s
// runs on v5, v6, v7 (quad 1 has one idle vnode, v4) and on v8, v9
// (quad 2 has the pair v10, v11 idle); quads 0 and 3 are empty. Queued:
// the single-vnode jobs A, B, C, D (excl) and the 4-vnode job Q.
func singlesCluster(t *testing.T) *cluster {
	busy := map[int]bool{5: true, 6: true, 7: true, 8: true, 9: true}
	var nodes []string
	for i := range 16 {
		st, jobs, asg := "free", "", ""
		if busy[i] {
			st, jobs, asg = "job-exclusive", `,"jobs":["R.s/0"]`, `,"resources_assigned":{"ncpus":64}`
		}
		nodes = append(nodes, fmt.Sprintf(`"v%d":{"state":"%s"%s,"resources_available":{"ncpus":64,"mem":"256gb","tier0":"t0_%d","tier1":"t1_%d"}%s}`, i, st, jobs, i/2, i/4, asg))
	}
	running := `"R.s":{"job_state":"R","queue":"workq","stime":"Tue Nov 14 22:13:20 2023","exec_vnode":"(v5:ncpus=64)+(v6:ncpus=64)+(v7:ncpus=64)+(v8:ncpus=64)+(v9:ncpus=64)","Resource_List":{"select":"5:ncpus=64","place":"excl","walltime":"01:00:00"}}`
	jobs := []string{running}
	for _, id := range []string{"A.s", "B.s", "C.s", "D.s"} {
		jobs = append(jobs, queued(id, "1:ncpus=64", "excl"))
	}
	jobs = append(jobs, queued("Q.s", "4:ncpus=64", "excl"))
	return smallCluster(t, strings.Join(nodes, ","), strings.Join(jobs, ","))
}

// TestPBSBestFitSingles: the single-vnode jobs fill the partly used
// switches first — v4 (the last idle vnode of quad 1), then the idle pair
// of quad 2 — and the 4-vnode job takes a whole quad, so that one empty
// quad is left whole; the plan passes Check and the window's CH cost is
// the solve's.
func TestPBSBestFitSingles(t *testing.T) {
	c := singlesCluster(t)
	p, err := plan(context.Background(), c, testPlan())
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c.st, c.scope, p); err != nil {
		t.Fatal(err)
	}
	on := map[string][]string{}
	var singles []string
	for _, s := range p.Starts {
		on[s.Job] = s.Nodes()
		if len(s.Nodes()) == 1 {
			singles = append(singles, s.Nodes()[0])
		}
	}
	if len(singles) != 4 || !slices.Contains(singles, "v4") || !slices.Contains(singles, "v10") || !slices.Contains(singles, "v11") {
		t.Errorf("single-vnode jobs on %v, want v4, v10, v11 and one more (starts %v)", singles, on)
	}
	q := on["Q.s"]
	slices.Sort(q)
	if !slices.Equal(q, []string{"v0", "v1", "v2", "v3"}) && !slices.Equal(q, []string{"v12", "v13", "v14", "v15"}) {
		t.Errorf("Q.s on %v, want a whole empty quad", q)
	}
	// The window's objective counts the multi-vnode jobs (a job on one
	// vnode has no communication): the moves leave it as solved.
	var total int64
	for _, s := range p.Starts {
		if len(s.Nodes()) > 1 {
			total += s.Cost
		}
	}
	if p.Solve.Objective == nil || *p.Solve.Objective != total {
		t.Errorf("window objective %d, the starts' CH costs sum to %d", *p.Solve.Objective, total)
	}
}

// TestBestFitSinglesMoves: single-vnode allocations put in an empty quad
// move to the partly used switches; the multi-vnode allocation stays.
func TestBestFitSinglesMoves(t *testing.T) {
	c := singlesCluster(t)
	p, err := plan(context.Background(), c, testPlan())
	if err != nil {
		t.Fatal(err)
	}
	w := p.Window
	id := func(name string) int {
		n, ok := w.Topology.Lookup(name)
		if !ok {
			t.Fatalf("no vnode %s", name)
		}
		return n
	}
	// Q.s keeps a quad; the singles go where a scattering placement
	// would put them: the other empty quad.
	var multi []int
	spare := []int{id("v12"), id("v13"), id("v14"), id("v15")}
	if slices.Contains(p.Allocs[0].Nodes, spare[0]) || slices.ContainsFunc(p.Allocs, func(a model.Allocation) bool { return len(a.Nodes) > 1 && slices.Contains(a.Nodes, spare[0]) }) {
		spare = []int{id("v0"), id("v1"), id("v2"), id("v3")}
	}
	k := 0
	for i := range p.Allocs {
		if len(p.Allocs[i].Nodes) == 1 {
			p.Allocs[i].Nodes = []int{spare[k]}
			k++
		} else {
			multi = slices.Clone(p.Allocs[i].Nodes)
		}
	}
	heuristics.BestFitSingles(w, p.Allocs)
	var got []string
	for _, a := range p.Allocs {
		if len(a.Nodes) == 1 {
			got = append(got, w.Topology.Name(a.Nodes[0]))
		} else if !slices.Equal(a.Nodes, multi) {
			t.Errorf("the multi-vnode allocation moved: %v, was %v", a.Nodes, multi)
		}
	}
	// v4, then the pair v10, v11, then one vnode of the spare quad.
	if len(got) != 4 || got[0] != "v4" || !slices.Contains(got[1:3], "v10") || !slices.Contains(got[1:3], "v11") {
		t.Errorf("singles moved to %v, want v4, v10, v11, then one more", got)
	}
	if err := model.Check(w, p.Allocs); err != nil {
		t.Errorf("after the moves: %v", err)
	}
}
