package slurmsched

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/model/slurm"
)

// fixture reads the real Slurm 22.05 documents of testdata (16 nodes of
// 4 CPUs and 8000 MB; n03 draining, n09 drained, n11 down).
func fixture(t *testing.T) *State {
	t.Helper()
	read := func(name string) []byte {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	st := &State{Now: 1795722400}
	var err error
	if st.Jobs, err = ParseJobs(read("squeue.json")); err != nil {
		t.Fatal(err)
	}
	if st.Nodes, err = ParseNodes(read("sinfo.json")); err != nil {
		t.Fatal(err)
	}
	if st.Topology, err = TopologyConf(string(read("scontrol-show-topology.txt"))); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestParseFixtures(t *testing.T) {
	st := fixture(t)
	if len(st.Jobs) != 15 || len(st.Nodes) != 16 {
		t.Fatalf("%d jobs, %d nodes", len(st.Jobs), len(st.Nodes))
	}
	topo, err := slurm.ParseTopology(st.Topology)
	if err != nil {
		t.Fatalf("topology %q: %v", st.Topology, err)
	}
	if topo.NumNodes() != 16 || topo.Height() != 2 {
		t.Errorf("topology: %d nodes, height %d", topo.NumNodes(), topo.Height())
	}
	for _, bad := range []string{`{"jobs": 3}`, `{}`, `{"jobs":[{"job_id":0}]}`, `[`} {
		if _, err := ParseJobs([]byte(bad)); err == nil {
			t.Errorf("ParseJobs(%s) accepted", bad)
		}
	}
	for _, bad := range []string{`{"nodes":[{"name":"a"},{"name":"a"}]}`, `{"nodes":[{"cpus":4}]}`, `{}`} {
		if _, err := ParseNodes([]byte(bad)); err == nil {
			t.Errorf("ParseNodes(%s) accepted", bad)
		}
	}
	if got, _ := TopologyConf("Topology plugin not configured\n"); got != "" {
		t.Errorf("no switch: %q", got)
	}
}

// TestDecideFixture: on the fixture the plan passes Check, starts only
// owned held jobs, and uses no drained, draining or down node.
func TestDecideFixture(t *testing.T) {
	st := fixture(t)
	sc := &Scope{Partitions: []string{"batch"}}
	p, err := Decide(context.Background(), st, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(st, sc, p); err != nil {
		t.Fatalf("check: %v", err)
	}
	if len(p.Starts) == 0 {
		t.Fatalf("nothing started: %+v", p.Deferred)
	}
	accounted := map[string]bool{}
	for _, s := range p.Starts {
		accounted[s.Job] = true
		for _, n := range s.Nodes {
			if n == "n03" || n == "n09" || n == "n11" {
				t.Errorf("job %s on unusable node %s", s.Job, n)
			}
		}
	}
	for _, d := range p.Deferred {
		if accounted[d.Job] {
			t.Errorf("job %s both started and deferred", d.Job)
		}
		accounted[d.Job] = true
	}
	for _, task := range []string{"7_2", "7_3", "7_4"} {
		if !accounted[task] {
			t.Errorf("array task %s not in the plan", task)
		}
	}
	for _, j := range st.Jobs {
		if j.ArrayTaskString != "" {
			continue
		}
		if sc.Owned(&j) != accounted[j.IDString()] {
			t.Errorf("job %s (%s %s): owned %v, in the plan %v", j.IDString(), j.State, j.Reason, sc.Owned(&j), accounted[j.IDString()])
		}
	}
}

// TestCheckRejects: each broken plan is rejected, naming the rule.
func TestCheckRejects(t *testing.T) {
	st := fixture(t)
	sc := &Scope{Partitions: []string{"batch"}}
	for _, c := range []struct {
		name   string
		starts []*Start
		want   string
	}{
		{"not owned", []*Start{{Job: "11", Nodes: []string{"n12", "n13"}}}, "not held"},
		{"running", []*Start{{Job: "4", Nodes: []string{"n12", "n13"}}}, "not PENDING"},
		{"array", []*Start{{Job: "7", Nodes: []string{"n12"}}}, "array"},
		{"array task not pending", []*Start{{Job: "7_5", Nodes: []string{"n12"}}}, "not pending"},
		{"array task twice", []*Start{{Job: "7_3", Nodes: []string{"n12"}}, {Job: "7_3", Nodes: []string{"n13"}}}, "twice"},
		{"unknown job", []*Start{{Job: "99", Nodes: []string{"n12"}}}, "no such job"},
		{"twice", []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}, {Job: "15", Nodes: []string{"n14", "n15"}}}, "twice"},
		{"count", []*Start{{Job: "15", Nodes: []string{"n12"}}}, "1 node(s) for a job of 2"},
		{"drained", []*Start{{Job: "15", Nodes: []string{"n09", "n12"}}}, "n09 is idle+DRAIN"},
		{"down", []*Start{{Job: "15", Nodes: []string{"n11", "n12"}}}, "n11 is down"},
		{"unknown node", []*Start{{Job: "15", Nodes: []string{"n12", "n99"}}}, "no such node"},
		{"same node", []*Start{{Job: "15", Nodes: []string{"n12", "n12"}}}, "listed twice"},
		{"over cpus", []*Start{{Job: "13", Nodes: []string{"n04", "n12"}}}, "n04 would use 5 of its 4 CPUs"},
		{"over cpus together", []*Start{{Job: "13", Nodes: []string{"n12", "n13"}}, {Job: "15", Nodes: []string{"n12", "n16"}}}, "n12 would use 5 of its 4 CPUs"},
		{"node list", []*Start{{Job: "15", Nodes: []string{"n12", "n13"}, NodeList: "n[12-14]"}}, "node list"},
		{"partition scope", []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}}, "not optsched's"},
	} {
		scope := sc
		if c.name == "partition scope" {
			scope = &Scope{Partitions: []string{"other"}}
		}
		err := Check(st, scope, &Plan{Starts: c.starts})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Memory: 7000 MB used on n12 leave no room for 2000 MB more.
	stm := fixture(t)
	for i := range stm.Nodes {
		if stm.Nodes[i].Name == "n12" {
			stm.Nodes[i].State, stm.Nodes[i].AllocMemory, stm.Nodes[i].AllocCPUs = "mixed", 7000, 1
		}
	}
	if err := Check(stm, sc, &Plan{Starts: []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}}}); err == nil || !strings.Contains(err.Error(), "n12 would use 9000 of its 8000 MB") {
		t.Errorf("over memory: %v", err)
	}
	if err := Check(st, sc, &Plan{Starts: []*Start{{Job: "7_3", Nodes: []string{"n12"}}, {Job: "7_4", Nodes: []string{"n12"}}}}); err != nil {
		t.Errorf("two tasks of array 7: %v", err)
	}
	// An exclusive job needs nodes with nothing on them.
	st2 := fixture(t)
	for i := range st2.Jobs {
		if st2.Jobs[i].ID == 15 {
			none := "none"
			st2.Jobs[i].Shared = &none
		}
	}
	if err := Check(st2, sc, &Plan{Starts: []*Start{{Job: "15", Nodes: []string{"n05", "n12"}}}}); err == nil {
		t.Error("exclusive job on mixed node n05 accepted")
	}
	if err := Check(st2, sc, &Plan{Starts: []*Start{{Job: "15", Nodes: []string{"n13", "n12"}}}}); err != nil {
		t.Errorf("exclusive job on idle nodes: %v", err)
	}
}

func TestArrayTasks(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  []int64
	}{
		{"2-4", 100, []int64{2, 3, 4}}, {"1,3,7-8", 100, []int64{1, 3, 7, 8}}, {"1-9:4", 100, []int64{1, 5, 9}},
		{"5-7%1", 100, []int64{5, 6, 7}}, {"0-100000", 3, []int64{0, 1, 2}},
	} {
		got, err := ArrayTasks(c.in, c.limit)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ArrayTasks(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		for _, task := range c.want {
			if !inTaskString(c.in, fmt.Sprint(task)) {
				t.Errorf("inTaskString(%q, %d) = false", c.in, task)
			}
		}
	}
	if inTaskString("1-9:4", "2") || inTaskString("2-4", "5") {
		t.Error("inTaskString accepts a task not in the string")
	}
	for _, bad := range []string{"", "a", "4-2", "1-3:0", "-1"} {
		if _, err := ArrayTasks(bad, 10); err == nil {
			t.Errorf("ArrayTasks(%q) accepted", bad)
		}
	}
}

// TestRecheckDrops: a node drained between the reading and the act drops
// the start on it and keeps the others.
func TestRecheckDrops(t *testing.T) {
	st := fixture(t)
	sc := &Scope{}
	p := &Plan{Starts: []*Start{{Job: "15", Nodes: []string{"n12", "n13"}}, {Job: "10", Nodes: []string{"n14", "n15", "n16", "n10"}}}}
	if err := Check(st, sc, p); err != nil {
		t.Fatal(err)
	}
	for i := range st.Nodes {
		if st.Nodes[i].Name == "n13" {
			st.Nodes[i].Flags = []string{"DRAIN"}
		}
	}
	Recheck(st, sc, p)
	if len(p.Starts) != 1 || p.Starts[0].Job != "10" || len(p.Dropped) != 1 || p.Dropped[0].Job != "15" {
		t.Fatalf("starts %+v dropped %+v", p.Starts, p.Dropped)
	}
}

// fakeRunner records the commands and answers as a Slurm that applies
// the placement, except for the jobs in fail.
type fakeRunner struct {
	placed   map[string]string
	k        map[string]int
	released [][]string
	fail     map[string]bool
	misread  map[string]bool
}

func (f *fakeRunner) Place(ctx context.Context, job, nodes string, k int) error {
	if f.fail[job] {
		return errors.New("Invalid node name specified")
	}
	f.placed[job], f.k[job] = nodes, k
	return nil
}

func (f *fakeRunner) Show(ctx context.Context, job string) (map[string]string, error) {
	nodes := f.placed[job]
	if f.misread[job] {
		nodes = "n01"
	}
	return ParseShowJob(fmt.Sprintf("JobId=%s JobName=a b JobState=PENDING Reason=JobHeldUser ReqNodeList=%s ExcNodeList=(null) NumNodes=%d-%d", job, nodes, f.k[job], f.k[job])), nil
}

func (f *fakeRunner) Release(ctx context.Context, jobs []string) error {
	f.released = append(f.released, jobs)
	return nil
}

// fourStarts is a plan of four starts on n01 to n05.
func fourStarts() *Plan {
	return &Plan{Starts: []*Start{
		{Job: "1", Nodes: []string{"n01", "n02"}, NodeList: "n[01-02]"},
		{Job: "2", Nodes: []string{"n03"}, NodeList: "n03"},
		{Job: "3", Nodes: []string{"n04"}, NodeList: "n04"},
		{Job: "4", Nodes: []string{"n05"}, NodeList: "n05"},
	}}
}

func TestApply(t *testing.T) {
	mk := fourStarts
	f := &fakeRunner{placed: map[string]string{}, k: map[string]int{}, fail: map[string]bool{"2": true}, misread: map[string]bool{"3": true}}
	p := mk()
	o, err := Apply(context.Background(), p, f)
	if err == nil {
		t.Fatal("failures not reported")
	}
	if !reflect.DeepEqual(p, mk()) {
		t.Errorf("Apply changed the plan: %+v", p)
	}
	if len(f.released) != 1 || !slices.Equal(f.released[0], []string{"1", "4"}) {
		t.Fatalf("released %v, want one call for 1,4", f.released)
	}
	if len(o.Starts) != 4 || o.Starts[1].Job != "2" || o.Starts[0].Status != StatusReleased || !strings.Contains(o.Starts[1].Status, "placement failed") || !strings.Contains(o.Starts[2].Status, "read-back") || o.Released() != 2 {
		t.Errorf("outcome: %+v", o)
	}
	// An aborted context releases nothing.
	f = &fakeRunner{placed: map[string]string{}, k: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p = mk()
	if _, err := Apply(ctx, p, f); err == nil || len(f.released) != 0 || len(f.placed) != 0 {
		t.Fatalf("aborted apply: %v, placed %v, released %v", err, f.placed, f.released)
	}
}

// TestDecideRandom: on random clusters (nodes idle, partly used, drained,
// down; jobs shared and exclusive, of every size) every plan passes
// Check, and breaking a plan (one more CPU on a node that is full)
// fails it.
func TestDecideRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	states := []string{"idle", "idle", "mixed", "allocated", "down"}
	starts := 0
	for iter := range 200 {
		st := &State{Now: 1000}
		nn := 2 + r.IntN(20)
		leaf := 1 + r.IntN(4)
		var topo strings.Builder
		for i := range nn {
			cpus := int64(4 << r.IntN(2))
			n := Node{Name: fmt.Sprintf("c%02d", i), State: states[r.IntN(len(states))], CPUs: cpus, RealMemory: 1000 * cpus, Partitions: []string{"p"}}
			switch n.State {
			case "mixed":
				n.AllocCPUs = 1 + r.Int64N(cpus-1)
				n.AllocMemory = r.Int64N(n.RealMemory)
			case "allocated":
				n.AllocCPUs, n.AllocMemory = cpus, n.RealMemory
			}
			if r.IntN(8) == 0 {
				n.Flags = []string{"DRAIN"}
			}
			st.Nodes = append(st.Nodes, n)
			if i%leaf == 0 {
				fmt.Fprintf(&topo, "SwitchName=s%d Nodes=c%02d", i/leaf, i)
			} else {
				fmt.Fprintf(&topo, ",c%02d", i)
			}
			if i%leaf == leaf-1 || i == nn-1 {
				topo.WriteByte('\n')
			}
		}
		if r.IntN(2) == 0 {
			st.Topology = topo.String()
		}
		for k := range 1 + r.IntN(15) {
			nodes := int64(1 + r.IntN(3))
			j := Job{ID: int64(k + 1), State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: nodes,
				CPUs: nodes * int64(1+r.IntN(5)), SubmitTime: int64(r.IntN(100)), MinCPUsPerNode: 1}
			mem := int64(500 * (1 + r.IntN(4)))
			j.MemPerCPU = &mem
			if r.IntN(4) == 0 {
				none := "none"
				j.Shared = &none
			}
			st.Jobs = append(st.Jobs, j)
		}
		// Jobs optsched released that Slurm has not started: their nodes
		// are taken for the plan and for the check alike.
		inFlight := 0
		for k := range r.IntN(3) {
			n := st.Nodes[r.IntN(len(st.Nodes))]
			j := Job{ID: int64(100 + k), State: "PENDING", Reason: "None", Priority: 1 + r.Int64N(1000), Partition: "p", NodeCount: 1,
				CPUs: 1 + r.Int64N(4), MinCPUsPerNode: 1, AdminComment: PlacedMark, RequiredNodes: n.Name}
			if r.IntN(2) == 0 {
				none := "none"
				j.Shared = &none
			}
			st.Jobs = append(st.Jobs, j)
			inFlight++
		}
		sc := &Scope{}
		p, err := Decide(context.Background(), st, sc, Options{})
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if err := Check(st, sc, p); err != nil {
			t.Fatalf("iteration %d: plan fails the check: %v\nstate %+v\nplan %+v", iter, err, st, p)
		}
		if len(p.Starts)+len(p.Deferred) != len(st.Jobs)-inFlight {
			t.Fatalf("iteration %d: %d starts + %d deferred for %d jobs", iter, len(p.Starts), len(p.Deferred), len(st.Jobs)-inFlight)
		}
		starts += len(p.Starts)
		// Break the plan: a start on a full node.
		for i := range st.Nodes {
			if st.Nodes[i].State == "allocated" && len(st.Nodes[i].Flags) == 0 && len(p.Starts) > 0 {
				s := p.Starts[0]
				bad := &Start{Job: s.Job, Nodes: slices.Clone(s.Nodes)}
				bad.Nodes[0] = st.Nodes[i].Name
				if slices.Index(s.Nodes, st.Nodes[i].Name) < 0 {
					if err := Check(st, sc, &Plan{Starts: []*Start{bad}}); err == nil {
						t.Fatalf("iteration %d: start on allocated node %s accepted", iter, st.Nodes[i].Name)
					}
				}
				break
			}
		}
	}
	if starts == 0 {
		t.Fatal("no random plan started a job")
	}
}

// TestInFlightHoldsNodes: a job optsched released that Slurm has not
// started yet holds its nodes: a cycle places no other job on them, and
// Check refuses a plan that does (seen on the real cluster: five jobs
// released onto one node within 3 s, which Slurm then ran one after the
// other).
func TestInFlightHoldsNodes(t *testing.T) {
	st := &State{Now: 1000, Topology: "SwitchName=s0 Nodes=c00,c01\n"}
	for _, name := range []string{"c00", "c01"} {
		st.Nodes = append(st.Nodes, Node{Name: name, State: "idle", CPUs: 4, RealMemory: 4000, Partitions: []string{"p"}})
	}
	none := "none"
	released := Job{ID: 1, State: "PENDING", Reason: "None", Priority: 5, Partition: "p", NodeCount: 1, CPUs: 4,
		Shared: &none, AdminComment: PlacedMark, RequiredNodes: "c00"}
	held := func(id int64) Job {
		return Job{ID: id, State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: 1, CPUs: 1, Shared: &none, SubmitTime: id}
	}
	st.Jobs = []Job{released, held(2), held(3)}
	sc := &Scope{}
	p, err := Decide(context.Background(), st, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Starts) != 1 || p.Starts[0].Job != "2" || !slices.Equal(p.Starts[0].Nodes, []string{"c01"}) {
		t.Errorf("starts %+v, want job 2 on c01 only (c00 is job 1's)", p.Starts)
	}
	if err := Check(st, sc, p); err != nil {
		t.Errorf("the plan fails the check: %v", err)
	}
	bad := &Plan{Starts: []*Start{{Job: "3", Nodes: []string{"c00"}}}}
	if err := Check(st, sc, bad); err == nil {
		t.Error("a start on the node of a released job not yet started passed the check")
	}
	// Once Slurm runs it, sinfo counts it and it is no longer in flight.
	st.Jobs[0].State = "RUNNING"
	if err := Check(st, sc, bad); err != nil {
		t.Errorf("with job 1 running elsewhere in the records: %v", err)
	}
}

// TestStarveAfter: a wide job that has starved stops the small jobs behind
// it; before it starves, they start.
func TestStarveAfter(t *testing.T) {
	st := &State{Now: 10000}
	for i := range 4 {
		n := Node{Name: fmt.Sprintf("c%d", i), State: "idle", CPUs: 4, RealMemory: 8000, Partitions: []string{"p"}}
		if i == 0 {
			n.State, n.AllocCPUs, n.AllocMemory = "mixed", 2, 2000
		}
		st.Nodes = append(st.Nodes, n)
	}
	none := "none"
	st.Jobs = []Job{
		{ID: 1, State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: 4, CPUs: 4, Shared: &none, SubmitTime: 100},
		{ID: 2, State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: 1, CPUs: 1, SubmitTime: 200},
	}
	for _, c := range []struct {
		starve time.Duration
		starts int
	}{{0, 1}, {4 * time.Hour, 1}, {time.Minute, 0}} {
		p, err := Decide(context.Background(), st, &Scope{}, Options{StarveAfter: c.starve})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Starts) != c.starts {
			t.Errorf("--starve-after %v: %d starts, want %d (%+v)", c.starve, len(p.Starts), c.starts, p.Deferred)
		}
	}
}

// TestBestFitKeepsLeafWhole: 16 nodes in leaves of 4, two nodes of leaf 1
// busy. A 2-node whole-node job costs the same on any pair of one leaf;
// the window solve takes the first pair (c00, c01, an empty leaf), and
// the best-fit pass moves it to the free pair of the half-used leaf, so
// that leaves 0, 2 and 3 stay whole for 3- and 4-node jobs. The plan
// passes Check, and its objective is the job's cost.
func TestBestFitKeepsLeafWhole(t *testing.T) {
	st := &State{Now: 1000}
	var topo strings.Builder
	for l := range 4 {
		fmt.Fprintf(&topo, "SwitchName=l%d Nodes=c[%02d-%02d]\n", l, 4*l, 4*l+3)
	}
	topo.WriteString("SwitchName=root Switches=l[0-3]\n")
	st.Topology = topo.String()
	for i := range 16 {
		n := Node{Name: fmt.Sprintf("c%02d", i), State: "idle", CPUs: 4, RealMemory: 8000, Partitions: []string{"p"}}
		if i == 4 || i == 5 {
			n.State, n.AllocCPUs, n.AllocMemory = "allocated", 4, 8000
		}
		st.Nodes = append(st.Nodes, n)
	}
	none := "none"
	st.Jobs = []Job{{ID: 1, State: "PENDING", Reason: "JobHeldUser", Partition: "p", NodeCount: 2, CPUs: 8, Shared: &none, SubmitTime: 900}}
	opt := Options{TimeLimit: time.Second, Solver: catalog.DefaultWindow()}
	p, err := Decide(context.Background(), st, &Scope{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Starts) != 1 || !slices.Equal(p.Starts[0].Nodes, []string{"c06", "c07"}) {
		t.Fatalf("starts %+v (deferred %+v), want job 1 on c06, c07", p.Starts, p.Deferred)
	}
	if err := Check(st, &Scope{}, p); err != nil {
		t.Errorf("the plan fails the check: %v", err)
	}
}
