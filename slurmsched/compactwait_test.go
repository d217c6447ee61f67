package slurmsched

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/heuristics"
)

// leafState: 16 nodes of 4 CPUs in leaves of 4 (the test cluster's
// tree), now = 10000. Running, exclusive: job 91 on c02, c03 (leaf 0)
// until now + 30 s unless r1Done; 92 on c05–c07, 93 on c08–c10, 94 on
// c12–c14 until now + 10 min. Held: job 1, 4 nodes, 4 min, submitted
// waited seconds ago; behind it job 2 (1 node) and job 3 (2 nodes).
func leafState(waited int64, r1Done bool) *State {
	const now = 10000
	st := &State{Now: now}
	var topo strings.Builder
	for l := range 4 {
		fmt.Fprintf(&topo, "SwitchName=l%d Nodes=c[%02d-%02d]\n", l, 4*l, 4*l+3)
	}
	topo.WriteString("SwitchName=root Switches=l[0-3]\n")
	st.Topology = topo.String()
	busy := map[int]bool{5: true, 6: true, 7: true, 8: true, 9: true, 10: true, 12: true, 13: true, 14: true}
	if !r1Done {
		busy[2], busy[3] = true, true
	}
	for i := range 16 {
		n := Node{Name: fmt.Sprintf("c%02d", i), State: "idle", CPUs: 4, RealMemory: 8000, Partitions: []string{"p"}}
		if busy[i] {
			n.State, n.AllocCPUs, n.AllocMemory = "allocated", 4, 8000
		}
		st.Nodes = append(st.Nodes, n)
	}
	none := "none"
	min := func(m int64) *int64 { return &m }
	running := func(id int64, nodes string, k, end int64) Job {
		return Job{ID: id, State: "RUNNING", Partition: "p", NodeCount: k, CPUs: 4 * k, Shared: &none, Nodes: nodes, StartTime: now - 10, EndTime: end, TimeLimit: min(11)}
	}
	held := func(id, k, limit, submit int64) Job {
		return Job{ID: id, State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: k, CPUs: 4 * k, Shared: &none, SubmitTime: submit, TimeLimit: min(limit)}
	}
	st.Jobs = []Job{running(92, "c[05-07]", 3, now+600), running(93, "c[08-10]", 3, now+600), running(94, "c[12-14]", 3, now+600)}
	if !r1Done {
		st.Jobs = append(st.Jobs, running(91, "c[02-03]", 2, now+30))
	}
	st.Jobs = append(st.Jobs, held(1, 4, 4, now-waited), held(2, 1, 60, now), held(3, 2, 60, now))
	return st
}

func leafOptions(on bool) Options {
	o := Options{TimeLimit: time.Second, Solver: catalog.DefaultWindow()}
	if on {
		o.CompactWait = heuristics.CompactWait{Max: time.Hour, Fraction: 0.5} // job 1's bound: 120 s
	}
	return o
}

func leavesOf(nodes []string) map[int]bool {
	out := map[int]bool{}
	for _, n := range nodes {
		var i int
		fmt.Sscanf(n, "c%d", &i)
		out[i/4] = true
	}
	return out
}

// TestCompactWaitHoldsLeaf: job 1 (4 nodes) fits now only across leaves;
// leaf 0 empties in 30 s, within its bound: it waits, and the idle nodes
// of leaf 0 go to no other job; the plan passes Check, and a wrong one
// (a start on a busy node) is still rejected. Once job 91 has ended it
// starts on leaf 0; past its bound, or with the rule off, it is spread.
func TestCompactWaitHoldsLeaf(t *testing.T) {
	st := leafState(5, false)
	p, err := Decide(context.Background(), st, &Scope{}, leafOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(st, &Scope{}, p); err != nil {
		t.Fatal(err)
	}
	var started []string
	for _, s := range p.Starts {
		started = append(started, s.Job)
		if leavesOf(s.Nodes)[0] {
			t.Errorf("job %s starts on %v, in the leaf job 1 waits for", s.Job, s.Nodes)
		}
	}
	slices.Sort(started)
	if !slices.Equal(started, []string{"2", "3"}) {
		t.Fatalf("started %v, want 2 and 3 (deferred %+v)", started, p.Deferred)
	}
	if len(p.Deferred) != 1 || p.Deferred[0].Job != "1" || !strings.Contains(p.Deferred[0].Reason, "waiting up to 1m55s more") ||
		!strings.Contains(p.Deferred[0].Reason, "switch l0 (4 nodes) will have them empty in 30s") || !strings.Contains(p.Deferred[0].Reason, "its 2 idle node(s) there are held") {
		t.Errorf("deferred %+v", p.Deferred)
	}
	bad := &Plan{Starts: []*Start{{Job: "1", Nodes: []string{"c00", "c01", "c02", "c03"}}}}
	if err := Check(st, &Scope{}, bad); err == nil {
		t.Error("a start on job 91's nodes passed the check")
	}

	st = leafState(25, true)
	if p, err = Decide(context.Background(), st, &Scope{}, leafOptions(true)); err != nil {
		t.Fatal(err)
	}
	if err := Check(st, &Scope{}, p); err != nil {
		t.Fatal(err)
	}
	if s := startOf(p, "1"); s == nil || !slices.Equal(s.Nodes, []string{"c00", "c01", "c02", "c03"}) {
		t.Errorf("after job 91: job 1 %+v (deferred %+v)", s, p.Deferred)
	}

	for _, c := range []struct {
		on     bool
		waited int64
	}{{true, 120}, {false, 5}} {
		st = leafState(c.waited, false)
		if p, err = Decide(context.Background(), st, &Scope{}, leafOptions(c.on)); err != nil {
			t.Fatal(err)
		}
		if err := Check(st, &Scope{}, p); err != nil {
			t.Fatal(err)
		}
		if s := startOf(p, "1"); s == nil || len(s.Nodes) != 4 || len(leavesOf(s.Nodes)) < 2 {
			t.Errorf("rule %v, waited %d s: job 1 %+v (deferred %+v)", c.on, c.waited, s, p.Deferred)
		}
	}
}

func startOf(p *Plan, job string) *Start {
	for _, s := range p.Starts {
		if s.Job == job {
			return s
		}
	}
	return nil
}

// TestCompactWaitRandom: on random clusters of 16 nodes in leaves of 4
// with running jobs of random ends and random held jobs, every plan made
// with the rule on passes Check, and no start uses a node of the leaf a
// job waits for (every job here takes whole nodes: the window, which
// leaves the held nodes alone, places them all).
func TestCompactWaitRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 37))
	waits, manyWaits := 0, 0
	for iter := range 300 {
		const now = 10000
		st := randomLeafCluster(r, now, leafClusterShape{busyOf: 5, downOf: 3, jobs: 8, nodes: 5, sharedOf: 5})
		sc := &Scope{}
		opt := leafOptions(true)
		opt.CompactWait.Fraction = 1
		switch iter % 3 {
		case 1:
			opt.CompactWait.Elapsed = 1
		case 2:
			opt.CompactWait.Elapsed, opt.CompactWait.MinNodes, opt.CompactWait.SwitchNodes = 2, 2, 4
		}
		// Every other iteration holds back every job the rule would
		// (--compact-wait-many).
		opt.CompactWait.Many = iter%2 == 1
		p, err := Decide(context.Background(), st, sc, opt)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if err := Check(st, sc, p); err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		cycleWaits := 0
		for _, d := range p.Deferred {
			_, after, ok := strings.Cut(d.Reason, "switch l")
			if !ok || !strings.HasPrefix(d.Reason, "waiting up to") {
				continue
			}
			waits++
			if cycleWaits++; cycleWaits == 2 {
				if !opt.CompactWait.Many {
					t.Fatalf("iteration %d: two jobs wait for a leaf without Many: %+v", iter, p.Deferred)
				}
				manyWaits++
			}
			leaf := int(after[0] - '0')
			for _, s := range p.Starts {
				if leavesOf(s.Nodes)[leaf] {
					t.Fatalf("iteration %d: job %s waits for leaf %d, job %s starts on %v", iter, d.Job, leaf, s.Job, s.Nodes)
				}
			}
		}
	}
	if waits == 0 || manyWaits == 0 {
		t.Fatalf("%d jobs waited for a leaf in 300 random cycles, %d cycles with two or more: the test exercises too little", waits, manyWaits)
	}
}

// TestCompactWaitElapsed: job 1's bound is 0.1 × 4 min = 24 s since its
// submission 5 s ago; job 91's time limit ends in 30 s, past it, so by
// time limits job 1 is spread. Every running job has run 10 s: with
// Elapsed 1 each is predicted to end in 10 s, within the bound, and job
// 1 waits for leaf 0; Check accepts both plans.
func TestCompactWaitElapsed(t *testing.T) {
	for _, el := range []float64{0, 1} {
		st := leafState(5, false)
		o := leafOptions(false)
		o.CompactWait = heuristics.CompactWait{Max: time.Hour, Fraction: 0.1, Elapsed: el}
		p, err := Decide(context.Background(), st, &Scope{}, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(st, &Scope{}, p); err != nil {
			t.Fatalf("elapsed %g: %v", el, err)
		}
		s := startOf(p, "1")
		if el == 0 && (s == nil || len(leavesOf(s.Nodes)) < 2) {
			t.Errorf("elapsed 0: job 1 %+v (deferred %+v)", s, p.Deferred)
		}
		if el > 0 && (s != nil || len(p.Deferred) != 1 || !strings.Contains(p.Deferred[0].Reason, "switch l0 (4 nodes) will have them empty in 10s")) {
			t.Errorf("elapsed %g: job 1 %+v (deferred %+v)", el, s, p.Deferred)
		}
	}
}

// TestCompactWaitMany: job 1 (4 nodes) waits for leaf 0 and holds c00,
// c01. Job 3 (2 nodes, MinNodes 2) then fits now only across leaves (c04,
// c11, c15 are idle, one a leaf): without Many it is spread; with Many it
// waits for a leaf too and holds that leaf's idle node, so job 2 (1
// node) starts on neither c00, c01 nor job 3's. Check accepts both plans.
func TestCompactWaitMany(t *testing.T) {
	for _, many := range []bool{false, true} {
		st := leafState(5, false)
		opt := leafOptions(true)
		opt.CompactWait.MinNodes, opt.CompactWait.Many = 2, many
		sc := &Scope{}
		p, err := Decide(context.Background(), st, sc, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(st, sc, p); err != nil {
			t.Fatalf("many %v: %v", many, err)
		}
		reasons := map[string]string{}
		for _, d := range p.Deferred {
			reasons[d.Job] = d.Reason
		}
		starts := map[string][]string{}
		for _, s := range p.Starts {
			starts[s.Job] = s.Nodes
		}
		if _, ok := starts["1"]; ok || !strings.Contains(reasons["1"], "switch l0") {
			t.Fatalf("many %v: job 1 %v (%q)", many, starts["1"], reasons["1"])
		}
		_, started3 := starts["3"]
		if many == started3 || many && !strings.HasPrefix(reasons["3"], "waiting up to") {
			t.Fatalf("many %v: job 3 on %v (%q)", many, starts["3"], reasons["3"])
		}
		two, ok := starts["2"]
		if !ok || len(two) != 1 {
			t.Fatalf("many %v: job 2 %v (%q)", many, two, reasons["2"])
		}
		held := []string{"c00", "c01"}
		if many {
			_, after, _ := strings.Cut(reasons["3"], "switch l")
			for i := range 4 {
				if n := fmt.Sprintf("c%02d", 4*int(after[0]-'0')+i); !slices.Contains([]string{"c02", "c03", "c05", "c06", "c07", "c08", "c09", "c10", "c12", "c13", "c14"}, n) {
					held = append(held, n)
				}
			}
		}
		if slices.Contains(held, two[0]) {
			t.Errorf("many %v: job 2 on %s, held for a waiting job (%v)", many, two[0], held)
		}
	}
}

// TestCompactWaitLeavesShape (--compact-wait-leaves): leafState with
// job 1 of 5 nodes. Idle: c00, c01, c04, c11, c15 (and c02, c03 once job
// 91 has ended). No leaf but the root holds 5 nodes, so without Leaves
// job 1 starts at once across leaves; with LeavesBest it waits for leaf
// 0 whole (job 91 ends in 30 s) plus 1 node of another, and its leaves'
// idle nodes go to no other job; once job 91 has ended it starts as 4 on
// leaf 0 + 1 (CH 3,600, the least for 5 nodes). Check accepts every
// plan.
func TestCompactWaitLeavesShape(t *testing.T) {
	for _, c := range []struct {
		leaves heuristics.LeafShape
		done   bool
	}{{heuristics.LeavesOff, false}, {heuristics.LeavesBest, false}, {heuristics.LeavesBest, true}} {
		st := leafState(5, c.done)
		for i := range st.Jobs {
			if st.Jobs[i].ID == 1 {
				st.Jobs[i].NodeCount, st.Jobs[i].CPUs = 5, 20
			}
		}
		opt := leafOptions(true)
		opt.CompactWait.Leaves, opt.CompactWait.Many = c.leaves, true
		sc := &Scope{}
		p, err := Decide(context.Background(), st, sc, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(st, sc, p); err != nil {
			t.Fatalf("%s: %v", c.leaves, err)
		}
		s := startOf(p, "1")
		switch {
		case c.leaves == heuristics.LeavesOff || c.done:
			if s == nil || len(s.Nodes) != 5 {
				t.Fatalf("%s, job 91 done %v: job 1 %+v (deferred %+v)", c.leaves, c.done, s, p.Deferred)
			}
			if c.done {
				per := map[int]int{}
				for _, n := range s.Nodes {
					var i int
					fmt.Sscanf(n, "c%d", &i)
					per[i/4]++
				}
				if per[0] != 4 || len(per) != 2 {
					t.Errorf("job 91 done: job 1 on %v, want leaf 0 whole and 1 more", s.Nodes)
				}
			}
		default:
			if s != nil || len(p.Deferred) == 0 || p.Deferred[0].Job != "1" || !strings.Contains(p.Deferred[0].Reason, "for its best shape on the leaves: its 5 nodes as 4 on l0 + 1 on l") {
				t.Fatalf("%s: job 1 %+v (deferred %+v)", c.leaves, s, p.Deferred)
			}
			for _, st := range p.Starts {
				if leavesOf(st.Nodes)[0] {
					t.Errorf("job %s starts on %v, in leaf 0, which job 1 waits for", st.Job, st.Nodes)
				}
			}
		}
	}
}

// TestCompactWaitLeavesRandom: random clusters as TestCompactWaitRandom
// with held jobs of up to 10 nodes and Leaves fewest or best: every plan
// passes Check, and no job starts on a leaf a job waits for.
func TestCompactWaitLeavesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 6))
	waits := 0
	for iter := range 300 {
		const now = 10000
		st := randomLeafCluster(r, now, leafClusterShape{busyOf: 6, downOf: 4, jobs: 6, nodes: 10, sharedOf: 6})
		sc := &Scope{}
		opt := leafOptions(true)
		opt.CompactWait = heuristics.CompactWait{Max: 10 * time.Minute, Fraction: 1000, PerWait: true, Many: iter%3 > 0,
			Leaves: heuristics.LeafShape(1 + iter%2), Elapsed: float64(iter % 2)}
		p, err := Decide(context.Background(), st, sc, opt)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if err := Check(st, sc, p); err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		for _, d := range p.Deferred {
			_, after, ok := strings.Cut(d.Reason, "shape on the leaves: its ")
			if !ok || !strings.HasPrefix(d.Reason, "waiting up to") {
				continue
			}
			waits++
			shape, _, _ := strings.Cut(after, " will be empty")
			for _, part := range strings.Split(shape, " on l")[1:] {
				leaf := int(part[0] - '0')
				for _, s := range p.Starts {
					if leavesOf(s.Nodes)[leaf] {
						t.Fatalf("iteration %d: job %s waits for leaf %d (%s), job %s starts on %v", iter, d.Job, leaf, d.Reason, s.Job, s.Nodes)
					}
				}
			}
		}
	}
	if waits < 20 {
		t.Fatalf("%d jobs waited for their leaves in 300 random cycles: the test exercises too little", waits)
	}
}

// leafClusterShape draws the random clusters of TestCompactWaitRandom and
// TestCompactWaitLeavesRandom: a node is busy when r.IntN(busyOf) < 2,
// down with odds 1/(busyOf × downOf); 1 + r.IntN(jobs) held jobs of
// 1 + r.IntN(nodes) nodes, whole-node unless r.IntN(sharedOf) is 0.
type leafClusterShape struct{ busyOf, downOf, jobs, nodes, sharedOf int }

// randomLeafCluster is a cluster of 16 nodes on 4 leaves of 4 under a
// root, with running one-node jobs and held jobs drawn as shape says.
func randomLeafCluster(r *rand.Rand, now int64, shape leafClusterShape) *State {
	st := &State{Now: now}
	var topo strings.Builder
	for l := range 4 {
		fmt.Fprintf(&topo, "SwitchName=l%d Nodes=c[%02d-%02d]\n", l, 4*l, 4*l+3)
	}
	topo.WriteString("SwitchName=root Switches=l[0-3]\n")
	st.Topology = topo.String()
	none := "none"
	limit := func(m int64) *int64 { return &m }
	for i := range 16 {
		n := Node{Name: fmt.Sprintf("c%02d", i), State: "idle", CPUs: 4, RealMemory: 8000, Partitions: []string{"p"}}
		switch r.IntN(shape.busyOf) {
		case 0, 1:
			n.State, n.AllocCPUs, n.AllocMemory = "allocated", 4, 8000
			st.Jobs = append(st.Jobs, Job{ID: int64(100 + i), State: "RUNNING", Partition: "p", NodeCount: 1, CPUs: 4, Shared: &none,
				Nodes: n.Name, StartTime: now - 10, EndTime: now + int64(r.IntN(300)), TimeLimit: limit(10)})
		case 2:
			if r.IntN(shape.downOf) == 0 {
				n.State = "down"
			}
		}
		st.Nodes = append(st.Nodes, n)
	}
	for k := range 1 + r.IntN(shape.jobs) {
		nodes := int64(1 + r.IntN(shape.nodes))
		j := Job{ID: int64(k + 1), State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: nodes, CPUs: 4 * nodes,
			SubmitTime: now - int64(r.IntN(200)), TimeLimit: limit(int64(1 + r.IntN(10)))}
		if r.IntN(shape.sharedOf) > 0 {
			j.Shared = &none
		}
		st.Jobs = append(st.Jobs, j)
	}
	return st
}
