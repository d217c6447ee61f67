package cycle

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The documents captured from a real OpenPBS 23.06 server (its default
// multi-vnode mom: pbshost[0]…pbshost[7] and the natural vnode pbshost
// with ncpus=0; running, queued, held and array jobs).
func openpbsFixture(name string) string {
	return filepath.Join(pbsTestdata, "openpbs-23.06", name)
}

func openpbsConfig(qstat string) *Config {
	c := fixtureConfig()
	c.QstatFile, c.NodesFile, c.QueuesFile = openpbsFixture(qstat), openpbsFixture("pbsnodes-av.json"), openpbsFixture("qstat-Qf.json")
	return c
}

// TestPBSOpenPBSNaturalVnode: the natural vnode of a multi-vnode host
// (ncpus=0, no tier resources) is ignored with a note instead of
// aborting the cycle, and nothing is ever placed on it; the array's
// queued subjobs (qstat -t) are candidates, the array itself is not.
func TestPBSOpenPBSNaturalVnode(t *testing.T) {
	for _, qstat := range []string{"qstat-f.json", "qstat-ftx.json"} {
		p, _, err := openpbsConfig(qstat).Plan(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", qstat, err)
		}
		if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "pbshost") && strings.Contains(n, "no CPUs") }) {
			t.Errorf("%s: no note on the natural vnode: %q", qstat, p.Notes)
		}
		var started []string
		for _, s := range p.Starts {
			started = append(started, s.Job)
			for _, v := range s.Nodes() {
				if v == "pbshost" {
					t.Errorf("%s: job %s placed on the natural vnode", qstat, s.Job)
				}
			}
		}
		if !slices.Contains(started, "2.pbshost") || slices.Contains(started, "4.pbshost") || slices.Contains(started, "3[].pbshost") {
			t.Errorf("%s: started %v (want 2.pbshost; never the held 4 or the array 3[])", qstat, started)
		}
		if qstat == "qstat-ftx.json" && !slices.Contains(started, "3[2].pbshost") {
			t.Errorf("%s: the array's queued subjobs did not start: %v", qstat, started)
		}
	}
}

// TestPBSNodesWithBrackets: Nodes (--nodes) names vnodes whose PBS names
// have brackets, literally or as a range.
func TestPBSNodesWithBrackets(t *testing.T) {
	for _, tc := range []struct {
		nodes string
		want  []string
	}{
		{"pbshost[4],pbshost[5]", []string{"pbshost[4]", "pbshost[5]"}},
		{"pbshost[6-7]", []string{"pbshost[6]", "pbshost[7]"}},
		{"pbshost[3]", []string{"pbshost[3]"}},
	} {
		c := openpbsConfig("qstat-f.json")
		c.Nodes = tc.nodes
		p, _, err := c.Plan(context.Background())
		if err != nil {
			t.Fatalf("--nodes %s: %v", tc.nodes, err)
		}
		if got := p.Doc("qrun", true, nil).Nodes.Owned; got != len(tc.want) {
			t.Errorf("--nodes %s: %d owned, want %d", tc.nodes, got, len(tc.want))
		}
		if len(p.Starts) == 0 {
			t.Errorf("--nodes %s: nothing starts", tc.nodes)
		}
		for _, s := range p.Starts {
			for _, v := range s.Nodes() {
				if !slices.Contains(tc.want, v) {
					t.Errorf("--nodes %s: job %s on %s", tc.nodes, s.Job, v)
				}
			}
		}
	}
	c := openpbsConfig("qstat-f.json")
	c.Nodes = "pbshost[2],gpu[1-2]"
	p, _, err := c.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "gpu[1-2]") }) {
		t.Errorf("no note on the --nodes entry that names no vnode: %q", p.Notes)
	}
	c.Nodes = "pbshost"
	if _, _, err := c.Plan(context.Background()); err == nil || !strings.Contains(err.Error(), "no CPUs") {
		t.Errorf("--nodes naming only the natural vnode: %v", err)
	}
}
