package pbsched

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/pbs"
)

// smallCluster builds a cluster from vnode and job JSON fragments (the
// members of "nodes" and "Jobs"), with one started execution queue workq.
func smallCluster(t *testing.T, nodes, jobs string) *cluster {
	t.Helper()
	ns, err := pbs.ParseNodes([]byte(`{"timestamp":1700000000,"nodes":{` + nodes + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	js, err := pbs.ParseJobs([]byte(`{"timestamp":1700000000,"Jobs":{`+jobs+`}}`), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	qs, _ := pbs.ParseQueues([]byte(`{"Queue":{"workq":{"queue_type":"Execution","started":"True"}}}`))
	c, err := buildCluster(&State{Jobs: js, Nodes: ns, Queues: qs, Now: 1700000000, Digest: "x"},
		&Scope{Levels: []string{"tier0", "tier1"}, Period: 60})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// vnodes writes n free vnodes with the given sharing and resources.
func vnodes(n int, sharing, res string) string {
	var parts []string
	for i := range n {
		s := ""
		if sharing != "" {
			s = `,"sharing":"` + sharing + `"`
		}
		parts = append(parts, fmt.Sprintf(`"v%d":{"state":"free"%s,"resources_available":{"ncpus":64,"mem":"256gb"%s}}`, i, s, res))
	}
	return strings.Join(parts, ",")
}

func queued(id, sel, place string) string {
	return fmt.Sprintf(`"%s":{"job_state":"Q","queue":"workq","Resource_List":{"select":"%s","place":"%s","walltime":"01:00:00"}}`, id, sel, place)
}

// TestPBSWholeNodeRule: the documented rule that sends a job to the
// window solve or to the first fit.
func TestPBSWholeNodeRule(t *testing.T) {
	cases := []struct {
		name, sharing, res, sel, place string
		whole                          bool
		why                            string
	}{
		{"excl", "", "", "2:ncpus=8", "scatter:excl", true, "place=excl"},
		{"exclhost", "", "", "2:ncpus=8", "exclhost", true, "place=exclhost"},
		{"forced by sharing", "force_exclhost", "", "2:ncpus=8", "free", true, "the vnodes' sharing"},
		{"default_excl", "default_excl", "", "2:ncpus=8", "free", true, "the vnodes' sharing"},
		{"default_excl but shared", "default_excl", "", "2:ncpus=8", "free:shared", false, "chunks share vnodes"},
		{"ignore_excl", "ignore_excl", "", "2:ncpus=8", "excl", false, "chunks share vnodes"},
		{"all the CPUs", "", "", "3:ncpus=64", "scatter", true, "every chunk takes all the CPUs"},
		{"part of the CPUs", "", "", "3:ncpus=32", "scatter", false, "chunks share vnodes"},
		{"packed", "", "", "2:ncpus=64", "pack:excl", false, "place=pack"},
		{"one packed chunk", "", "", "1:ncpus=64", "pack", true, "every chunk takes all the CPUs"},
		{"too much memory for some", "", "", "2:ncpus=64:mem=300gb", "excl", false, "not every idle vnode will do"},
		{"GPUs nobody lacks", "", `,"ngpus":4`, "2:ncpus=8:ngpus=4", "excl", true, "place=excl"},
	}
	for _, c := range cases {
		cl := smallCluster(t, vnodes(4, c.sharing, c.res), queued("1.s", c.sel, c.place))
		cand := cl.cands[0]
		if cand.whole != c.whole || !strings.Contains(cand.path, c.why) {
			t.Errorf("%s: whole %v (%s), want %v (%s)", c.name, cand.whole, cand.path, c.whole, c.why)
		}
	}
	// GPUs on only some idle vnodes: the job must go where they are.
	mixed := vnodes(2, "", "") + "," + strings.ReplaceAll(vnodes(2, "", `,"ngpus":4`), `"v`, `"g`)
	cl := smallCluster(t, mixed, queued("1.s", "2:ncpus=8:ngpus=2", "excl"))
	if cl.cands[0].whole || !strings.Contains(cl.cands[0].path, "ngpus=2 wanted, 0 available") {
		t.Errorf("mixed GPUs: %v %s", cl.cands[0].whole, cl.cands[0].path)
	}
	p, err := plan(context.Background(), cl, testPlan())
	if err != nil {
		t.Fatal(err)
	}
	// place=excl with the free arrangement: both chunks fit the first GPU
	// vnode, which the job then holds.
	if len(p.Starts) != 1 || p.Starts[0].ExecVnode() != "(g0:ncpus=8:ngpus=2)+(g0:ncpus=8:ngpus=2)" {
		t.Errorf("mixed GPUs placed %v", describeStarts(p.Starts))
	}
}

// TestPBSPartialPlacement: the first fit fills partly used vnodes first,
// honours scatter, pack and exclusivity, and keeps idle vnodes for an
// earlier whole-node job.
func TestPBSPartialPlacement(t *testing.T) {
	used := `"u0":{"state":"free","jobs":["9.s/0"],"resources_available":{"ncpus":64,"mem":"256gb"},"resources_assigned":{"ncpus":48,"mem":"0kb"}}`
	run := `"9.s":{"job_state":"R","queue":"workq","exec_vnode":"(u0:ncpus=48)","Resource_List":{"select":"1:ncpus=48","walltime":"02:00:00"}}`
	for _, c := range []struct {
		name, sel, place, want string
	}{
		{"fills the partly used vnode", "2:ncpus=8", "free", "(u0:ncpus=8)+(u0:ncpus=8)"},
		{"spills to an idle vnode", "3:ncpus=8", "free", "(u0:ncpus=8)+(u0:ncpus=8)+(v0:ncpus=8)"},
		{"scatter", "2:ncpus=8", "scatter", "(u0:ncpus=8)+(v0:ncpus=8)"},
		{"pack", "2:ncpus=16", "pack", "(v0:ncpus=16)+(v0:ncpus=16)"},
		{"exclusive skips the used vnode", "1:ncpus=8:mem=1gb", "excl", "(v0:mem=1gb:ncpus=8)"},
	} {
		cl := smallCluster(t, used+","+vnodes(2, "", ""), run+","+queued("1.s", c.sel, c.place))
		p, err := plan(context.Background(), cl, testPlan())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(p.Starts) != 1 || p.Starts[0].ExecVnode() != c.want {
			t.Errorf("%s: %+v, want %s", c.name, p.Starts, c.want)
			continue
		}
		if err := Check(cl.st, cl.scope, p); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A whole-node job ahead holds both idle vnodes: the partial-node job
	// behind it may only use the partly used one, and waits when that is
	// not enough.
	jobs := run + "," + queued("1.s", "2:ncpus=64", "excl") + "," + queued("2.s", "2:ncpus=10", "free")
	jobs = strings.Replace(jobs, `"1.s":{"job_state":"Q",`, `"1.s":{"job_state":"Q","eligible_time":"01:00:00",`, 1)
	cl := smallCluster(t, used+","+vnodes(2, "", ""), jobs)
	p, err := plan(context.Background(), cl, testPlan())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Starts) != 1 || p.Starts[0].Job != "1.s" || len(p.Deferred) != 1 || !strings.Contains(p.Deferred[0].Reason, "held for higher-priority whole-node jobs") {
		t.Errorf("starts %+v, deferred %+v", p.Starts, p.Deferred)
	}
}

// testPlan is the planning of a cycle as the command sets it up: the
// catalogue's presets, built.
func testPlan() Options {
	return Options{TimeLimit: time.Second, Solver: catalog.DefaultWindow(), Fallbacks: catalog.WindowFallbacks(), Schedulers: catalog.PartialSchedulers()}
}

// TestPBSNWP: waiting periods come from eligible_time when PBS keeps it,
// else from the time since the job became eligible (etime), over the
// period.
func TestPBSNWP(t *testing.T) {
	jobs := `"1.s":{"job_state":"Q","queue":"workq","eligible_time":"00:10:30","etime":"Tue Nov 14 20:00:00 2023","Resource_List":{"select":"1:ncpus=1"}},` +
		`"2.s":{"job_state":"Q","queue":"workq","etime":"Tue Nov 14 21:13:20 2023","qtime":"Tue Nov 14 21:00:00 2023","Resource_List":{"select":"1:ncpus=1"}},` +
		`"3.s":{"job_state":"Q","queue":"workq","Resource_List":{"select":"1:ncpus=1"}}`
	cl := smallCluster(t, vnodes(1, "", ""), jobs)
	// now = 22:13:20; period 60 s.
	for i, want := range []int{10, 60, 0} {
		if got := cl.cands[i].nwp; got != want {
			t.Errorf("job %d: nwp %d, want %d", i+1, got, want)
		}
	}
	if cl.cands[2].walltime != defaultWalltime || cl.cands[2].submit != 1700000000 {
		t.Errorf("defaults: walltime %d, submit %d", cl.cands[2].walltime, cl.cands[2].submit)
	}
}

func TestPBSExecVnodeAndQuoting(t *testing.T) {
	chunks := []VChunk{
		{Vnode: "n1", Amounts: model.Resources{"ncpus": 16, "mem": 64 << 30, "mpiprocs": 16}},
		{Vnode: "host[1]", Amounts: model.Resources{"mem": 1536 << 20}, Labels: map[string]string{"arch": "linux"}},
		{Vnode: "n3"},
	}
	want := "(n1:mem=64gb:mpiprocs=16:ncpus=16)+(host[1]:mem=1536mb:arch=linux)+(n3)"
	if got := execVnode(chunks); got != want {
		t.Errorf("execVnode = %q, want %q", got, want)
	}
	// What optsched writes, PBS's format reads back.
	back, err := pbs.ParseExecVnode(want)
	if err != nil || back[0][0].Amounts["mem"] != 64<<30 || back[1][0].Vnode != "host[1]" {
		t.Errorf("round trip: %v %v", back, err)
	}
	for in, out := range map[string]string{
		"123.pbs01": "123.pbs01", want: `"` + want + `"`, "/opt/pbs/bin/qrun": "/opt/pbs/bin/qrun",
		"a b": "'a b'", "it's": `'it'\''s'`, "": "''", "$(rm)": "'$(rm)'",
	} {
		if got := shellQuote(in); got != out {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, out)
		}
	}
	for v, want := range map[int64]string{0: "0b", 1023: "1023b", 1024: "1kb", 3 << 30: "3gb", 5 << 40: "5tb"} {
		if got := fmtAmount("mem", v); got != want {
			t.Errorf("fmtAmount(%d) = %s, want %s", v, got, want)
		}
	}
}

func describeStarts(ss []*Start) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Job+" "+s.ExecVnode())
	}
	return out
}

// TestPBSUnofferedResourceNotChecked: a resource no vnode lists (vmem on
// most systems) is not a vnode matter: a job asking for it is placed, on
// every path, and passes the plan check.
func TestPBSUnofferedResourceNotChecked(t *testing.T) {
	for _, partial := range []string{PartialCP, PartialFirstFit} {
		for _, sel := range []string{"1:ncpus=4:vmem=2gb", "2:ncpus=64:vmem=8gb"} {
			place := "free"
			if strings.Contains(sel, "ncpus=64") {
				place = "excl"
			}
			cl := smallCluster(t, vnodes(2, "", ""), queued("1.s", sel, place))
			opt := testPlan()
			opt.Partial = partial
			p, err := plan(context.Background(), cl, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Starts) != 1 {
				t.Errorf("%s %s: starts %+v, deferred %+v", partial, sel, p.Starts, p.Deferred)
				continue
			}
			if err := Check(cl.st, cl.scope, p); err != nil {
				t.Errorf("%s %s: %v", partial, sel, err)
			}
		}
	}
}

// TestPBSExecVnodeCountsWhenPbsnodesLags: pbsnodes taken before a job
// started shows its vnode free with nothing assigned, while qstat already
// lists the job's exec_vnode there. What exec_vnode names counts as used
// on every path, and the plan check rejects a plan that ignores it.
func TestPBSExecVnodeCountsWhenPbsnodesLags(t *testing.T) {
	// u0 looks empty in pbsnodes, but 9.s runs there with 60 of its 64 CPUs.
	lagging := `"u0":{"state":"free","resources_available":{"ncpus":64,"mem":"256gb"},"resources_assigned":{}}`
	run := `"9.s":{"job_state":"R","queue":"workq","exec_vnode":"(u0:ncpus=60:mem=8gb)","Resource_List":{"select":"1:ncpus=60:mem=8gb","walltime":"02:00:00"}}`
	for _, partial := range []string{PartialCP, PartialFirstFit} {
		cl := smallCluster(t, lagging+","+vnodes(1, "", ""), run+","+queued("1.s", "1:ncpus=8", "free")+","+queued("2.s", "1:ncpus=2", "free"))
		opt := testPlan()
		opt.Partial = partial
		p, err := plan(context.Background(), cl, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(cl.st, cl.scope, p); err != nil {
			t.Errorf("%s: %v", partial, err)
		}
		onU0 := 0
		for _, s := range p.Starts {
			for _, ch := range s.Chunks {
				if ch.Vnode == "u0" {
					onU0 += int(ch.Amounts["ncpus"])
				}
			}
		}
		if onU0 > 4 {
			t.Errorf("%s: %d CPUs planned on u0, where 60 of 64 are in use: %v", partial, onU0, describeStarts(p.Starts))
		}
		// The independent check catches a plan that oversubscribes u0.
		bad := *p
		bad.Starts = []*Start{{Job: "1.s", Queue: "workq", Path: PathPartial, Chunks: []VChunk{{Vnode: "u0", Amounts: map[string]int64{"ncpus": 8}}}}}
		if err := Check(cl.st, cl.scope, &bad); err == nil || !strings.Contains(err.Error(), "u0") {
			t.Errorf("%s: Check accepted 8 CPUs on u0: %v", partial, err)
		}
	}
}

// multiHost writes two multi-vnode hosts, h0 and h1, of two 8-CPU vnodes
// each (h0[0], h0[1], h1[0], h1[1]) and their natural vnodes (ncpus=0).
func multiHost(busy string) string {
	var parts []string
	for h := range 2 {
		parts = append(parts, fmt.Sprintf(`"h%d":{"state":"free","resources_available":{"ncpus":0,"host":"h%d","vnode":"h%d"}}`, h, h, h))
		for i := range 2 {
			name := fmt.Sprintf("h%d[%d]", h, i)
			extra := `"resources_assigned":{}`
			if name == busy {
				extra = `"jobs":["9.s/0"],"resources_assigned":{"ncpus":1}`
			}
			parts = append(parts, fmt.Sprintf(`"%s":{"state":"free",%s,"resources_available":{"ncpus":8,"mem":"16gb","host":"h%d","vnode":"%s"}}`, name, extra, h, name))
		}
	}
	return strings.Join(parts, ",")
}

// TestPBSMultiVnodeHosts: on hosts with several vnodes, place=scatter
// means one chunk per host and exclhost the whole host, as in PBS, on
// every path; the plan check holds the planner to it.
func TestPBSMultiVnodeHosts(t *testing.T) {
	hostOf := func(v string) string { return v[:2] }
	for _, partial := range []string{PartialCP, PartialFirstFit} {
		opt := testPlan()
		opt.Partial = partial
		run := func(nodes, jobs string) (*cluster, *Plan) {
			cl := smallCluster(t, nodes, jobs)
			p, err := plan(context.Background(), cl, opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(cl.st, cl.scope, p); err != nil {
				t.Errorf("%s: %v", partial, err)
			}
			return cl, p
		}
		// scatter: two chunks on two hosts; three chunks never fit.
		_, p := run(multiHost(""), queued("1.s", "2:ncpus=1", "scatter")+","+queued("2.s", "3:ncpus=1", "scatter"))
		if len(p.Starts) != 1 || p.Starts[0].Job != "1.s" || hostOf(p.Starts[0].Chunks[0].Vnode) == hostOf(p.Starts[0].Chunks[1].Vnode) {
			t.Errorf("%s scatter: %v", partial, describeStarts(p.Starts))
		}
		if len(p.Deferred) != 1 || p.Deferred[0].Job != "2.s" || !strings.Contains(p.Deferred[0].Reason, "never") {
			t.Errorf("%s scatter over 3 hosts: deferred %+v", partial, p.Deferred)
		}
		// pack is about hosts: two 6-CPU chunks on one host's two 8-CPU
		// vnodes.
		if _, p := run(multiHost(""), queued("1.s", "2:ncpus=6", "pack")); len(p.Starts) != 1 ||
			hostOf(p.Starts[0].Chunks[0].Vnode) != hostOf(p.Starts[0].Chunks[1].Vnode) || p.Starts[0].Chunks[0].Vnode == p.Starts[0].Chunks[1].Vnode {
			t.Errorf("%s pack: %v %+v", partial, describeStarts(p.Starts), p.Deferred)
		}
		// vscatter is about vnodes: three chunks fit.
		if _, p := run(multiHost(""), queued("1.s", "3:ncpus=1", "vscatter")); len(p.Starts) != 1 {
			t.Errorf("%s vscatter: %v %+v", partial, describeStarts(p.Starts), p.Deferred)
		}
		// exclhost takes a whole host; the job behind gets the other host
		// only, and with both taken the third waits.
		_, p = run(multiHost(""), queued("1.s", "1:ncpus=1", "exclhost")+","+queued("2.s", "1:ncpus=1", "exclhost")+","+queued("3.s", "1:ncpus=1", "free"))
		hosts := map[string]string{}
		for _, s := range p.Starts {
			for _, c := range s.Chunks {
				if other, ok := hosts[hostOf(c.Vnode)]; ok && other != s.Job {
					t.Errorf("%s exclhost: %s and %s on host %s", partial, other, s.Job, hostOf(c.Vnode))
				}
				hosts[hostOf(c.Vnode)] = s.Job
			}
		}
		if len(p.Starts) != 2 {
			t.Errorf("%s exclhost: %v, deferred %+v", partial, describeStarts(p.Starts), p.Deferred)
		}
		// A host with a job on one vnode is not free for exclhost; a
		// running exclhost job holds its host's other vnode.
		_, p = run(multiHost("h0[0]"), `"9.s":{"job_state":"R","queue":"workq","exec_vnode":"(h0[0]:ncpus=1)","Resource_List":{"select":"1:ncpus=1","place":"exclhost","walltime":"01:00:00"}}`+","+
			queued("1.s", "1:ncpus=1", "exclhost")+","+queued("2.s", "1:ncpus=1", "free")+","+queued("3.s", "1:ncpus=1", "free"))
		for _, s := range p.Starts {
			for _, c := range s.Chunks {
				if hostOf(c.Vnode) == "h0" {
					t.Errorf("%s: job %s on %s, a host held by exclhost job 9.s", partial, s.Job, c.Vnode)
				}
			}
		}
		if len(p.Starts) != 1 || p.Starts[0].Job != "1.s" {
			t.Errorf("%s running exclhost: %v, deferred %+v", partial, describeStarts(p.Starts), p.Deferred)
		}
	}
	// The check catches what the planner must not do.
	cl := smallCluster(t, multiHost(""), queued("1.s", "2:ncpus=1", "scatter")+","+queued("2.s", "1:ncpus=1", "exclhost")+","+queued("3.s", "1:ncpus=1", "free"))
	for name, starts := range map[string][]*Start{
		"scatter on one host": {{Job: "1.s", Queue: "workq", Path: PathPartial, Chunks: []VChunk{{Vnode: "h0[0]", Amounts: model.Resources{"ncpus": 1}}, {Vnode: "h0[1]", Amounts: model.Resources{"ncpus": 1}}}}},
		"beside exclhost": {{Job: "2.s", Queue: "workq", Path: PathPartial, Chunks: []VChunk{{Vnode: "h1[0]", Amounts: model.Resources{"ncpus": 1}}}},
			{Job: "3.s", Queue: "workq", Path: PathPartial, Chunks: []VChunk{{Vnode: "h1[1]", Amounts: model.Resources{"ncpus": 1}}}}},
	} {
		if err := Check(cl.st, cl.scope, &Plan{Starts: starts}); err == nil {
			t.Errorf("Check accepted %s", name)
		}
	}
}

// TestPBSPlaceGroup: place=group=tier1 puts every chunk on vnodes with one
// tier1 value, trying the groups in turn, and the check holds to it.
func TestPBSPlaceGroup(t *testing.T) {
	var nodes []string
	for i := range 4 {
		// g0 has v0, v1 (v0 partly used); g1 has v2, v3.
		extra := ""
		if i == 0 {
			extra = `,"resources_assigned":{"ncpus":60}`
		}
		nodes = append(nodes, fmt.Sprintf(`"v%d":{"state":"free","resources_available":{"ncpus":64,"tier0":"t0","tier1":"g%d"}%s}`, i, i/2, extra))
	}
	cl := smallCluster(t, strings.Join(nodes, ","), queued("1.s", "2:ncpus=40", "group=tier1")+","+queued("2.s", "3:ncpus=40", "group=tier1")+","+queued("3.s", "2:ncpus=64", "excl:group=tier1"))
	p, err := plan(context.Background(), cl, testPlan())
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(cl.st, cl.scope, p); err != nil {
		t.Error(err)
	}
	if len(p.Starts) != 1 || p.Starts[0].ExecVnode() != "(v2:ncpus=40)+(v3:ncpus=40)" {
		t.Errorf("starts %v, deferred %+v", describeStarts(p.Starts), p.Deferred)
	}
	// 3.s (two whole vnodes of one group; fewer chunks, so before 2.s)
	// takes the first fit, not the window, and does not fit now: 2.s
	// waits behind it.
	if len(p.Deferred) != 2 || p.Deferred[0].Job != "3.s" || !strings.Contains(p.Deferred[0].Reason, "group=tier1") || cl.cands[2].whole {
		t.Errorf("deferred %+v", p.Deferred)
	}
	bad := &Plan{Starts: []*Start{{Job: "1.s", Queue: "workq", Path: PathPartial,
		Chunks: []VChunk{{Vnode: "v1", Amounts: model.Resources{"ncpus": 40}}, {Vnode: "v2", Amounts: model.Resources{"ncpus": 40}}}}}}
	if err := Check(cl.st, cl.scope, bad); err == nil || !strings.Contains(err.Error(), "group=tier1") {
		t.Errorf("Check accepted chunks in two groups: %v", err)
	}
}
