package windowjson_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
)

const minimalWindow = `{"time": 100, "topology": {"layout": {"pods": 2, "leaves_per_pod": 2, "nodes_per_leaf": 4}},
 "idle": "n[0-5,9]", "jobs": [{"id": "a", "nodes": 3, "walltime": 60}]}`

func TestParseWindowDefaults(t *testing.T) {
	w, err := windowjson.Parse([]byte(minimalWindow), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Topology.NumNodes() != 16 || !slices.Equal(w.Idle, []int{0, 1, 2, 3, 4, 5, 9}) {
		t.Errorf("topology %d nodes, idle %v", w.Topology.NumNodes(), w.Idle)
	}
	j := w.Jobs[0]
	if j.Queue != model.DefaultQueue || j.Submit != 100 || j.NWP != 0 || j.Select != nil || !j.Comm || j.Pattern != model.PatternRD {
		t.Errorf("job defaults: %+v", j)
	}
	if w.Cost != model.DefaultCostModel || w.Queues != nil || w.Running != nil || w.Resources != nil {
		t.Errorf("window defaults: cost %+v queues %v running %v resources %v", w.Cost, w.Queues, w.Running, w.Resources)
	}
	if w.ExpectedWait("anything") != 1 {
		t.Errorf("expected wait without queues = %d, want 1", w.ExpectedWait("anything"))
	}
}

func TestParseWindowFull(t *testing.T) {
	doc := `{"version": 1, "time": 50,
	  "topology": {"slurm": "SwitchName=s0 Nodes=tux[0-3]\nSwitchName=s1 Nodes=tux[4-7]\nSwitchName=top Switches=s[0-1]"},
	  "cost": {"model": "lan-paper", "hop_cost": 10},
	  "idle": ["tux5", "tux1", "tux2"],
	  "running": [{"id": 9, "nodes": "tux[3-4]", "end": 80, "select": "2:ncpus=4", "comm": true},
	              {"id": 10, "nodes": "tux6", "end": 90}],
	  "queues": {"q1": {"expected_wait": 600}},
	  "jobs": [{"id": "x.pbs", "nodes": 2, "walltime": "00:10:00", "submit": 20, "queue": "q1", "nwp": 2,
	            "select": "2:ncpus=8:ngpus=1:mem=4gb:arch=linux", "comm": false, "pattern": "binomial"},
	           {"id": "y", "nodes": 1, "walltime": 5, "queue": "q1", "comm": true, "pattern": "rhvd"}],
	  "node_resources": {"default": {"ncpus": 16, "mem": "64gb"}, "tux[4-7]": {"ngpus": 2}, "tux0": {"ncpus": 8}}}`
	w, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.NodeNames(w.Idle); !slices.Equal(got, []string{"tux1", "tux2", "tux5"}) {
		t.Errorf("idle = %v", got)
	}
	if w.Cost.Kind != model.CostLanPaper || w.Cost.HopCost != 10 {
		t.Errorf("cost = %+v", w.Cost)
	}
	if r := w.Running[0]; r.ID != "9" || r.End != 80 || len(r.Nodes) != 2 || r.Select.Units() != 2 || !r.Comm {
		t.Errorf("running = %+v", r)
	}
	if r := w.Running[1]; r.Comm {
		t.Errorf("running without comm = %+v, want Comm false", r)
	}
	j := w.Jobs[0]
	if j.Walltime != 600 || j.NWP != 2 || j.Queue != "q1" || w.ExpectedWait("q1") != 600 || j.Comm || j.Pattern != model.PatternBinomial {
		t.Errorf("job = %+v", j)
	}
	if j := w.Jobs[1]; !j.Comm || j.Pattern != model.PatternRHVD {
		t.Errorf("job y: comm %v pattern %q, want true and rhvd", j.Comm, j.Pattern)
	}
	c := j.Select[0]
	if c.Count != 2 || c.Amounts["ncpus"] != 8 || c.Amounts["mem"] != 4<<30 || c.Labels["arch"] != "linux" {
		t.Errorf("select = %+v", j.Select)
	}
	id0, _ := w.Topology.Lookup("tux0")
	id5, _ := w.Topology.Lookup("tux5")
	if r := w.Resources[id0]; r["ncpus"] != 8 || r["mem"] != 64<<30 || r["ngpus"] != 0 {
		t.Errorf("tux0 resources = %v", r)
	}
	if r := w.Resources[id5]; r["ncpus"] != 16 || r["ngpus"] != 2 {
		t.Errorf("tux5 resources = %v", r)
	}
}

// TestParseWindowErrors checks that each kind of bad input is rejected with
// the field path and the reason.
func TestParseWindowErrors(t *testing.T) {
	base := `"time": 100, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}}, "idle": "n[0-3]"`
	job := `{"id": "a", "nodes": 2, "walltime": 60}`
	cases := []struct {
		doc, want string
	}{
		{`not json`, "not valid JSON"},
		{`[1,2]`, "must be a JSON object"},
		{`{` + base + `}`, "jobs: required"},
		{`{"topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 1}}, "idle": [], "jobs": []}`, "time: required"},
		{`{"time": -1, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 1}}, "idle": [], "jobs": []}`, "time: must be"},
		{`{"time": 1.5, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 1}}, "idle": [], "jobs": []}`, "time: must be an integer"},
		{`{"time": "now", "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 1}}, "idle": [], "jobs": []}`, "time: must be a number, got a string"},
		{`{"version": 2, ` + base + `, "jobs": []}`, "version: unsupported version 2"},
		{`{` + base + `, "jobs": [], "colour": 1}`, "colour: unknown field"},
		{`{"time": 1, "idle": [], "jobs": []}`, "topology: required"},
		{`{"time": 1, "topology": {}, "idle": [], "jobs": []}`, "topology: must have exactly one"},
		{`{"time": 1, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 1}, "fat_tree": {"k": 4}}, "idle": [], "jobs": []}`, "exactly one"},
		{`{"time": 1, "topology": {"layout": {"pods": 0, "leaves_per_pod": 1, "nodes_per_leaf": 1}}, "idle": [], "jobs": []}`, "topology.layout.pods: must be"},
		{`{"time": 1, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1}}, "idle": [], "jobs": []}`, "topology.layout.nodes_per_leaf: required"},
		{`{"time": 1, "topology": {"layout": {"pods": 1000, "leaves_per_pod": 1000, "nodes_per_leaf": 1000}}, "idle": [], "jobs": []}`, "exceed the limit"},
		{`{"time": 1, "topology": {"fat_tree": {"k": 5}}, "idle": [], "jobs": []}`, "topology.fat_tree.k: must be even"},
		{`{"time": 1, "topology": {"fat_tree": {"k": 4, "pods": 9}}, "idle": [], "jobs": []}`, "topology.fat_tree.pods: must be between 1 and 4"},
		{`{"time": 1, "topology": {"slurm": "SwitchName=s0 Nodez=a"}, "idle": [], "jobs": []}`, "topology.slurm: "},
		{`{"time": 1, "topology": {"slurm_file": "x.conf"}, "idle": [], "jobs": []}`, "topology.slurm_file: reading files is not allowed"},
		{`{"time": 100, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}}, "jobs": []}`, "idle: required"},
		{`{"time": 100, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}}, "idle": "n[0-3],n99", "jobs": []}`, `idle: node "n99" is not in the topology`},
		{`{"time": 100, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}}, "idle": ["n1", "n1"], "jobs": []}`, `idle: node "n1" is listed twice`},
		{`{"time": 100, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}}, "idle": ["n1", 2], "jobs": []}`, `idle[1]: must be a string`},
		{`{"time": 100, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}}, "idle": "n[0-", "jobs": []}`, `idle: hostlist`},
		{`{` + base + `, "running": [{"id": "r", "nodes": "n[3-4]", "end": 200}], "jobs": []}`, `running[0].nodes: node "n3" is also listed as idle`},
		{`{` + base + `, "running": [{"id": "r", "nodes": "n5", "end": 100}], "jobs": []}`, `running[0].end: must be after the window time`},
		{`{` + base + `, "running": [{"id": "r", "nodes": [], "end": 200}], "jobs": []}`, `running[0].nodes: must name at least one node`},
		{`{` + base + `, "running": [{"id": "r", "end": 200}], "jobs": []}`, `running[0].nodes: required`},
		{`{` + base + `, "running": [{"id": "r", "nodes": "n5", "end": 200}], "jobs": [{"id": "r", "nodes": 1, "walltime": 5}]}`, `jobs[0].id: job "r" is already declared at running[0]`},
		{`{` + base + `, "jobs": [` + job + `, {"id": "b", "nodes": 0, "walltime": 5}]}`, "jobs[1].nodes: must be between 1 and"},
		{`{` + base + `, "jobs": [{"id": "b", "walltime": 5}]}`, "jobs[0].nodes: required"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1}]}`, "jobs[0].walltime: required"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 0}]}`, "jobs[0].walltime: must be between 1 and"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 1e30}]}`, "jobs[0].walltime: must be between 1 and 1099511627776"},
		{`{"time": 1, "time": 2, ` + base[strings.Index(base, `"topology"`):] + `, "jobs": []}`, "time: given twice"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 2, "walltime": 5, "select": "5:ncpus=16"}]}`, "jobs[0].select: asks for 5 units, but nodes is 2"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": "1:99"}]}`, "jobs[0].walltime: bad duration"},
		{`{` + base + `, "jobs": [{"id": "", "nodes": 1, "walltime": 5}]}`, "jobs[0].id: must not be empty"},
		{`{` + base + `, "jobs": [{"id": true, "nodes": 1, "walltime": 5}]}`, "jobs[0].id: must be a string or a non-negative integer"},
		{`{` + base + `, "jobs": [` + job + `, ` + job + `]}`, `jobs[1].id: job "a" is already declared at jobs[0]`},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "submit": 101}]}`, "jobs[0].submit: is after the window time"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "nwp": -1}]}`, "jobs[0].nwp: must be between 0"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "select": "2:ncpus=x"}]}`, "jobs[0].select: chunk 1: ncpus=x: must be a non-negative integer"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "select": ""}]}`, "jobs[0].select: must not be empty"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "wait": 3}]}`, "jobs[0].wait: unknown field"},
		{`{` + base + `, "jobs": [` + job + `, {"id": "b", "nodes": 1, "walltime": 5}, {"id": "c", "nodes": 1, "walltime": 5, "pattern": "ring"}]}`, "jobs[2].pattern: must be rd, rhvd or binomial"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "pattern": "RD"}]}`, "jobs[0].pattern: must be rd, rhvd or binomial"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "pattern": ""}]}`, "jobs[0].pattern: must be rd, rhvd or binomial"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "pattern": 2}]}`, "jobs[0].pattern: must be a string, got a number"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "comm": "yes"}]}`, "jobs[0].comm: must be true or false, got a string"},
		{`{` + base + `, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "comm": 1}]}`, "jobs[0].comm: must be true or false, got a number"},
		{`{` + base + `, "running": [{"id": "r", "nodes": "n5", "end": 200, "comm": 0}], "jobs": []}`, "running[0].comm: must be true or false, got a number"},
		{`{` + base + `, "running": [{"id": "r", "nodes": "n5", "end": 200, "pattern": "rd"}], "jobs": []}`, "running[0].pattern: unknown field"},
		{`{` + base + `, "queues": {"q": {"expected_wait": 0}}, "jobs": []}`, `queues["q"].expected_wait: must be`},
		{`{` + base + `, "queues": {"q": {"expected_wait": 5}}, "jobs": [{"id": "b", "nodes": 1, "walltime": 5, "queue": "z"}]}`, `jobs[0].queue: queue "z" is not in queues`},
		{`{` + base + `, "queues": {"q": {"expected_wait": 5}}, "jobs": [{"id": "b", "nodes": 1, "walltime": 5}]}`, `jobs[0].queue: queue "default" is not in queues`},
		{`{` + base + `, "cost": {"model": "euclid"}, "jobs": []}`, "cost.model: unknown cost model"},
		{`{` + base + `, "cost": {"hop_cost": 0}, "jobs": []}`, "cost.hop_cost: must be between 1 and"},
		{`{` + base + `, "node_resources": {"n9": {"ncpus": 4}}, "jobs": []}`, `node_resources["n9"]: node "n9" is not in the topology`},
		{`{` + base + `, "node_resources": {"n[0-2]": {"ncpus": 4}, "n2": {"ncpus": 2}}, "jobs": []}`, `node "n2" is also named by`},
		{`{` + base + `, "node_resources": {"default": {"mem": "4zb"}}, "jobs": []}`, `node_resources["default"].mem: bad size`},
		{`{` + base + `, "node_resources": {"default": {"ncpus": -4}}, "jobs": []}`, `node_resources["default"].ncpus: must be at least 0`},
		{`{` + base + `, "node_resources": {"default": {"ncpus": [1]}}, "jobs": []}`, `node_resources["default"].ncpus: must be a non-negative integer or a size`},
	}
	for _, c := range cases {
		_, err := windowjson.Parse([]byte(c.doc), windowjson.Options{})
		if err == nil {
			t.Errorf("no error for %s\nwant %q", c.doc, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q\nwant it to contain %q\nfor %s", err, c.want, c.doc)
		}
		var fe *windowjson.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("error %q is not a *FieldError", err)
		}
	}
}

func TestLoadWindowSlurmFile(t *testing.T) {
	dir := t.TempDir()
	conf := "SwitchName=s0 Nodes=a[0-3]\nSwitchName=s1 Nodes=a[4-7]\nSwitchName=top Switches=s[0-1]\n"
	if err := os.WriteFile(filepath.Join(dir, "topology.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	win := `{"time": 0, "topology": {"slurm_file": "topology.conf"}, "idle": "a[1-6]", "jobs": []}`
	if err := os.WriteFile(filepath.Join(dir, "w.json"), []byte(win), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := windowjson.Load(filepath.Join(dir, "w.json"))
	if err != nil {
		t.Fatal(err)
	}
	if w.Topology.NumNodes() != 8 || len(w.Idle) != 6 || w.TopologySpec.SlurmFile != "topology.conf" {
		t.Errorf("got %d nodes, %d idle, spec %+v", w.Topology.NumNodes(), len(w.Idle), w.TopologySpec)
	}
	if _, err := windowjson.Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("no error for a missing window file")
	}
}

// TestWindowRoundTrip writes a parsed window and parses it again.
func TestWindowRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../instances/example-window.json")
	if err != nil {
		t.Fatal(err)
	}
	w1, err := windowjson.Parse(data, windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := windowjson.Marshal(w1)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := windowjson.Parse(out, windowjson.Options{})
	if err != nil {
		t.Fatalf("re-reading the written window: %v\n%s", err, out)
	}
	if !slices.Equal(w1.Idle, w2.Idle) || len(w1.Jobs) != len(w2.Jobs) || len(w1.Running) != len(w2.Running) ||
		w1.Time != w2.Time || w1.Cost != w2.Cost || len(w1.Queues) != len(w2.Queues) {
		t.Fatalf("round trip changed the window:\n%s", out)
	}
	for i := range w1.Jobs {
		a, b := w1.Jobs[i], w2.Jobs[i]
		if a.ID != b.ID || a.Nodes != b.Nodes || a.Walltime != b.Walltime || a.Submit != b.Submit || a.Queue != b.Queue || a.NWP != b.NWP ||
			a.Comm != b.Comm || a.Pattern != b.Pattern {
			t.Errorf("job %d: %+v became %+v", i, a, b)
		}
	}
	for i := range w1.Running {
		if !slices.Equal(w1.Running[i].Nodes, w2.Running[i].Nodes) || w1.Running[i].End != w2.Running[i].End || w1.Running[i].Comm != w2.Running[i].Comm {
			t.Errorf("running %d changed", i)
		}
	}
}

// TestWindowCommPatternRoundTrip writes the comm and pattern fields only
// when they differ from the defaults, and reads back what it wrote.
func TestWindowCommPatternRoundTrip(t *testing.T) {
	doc := `{"time": 100, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 4}},
	 "idle": "n[0-3]", "running": [{"id": "r1", "nodes": "n4", "end": 200, "comm": true}, {"id": "r2", "nodes": "n5", "end": 200, "comm": false}],
	 "jobs": [{"id": "a", "nodes": 2, "walltime": 60},
	          {"id": "b", "nodes": 2, "walltime": 60, "comm": false, "pattern": "rhvd"},
	          {"id": "c", "nodes": 2, "walltime": 60, "comm": true, "pattern": "rd"},
	          {"id": "d", "nodes": 2, "walltime": 60, "pattern": "binomial"}]}`
	w1, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := windowjson.Marshal(w1)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if got := strings.Count(text, `"comm"`); got != 2 {
		t.Errorf("written window has %d comm fields, want 2 (r1 true, b false):\n%s", got, text)
	}
	if got := strings.Count(text, `"pattern"`); got != 2 {
		t.Errorf("written window has %d pattern fields, want 2 (b rhvd, d binomial):\n%s", got, text)
	}
	w2, err := windowjson.Parse(out, windowjson.Options{})
	if err != nil {
		t.Fatalf("re-reading the written window: %v\n%s", err, out)
	}
	for i := range w1.Jobs {
		if a, b := w1.Jobs[i], w2.Jobs[i]; a.Comm != b.Comm || a.Pattern != b.Pattern {
			t.Errorf("job %s: comm %v pattern %q became %v %q", a.ID, a.Comm, a.Pattern, b.Comm, b.Pattern)
		}
	}
	for i := range w1.Running {
		if a, b := w1.Running[i], w2.Running[i]; a.Comm != b.Comm {
			t.Errorf("running %s: comm %v became %v", a.ID, a.Comm, b.Comm)
		}
	}
	// A job built in Go: Comm false is written, the empty pattern (rd) is not.
	w1.Jobs = []model.Job{{ID: "g", Nodes: 1, Walltime: 5, Queue: model.DefaultQueue}}
	w1.Running = nil
	out, err = windowjson.Marshal(w1)
	if err != nil {
		t.Fatal(err)
	}
	w3, err := windowjson.Parse(out, windowjson.Options{})
	if err != nil {
		t.Fatalf("re-reading a window with a Go-built job: %v\n%s", err, out)
	}
	if j := w3.Jobs[0]; j.Comm || j.Pattern != model.PatternRD {
		t.Errorf("Go-built job read back with comm %v pattern %q, want false and rd", j.Comm, j.Pattern)
	}
}

// FuzzParseWindow feeds arbitrary bytes to the window reader: it must never
// panic, and every window it accepts must satisfy the invariants solvers
// rely on.
func FuzzParseWindow(f *testing.F) {
	files, _ := filepath.Glob("../../instances/*.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(minimalWindow))
	f.Add([]byte(`{"time": 1, "topology": {"layout": {"pods": 1, "leaves_per_pod": 2, "nodes_per_leaf": 2}}, "idle": "n[0-1]", "running": [{"id": "r", "nodes": "n2", "end": 9, "comm": true}], "jobs": [{"id": "a", "nodes": 2, "walltime": 5, "comm": false, "pattern": "binomial"}]}`))
	f.Add([]byte(`{"time": 1, "topology": {"slurm": "SwitchName=s Nodes=a[0-2]"}, "idle": "a[0-1]", "jobs": [{"id": 1, "nodes": 2, "walltime": "1:00", "select": "1:ncpus=2+1:mem=2gb"}], "node_resources": {"default": {"ncpus": 2}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := windowjson.Parse(data, windowjson.Options{})
		if err != nil {
			var fe *windowjson.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %q is not a *FieldError", err)
			}
			return
		}
		n := w.Topology.NumNodes()
		for i, id := range w.Idle {
			if id < 0 || id >= n || (i > 0 && w.Idle[i-1] >= id) {
				t.Fatalf("idle %v not sorted, distinct and in range", w.Idle)
			}
		}
		ids := map[string]bool{}
		for _, j := range w.Jobs {
			if j.Nodes < 1 || j.Walltime < 1 || j.Submit > w.Time || ids[j.ID] {
				t.Fatalf("bad job accepted: %+v", j)
			}
			ids[j.ID] = true
		}
		for _, r := range w.Running {
			if r.End <= w.Time || len(r.Nodes) == 0 {
				t.Fatalf("bad running job accepted: %+v", r)
			}
			for _, k := range r.Nodes {
				if w.IsIdle(k) {
					t.Fatalf("running node %d also idle", k)
				}
			}
		}
		out, err := windowjson.Marshal(w)
		if err != nil {
			t.Fatalf("accepted window cannot be written: %v", err)
		}
		w2, err := windowjson.Parse(out, windowjson.Options{})
		if err != nil {
			t.Fatalf("written window does not parse: %v\n%s", err, out)
		}
		if !slices.Equal(w.Idle, w2.Idle) || len(w.Jobs) != len(w2.Jobs) || len(w.Running) != len(w2.Running) {
			t.Fatalf("round trip changed the window:\n%s", out)
		}
		for i := range w.Jobs {
			if w.Jobs[i].Comm != w2.Jobs[i].Comm || w.Jobs[i].Pattern != w2.Jobs[i].Pattern {
				t.Fatalf("round trip changed job %d's comm or pattern:\n%s", i, out)
			}
		}
		for i := range w.Running {
			if w.Running[i].Comm != w2.Running[i].Comm {
				t.Fatalf("round trip changed running job %d's comm:\n%s", i, out)
			}
		}
	})
}

func TestParseWindowDuplicateKey(t *testing.T) {
	doc := `{"time": 1, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 4}},
	 "idle": "n[0-3]", "jobs": [{"id": "a", "nodes": 2, "nodes": 3, "walltime": 5}]}`
	_, err := windowjson.Parse([]byte(doc), windowjson.Options{})
	if err == nil || !strings.Contains(err.Error(), "jobs[0].nodes: given twice") {
		t.Errorf("duplicate key: error %v", err)
	}
}

// TestParseWindowQuotedNumber: json.Number would accept "7200"; the reader
// must not.
func TestParseWindowQuotedNumber(t *testing.T) {
	doc := `{"time": "7200", "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 4}}, "idle": [], "jobs": []}`
	if _, err := windowjson.Parse([]byte(doc), windowjson.Options{}); err == nil || !strings.Contains(err.Error(), "time: must be a number, got a string") {
		t.Errorf("quoted number: %v", err)
	}
}

// TestParseSkipsBOM: a window saved with a UTF-8 byte order mark reads as
// without one (issue 36: it was "invalid character 'ï'").
func TestParseSkipsBOM(t *testing.T) {
	w, err := windowjson.Parse([]byte("\xef\xbb\xbf"+minimalWindow), windowjson.Options{})
	if err != nil || len(w.Jobs) != 1 {
		t.Fatalf("%v", err)
	}
	if _, err := windowjson.Parse([]byte("\xef\xbb\xbf\xef\xbb\xbf"+minimalWindow), windowjson.Options{}); err == nil {
		t.Error("two marks accepted")
	}
}
