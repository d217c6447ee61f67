package slurm_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/slurm"
)

// fatTreeConf is NewFatTree(4, 0) written as a topology.conf: 8 leaf
// switches of 2 nodes, 4 pods of 2 leaves, one core.
const fatTreeConf = `# k=4 fat-tree, aggregation and core folded as in NewFatTree
SwitchName=leaf0 Nodes=n[0-1]
SwitchName=leaf1 Nodes=n[2-3]
SwitchName=leaf2 Nodes=n[4-5]
SwitchName=leaf3 Nodes=n[6-7]
SwitchName=leaf4 Nodes=n[8-9]
SwitchName=leaf5 Nodes=n[10-11]
SwitchName=leaf6 Nodes=n[12-13]
SwitchName=leaf7 Nodes=n[14-15]
SwitchName=pod0 Switches=leaf[0-1]
SwitchName=pod1 Switches=leaf[2-3]
SwitchName=pod2 Switches=leaf[4-5]
SwitchName=pod3 Switches=leaf[6-7]
SwitchName=core Switches=pod[0-3]
`

type hopCase struct {
	a, b string
	want int
}

var slurmGood = []struct {
	name   string
	conf   string
	nodes  []string       // Name(0), Name(1), ... in full
	height int            // Height()
	levels map[string]int // switch name → Level
	hops   []hopCase
}{
	{
		name: "slurm manual example",
		conf: `# topology.conf
# Switch Configuration
SwitchName=s0 Nodes=dev[0-5]
SwitchName=s1 Nodes=dev[6-9]
SwitchName=s2 Nodes=dev[10-11]
SwitchName=s3 Switches=s[0-2]
`,
		nodes: []string{"dev0", "dev1", "dev2", "dev3", "dev4", "dev5",
			"dev6", "dev7", "dev8", "dev9", "dev10", "dev11"},
		height: 2,
		levels: map[string]int{"s0": 1, "s1": 1, "s2": 1, "s3": 2},
		hops:   []hopCase{{"dev0", "dev0", 0}, {"dev0", "dev5", 2}, {"dev5", "dev6", 4}, {"dev11", "dev0", 4}},
	},
	{
		name: "three-level fat tree",
		conf: fatTreeConf,
		nodes: []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7",
			"n8", "n9", "n10", "n11", "n12", "n13", "n14", "n15"},
		height: 3,
		levels: map[string]int{"leaf0": 1, "leaf7": 1, "pod0": 2, "pod3": 2, "core": 3},
		hops:   []hopCase{{"n0", "n1", 2}, {"n0", "n2", 4}, {"n1", "n3", 4}, {"n0", "n4", 6}, {"n15", "n0", 6}},
	},
	{
		name: "comments and blank lines",
		conf: `
# leading comment

SwitchName=s0 Nodes=tux[0-1] # trailing comment
    # indented comment
SwitchName=s1 Nodes=tux[2-3]#no space before the comment
	
SwitchName=top Switches=s[0-1] ### more
#SwitchName=ignored Nodes=zzz
`,
		nodes:  []string{"tux0", "tux1", "tux2", "tux3"},
		height: 2,
		levels: map[string]int{"s0": 1, "s1": 1, "top": 2},
		hops:   []hopCase{{"tux0", "tux1", 2}, {"tux1", "tux2", 4}},
	},
	{
		name: "continuation lines",
		conf: "SwitchName=s0 \\\n" +
			"   Nodes=a[1-2]\n" +
			"SwitchName=s1 Nodes=b[1-2],\\\n" + // joined without a space
			"b[3-4]\n" +
			"SwitchName=top \\   # a comment after the backslash\n" +
			"  \\\n" +
			"  Switches=s0,\\  \n" +
			"s1 LinkSpeed=10\n",
		nodes:  []string{"a1", "a2", "b1", "b2", "b3", "b4"},
		height: 2,
		levels: map[string]int{"s0": 1, "s1": 1, "top": 2},
		hops:   []hopCase{{"a1", "a2", 2}, {"a2", "b4", 4}, {"b1", "b3", 2}},
	},
	{
		name:   "continuation on the last line",
		conf:   "SwitchName=s0 Nodes=x[1-2] \\",
		nodes:  []string{"x1", "x2"},
		height: 1,
		levels: map[string]int{"s0": 1},
		hops:   []hopCase{{"x1", "x2", 2}},
	},
	{
		name:   "CRLF line endings",
		conf:   "SwitchName=s0 Nodes=x[1-2]\r\nSwitchName=s1 Nodes=y1 \\\r\n\r\nSwitchName=t Switches=s[0-1]\r\n",
		nodes:  []string{"x1", "x2", "y1"},
		height: 2,
		levels: map[string]int{"s0": 1, "s1": 1, "t": 2},
		hops:   []hopCase{{"x1", "y1", 4}},
	},
	{
		name: "case-insensitive keys and LinkSpeed",
		conf: `switchname=s0 NODES=n[1-2] linkspeed=100
SWITCHNAME=s1 nOdEs=n3 LinkSpeed=0
SwitchName=Top sWiTcHeS=s[0-1] LINKSPEED=4294967295
`,
		nodes:  []string{"n1", "n2", "n3"},
		height: 2,
		levels: map[string]int{"s0": 1, "s1": 1, "Top": 2},
		hops:   []hopCase{{"n1", "n2", 2}, {"n2", "n3", 4}},
	},
	{
		name:   "keys in any order",
		conf:   "Nodes=n[1-2] SwitchName=s0\nSwitches=s0 SwitchName=t",
		nodes:  []string{"n1", "n2"},
		height: 2,
		levels: map[string]int{"s0": 1, "t": 2},
		hops:   []hopCase{{"n1", "n2", 2}},
	},
	{
		name:   "forest of leaves meets at a virtual top",
		conf:   "SwitchName=a Nodes=x[1-2]\nSwitchName=b Nodes=y1",
		nodes:  []string{"x1", "x2", "y1"},
		height: 1,
		levels: map[string]int{"a": 1, "b": 1},
		hops:   []hopCase{{"x1", "x2", 2}, {"x1", "y1", 4}},
	},
	{
		name: "upper switch before its children, nodes in leaf line order",
		conf: `SwitchName=top Switches=b,a
SwitchName=b Nodes=z[9],z[1-2]
SwitchName=a Nodes=y1
`,
		nodes:  []string{"z9", "z1", "z2", "y1"},
		height: 2,
		levels: map[string]int{"top": 2, "a": 1, "b": 1},
		hops:   []hopCase{{"z9", "z2", 2}, {"z1", "y1", 4}},
	},
	{
		name: "uneven depths",
		conf: `SwitchName=l0 Nodes=p[0-1]
SwitchName=l1 Nodes=p[2-3]
SwitchName=l2 Nodes=q[0-1]
SwitchName=pod Switches=l[0-1]
SwitchName=core Switches=pod,l2
`,
		nodes:  []string{"p0", "p1", "p2", "p3", "q0", "q1"},
		height: 3,
		levels: map[string]int{"l0": 1, "l2": 1, "pod": 2, "core": 3},
		hops:   []hopCase{{"p0", "p2", 4}, {"p0", "q0", 5}, {"q0", "q1", 2}},
	},
	{
		name:   "zero padding and cross products",
		conf:   "SwitchName=r1 Nodes=r1n[08-10]\nSwitchName=r2 Nodes=r[2-3]n[1-2]",
		nodes:  []string{"r1n08", "r1n09", "r1n10", "r2n1", "r2n2", "r3n1", "r3n2"},
		height: 1,
		levels: map[string]int{"r1": 1, "r2": 1},
		hops:   []hopCase{{"r1n08", "r1n10", 2}, {"r2n2", "r3n1", 2}, {"r1n09", "r3n2", 4}},
	},
}

func switchLevels(topo *model.Topology) map[string]int {
	m := make(map[string]int, topo.NumSwitches())
	for i := 0; i < topo.NumSwitches(); i++ {
		m[topo.Switch(i).Name] = topo.Switch(i).Level
	}
	return m
}

func TestParseTopology(t *testing.T) {
	for _, tc := range slurmGood {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := slurm.ParseTopology(tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			if got := topo.NumNodes(); got != len(tc.nodes) {
				t.Fatalf("NumNodes = %d, want %d", got, len(tc.nodes))
			}
			for i, want := range tc.nodes {
				if got := topo.Name(i); got != want {
					t.Errorf("Name(%d) = %q, want %q", i, got, want)
				}
			}
			if got := topo.Height(); got != tc.height {
				t.Errorf("Height = %d, want %d", got, tc.height)
			}
			levels := switchLevels(topo)
			if len(levels) != topo.NumSwitches() {
				t.Errorf("switch names not distinct: %v", levels)
			}
			for name, want := range tc.levels {
				if got, ok := levels[name]; !ok || got != want {
					t.Errorf("switch %q: level %d (present %v), want %d", name, got, ok, want)
				}
			}
			for _, h := range tc.hops {
				a, okA := topo.Lookup(h.a)
				b, okB := topo.Lookup(h.b)
				if !okA || !okB {
					t.Errorf("Lookup(%q), Lookup(%q): %v, %v", h.a, h.b, okA, okB)
					continue
				}
				if got := topo.Hops(a, b); got != h.want {
					t.Errorf("Hops(%s, %s) = %d, want %d", h.a, h.b, got, h.want)
				}
			}
		})
	}
}

// TestParseTopologyFatTree checks that the fat tree written as a
// topology.conf is NewFatTree(4, 0): same names, groups and hop counts.
func TestParseTopologyFatTree(t *testing.T) {
	got, err := slurm.ParseTopology(fatTreeConf)
	if err != nil {
		t.Fatal(err)
	}
	want, err := model.NewFatTree(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumNodes() != want.NumNodes() || got.NumSwitches() != want.NumSwitches() || got.Height() != want.Height() {
		t.Fatalf("nodes/switches/height = %d/%d/%d, want %d/%d/%d",
			got.NumNodes(), got.NumSwitches(), got.Height(), want.NumNodes(), want.NumSwitches(), want.Height())
	}
	for a := 0; a < want.NumNodes(); a++ {
		if got.Name(a) != want.Name(a) {
			t.Errorf("Name(%d) = %q, want %q", a, got.Name(a), want.Name(a))
		}
		for up := 0; up < 3; up++ {
			if g, w := got.Switch(got.Group(a, up)).Name, want.Switch(want.Group(a, up)).Name; g != w {
				t.Errorf("Group(%d, %d) = %q, want %q", a, up, g, w)
			}
		}
		for b := 0; b < want.NumNodes(); b++ {
			if g, w := got.Hops(a, b), want.Hops(a, b); g != w {
				t.Errorf("Hops(%d, %d) = %d, want %d", a, b, g, w)
			}
		}
	}
}

// deepChain returns a topology.conf of one leaf under a chain of levels-1
// upper switches, so levels switch levels in all.
func deepChain(levels int) string {
	var b strings.Builder
	b.WriteString("SwitchName=s0 Nodes=n[1-2]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "SwitchName=s%d Switches=s%d\n", i, i-1)
	}
	return b.String()
}

func TestParseTopologyLimits(t *testing.T) {
	topo, err := slurm.ParseTopology(deepChain(slurm.MaxLevels))
	if err != nil {
		t.Fatalf("%d levels: %v", slurm.MaxLevels, err)
	}
	if topo.Height() != slurm.MaxLevels {
		t.Errorf("Height = %d, want %d", topo.Height(), slurm.MaxLevels)
	}
	topo, err = slurm.ParseTopology("SwitchName=a Nodes=n[0-1048574]\nSwitchName=b Nodes=m1")
	if err != nil {
		t.Fatalf("%d nodes: %v", slurm.MaxNodes, err)
	}
	if topo.NumNodes() != slurm.MaxNodes {
		t.Errorf("NumNodes = %d, want %d", topo.NumNodes(), slurm.MaxNodes)
	}
}

var slurmBad = []struct {
	name   string
	conf   string
	line   int    // 0: no line
	phrase string // must appear in the message
}{
	{"unknown key", "SwitchName=s0 Nodes=a\n\nSwitchName=s1 Nodez=b\n", 3, `unknown key "Nodez"`},
	{"block plugin key", "BlockName=b1 Nodes=a[1-2]", 1, `unknown key "BlockName"`},
	{"not key=value", "SwitchName s0 Nodes=a", 1, `"SwitchName" is not KEY=VALUE`},
	{"spaces around =", "SwitchName = s0 Nodes=a", 1, `"SwitchName" is not KEY=VALUE`},
	{"empty key", "SwitchName=s0 =a", 1, `"=a" is not KEY=VALUE`},
	{"repeated key", "SwitchName=a Nodes=x switchname=b", 1, `key "switchname" given twice`},
	{"both nodes and switches", "SwitchName=s0 Nodes=a\nSwitchName=s2 Nodes=b\n#\n\nSwitchName=s1 Nodes=c Switches=s0", 5,
		`switch "s1" has both Nodes= and Switches=`},
	{"neither nodes nor switches", "SwitchName=s0 LinkSpeed=10", 1, `switch "s0" has neither Nodes= nor Switches=`},
	{"switchname missing", "SwitchName=s0 Nodes=a\nNodes=b LinkSpeed=1", 2, "SwitchName missing"},
	{"empty switchname", "SwitchName= Nodes=a", 1, "empty SwitchName="},
	{"empty nodes", "SwitchName=s0 Nodes=", 1, "empty Nodes="},
	{"empty switches", "SwitchName=s0 Nodes=a\nSwitchName=t switches=", 2, "empty switches="},
	{"bad linkspeed", "SwitchName=s0 Nodes=a LinkSpeed=fast", 1, `bad LinkSpeed "fast"`},
	{"negative linkspeed", "SwitchName=s0 Nodes=a LinkSpeed=-1", 1, `bad LinkSpeed "-1"`},
	{"bad switch name", "SwitchName=s[0-1] Nodes=a", 1, `bad switch name "s[0-1]"`},
	{"bad hostlist unbalanced", "SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b\n\nSwitchName=s2 Nodes=tux[0-", 4,
		`bad hostlist in Nodes= of switch "s2"`},
	{"bad hostlist reversed range", "SwitchName=s0 Nodes=n[3-1]", 1, "bad hostlist"},
	{"bad hostlist in switches", "SwitchName=s0 Nodes=a\nSwitchName=t Switches=s[a-b]", 2,
		`bad hostlist in Switches= of switch "t"`},
	{"huge range", "SwitchName=s0 Nodes=n[0-99999999]", 1, "more than 1048576 names"},
	{"too many nodes", "SwitchName=a Nodes=n[0-1048575]\nSwitchName=b Nodes=m1", 2, "more than 1048576 nodes"},
	{"equals in node name", "SwitchName=s0 Nodes=tux[0-3]LinkSpeed=10", 1, `bad node name "tux0LinkSpeed=10"`},
	{"switch declared again", "SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b\nSwitchName=s2 Nodes=c\n\n\n\nSwitchName=s2 Nodes=d", 7,
		`switch "s2" declared again (first at line 3)`},
	{"node under two switches", "SwitchName=s0 Nodes=tux[0-3]\n" + strings.Repeat("\n", 7) + "SwitchName=s1 Nodes=tux[3-4]", 9,
		`node "tux3" is already under switch "s0" (line 1)`},
	{"node twice under one switch", "SwitchName=s0 Nodes=tux[0-3],tux1", 1, `node "tux1" is already under switch "s0" (line 1)`},
	{"node named like a switch", "SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=s0", 2, `node "s0" has the name of switch "s0" (line 1)`},
	{"node named like its switch", "SwitchName=s0 Nodes=s0", 1, `node "s0" has the name of switch "s0" (line 1)`},
	{"switch named like a node", "SwitchName=s0 Nodes=a\nSwitchName=a Switches=s0", 2,
		`switch "a" has the name of a node under switch "s0" (line 1)`},
	{"undeclared switch", "SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b\n\n\n\nSwitchName=top Switches=s[0-1],s9", 6,
		`switch "s9" listed under "top" is not declared`},
	{"node listed as switch", "SwitchName=s0 Nodes=a\nSwitchName=top Switches=s0,a", 2,
		`switch "a" listed under "top" is not declared (it is a node under switch "s0", line 1)`},
	{"switch lists itself", "SwitchName=s0 Nodes=a\nSwitchName=t Switches=s0,t", 2, `switch "t" lists itself`},
	{"switch under two switches", "SwitchName=s0 Nodes=a\nSwitchName=p Switches=s0\nSwitchName=q Switches=s0", 3,
		`switch "s0" listed under "q" is already under "p" (line 2)`},
	{"cycle of two", "SwitchName=l Nodes=n1\nSwitchName=a Switches=b,l\nSwitchName=b Switches=a", 2,
		`switches form a cycle: "a" is under "b" is under "a"`},
	{"cycle of three declared out of order", "SwitchName=l Nodes=n1\nSwitchName=c Switches=b\nSwitchName=a Switches=c,l\nSwitchName=b Switches=a", 2,
		`switches form a cycle: "c" is under "a" is under "b" is under "c"`},
	{"cycle without leaves", "SwitchName=a Switches=b\nSwitchName=b Switches=a", 1, "cycle"},
	{"too deep", deepChain(slurm.MaxLevels + 1), 1, `switch "s0" is 16 levels below its root switch; at most 16 levels`},
	{"continued line reports its first line", "SwitchName=s0 Nodes=a\nSwitchName=s1 \\\n  Nodes=b \\\n  Speed=3", 2,
		`unknown key "Speed"`},
	{"comment hides the rest of a line", "SwitchName=s0 Nodes=a # Switches=x\nSwitchName=s1 # Nodes=b", 2,
		`switch "s1" has neither Nodes= nor Switches=`},
	{"empty text", "", 0, "no SwitchName= lines"},
	{"only comments", "# nothing\n\n   # here \\\n", 0, "no SwitchName= lines"},
}

func TestParseTopologyErrors(t *testing.T) {
	for _, tc := range slurmBad {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := slurm.ParseTopology(tc.conf)
			if err == nil {
				t.Fatalf("no error; got %d nodes", topo.NumNodes())
			}
			if topo != nil {
				t.Errorf("non-nil topology with error %v", err)
			}
			if !errors.Is(err, model.ErrTopology) {
				t.Errorf("errors.Is(%v, model.ErrTopology) = false", err)
			}
			var se *slurm.TopologyError
			if !errors.As(err, &se) {
				t.Fatalf("%v is not a *slurm.TopologyError", err)
			}
			if se.Line != tc.line {
				t.Errorf("Line = %d, want %d (%v)", se.Line, tc.line, err)
			}
			msg := err.Error()
			wantLine := "topology.conf: "
			if tc.line > 0 {
				wantLine = fmt.Sprintf("topology.conf line %d: ", tc.line)
			}
			if !strings.Contains(msg, wantLine) {
				t.Errorf("%q does not contain %q", msg, wantLine)
			}
			if !strings.Contains(msg, tc.phrase) {
				t.Errorf("%q does not contain %q", msg, tc.phrase)
			}
		})
	}
}

func TestTopologyErrorFormat(t *testing.T) {
	_, err := slurm.ParseTopology("SwitchName=s0 Nodes=a\n\nSwitchName=s1 Nodez=b")
	const want = `model: bad topology: topology.conf line 3: unknown key "Nodez"`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// TestParseTopologyLongCycle checks that a long cycle is found in
// linear time and reported with an elided message.
func TestParseTopologyLongCycle(t *testing.T) {
	const n = 50000
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "SwitchName=s%d Switches=s%d\n", i, (i+1)%n)
	}
	_, err := slurm.ParseTopology(b.String())
	var se *slurm.TopologyError
	if !errors.As(err, &se) || se.Line != 1 || !strings.Contains(se.Msg, "cycle") || len(se.Msg) > 200 {
		t.Fatalf("error = %v", err)
	}
	if !strings.HasSuffix(se.Msg, `is under ... is under "s0"`) {
		t.Errorf("message %q does not elide the cycle", se.Msg)
	}
}

func FuzzParseTopology(f *testing.F) {
	for _, tc := range slurmGood {
		f.Add(tc.conf)
	}
	for _, tc := range slurmBad {
		if len(tc.conf) < 1<<10 {
			f.Add(tc.conf)
		}
	}
	f.Add("SwitchName=s0 Nodes=x\\\\\nSwitchName=s1 Nodes=y")
	f.Add("SwitchName=a Nodes=n[1-2]\nSwitchName=b Switches=a\nSwitchName=c Switches=b,d\nSwitchName=d Nodes=m[01-03]")
	f.Fuzz(func(t *testing.T, conf string) {
		topo, err := slurm.ParseTopology(conf)
		if err != nil {
			var se *slurm.TopologyError
			if !errors.Is(err, model.ErrTopology) || !errors.As(err, &se) {
				t.Fatalf("error %v is not a *slurm.TopologyError wrapping model.ErrTopology", err)
			}
			if se.Line < 0 || se.Line > strings.Count(conf, "\n")+1 {
				t.Fatalf("error %v names line %d of a %d-line text", err, se.Line, strings.Count(conf, "\n")+1)
			}
			return
		}
		if topo.NumNodes() < 1 || topo.NumNodes() > slurm.MaxNodes {
			t.Fatalf("%d nodes", topo.NumNodes())
		}
		if topo.Height() < 1 || topo.Height() > slurm.MaxLevels {
			t.Fatalf("height %d", topo.Height())
		}
		seen := make(map[string]bool, topo.NumNodes())
		for i := 0; i < topo.NumNodes(); i++ {
			name := topo.Name(i)
			if name == "" || seen[name] {
				t.Fatalf("node %d has empty or repeated name %q", i, name)
			}
			seen[name] = true
			if id, ok := topo.Lookup(name); !ok || id != i {
				t.Fatalf("Lookup(Name(%d) = %q) = %d, %v", i, name, id, ok)
			}
			if len(topo.Ancestors(i)) < 1 {
				t.Fatalf("node %d (%q) has no ancestor switch", i, name)
			}
		}
		if last := topo.NumNodes() - 1; topo.Hops(0, last) != topo.Hops(last, 0) {
			t.Fatalf("Hops(0, %d) != Hops(%d, 0)", last, last)
		}
	})
}
