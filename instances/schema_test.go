package instances_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/optsched/optsched/instances"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/model/windowjson"
)

// schemaFile is the JSON Schema of the window format; it sits among the
// window files but is not one.
const schemaFile = instances.SchemaName

// The keys windowjson.Parse accepts (model/windowjson/read.go).
var (
	readerTopKeys     = []string{"version", "time", "topology", "cost", "idle", "running", "queues", "jobs", "node_resources", "reservations"}
	readerJobKeys     = []string{"id", "nodes", "walltime", "submit", "queue", "nwp", "select", "comm", "pattern", "place"}
	readerRunningKeys = []string{"id", "nodes", "end", "select", "comm", "place", "units"}
)

type schemaDoc map[string]any

func loadSchema(t *testing.T) schemaDoc {
	t.Helper()
	data, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s schemaDoc
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s is not valid JSON: %v", schemaFile, err)
	}
	return s
}

// at follows a path of object keys and list indices (as strings) from
// node, resolving a local "$ref" wherever it meets one.
func (s schemaDoc) at(t *testing.T, path ...string) map[string]any {
	t.Helper()
	var node any = map[string]any(s)
	for i, p := range path {
		node = s.deref(t, node)
		switch n := node.(type) {
		case map[string]any:
			node = n[p]
		case []any:
			idx, err := strconv.Atoi(p)
			if err != nil || idx < 0 || idx >= len(n) {
				t.Fatalf("schema: %s: index out of range", strings.Join(path[:i+1], "/"))
			}
			node = n[idx]
		}
		if node == nil {
			t.Fatalf("schema: %s: missing", strings.Join(path[:i+1], "/"))
		}
	}
	m, ok := s.deref(t, node).(map[string]any)
	if !ok {
		t.Fatalf("schema: %s: not an object", strings.Join(path, "/"))
	}
	return m
}

func (s schemaDoc) deref(t *testing.T, node any) any {
	t.Helper()
	for range 10 {
		m, ok := node.(map[string]any)
		if !ok {
			return node
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return node
		}
		rest, ok := strings.CutPrefix(ref, "#/")
		if !ok {
			t.Fatalf("schema: non-local $ref %q", ref)
		}
		var n any = map[string]any(s)
		for _, p := range strings.Split(rest, "/") {
			n = n.(map[string]any)[p]
		}
		if n == nil {
			t.Fatalf("schema: dangling $ref %q", ref)
		}
		node = n
	}
	t.Fatal("schema: $ref loop")
	return nil
}

func propKeys(t *testing.T, node map[string]any) []string {
	t.Helper()
	props, ok := node["properties"].(map[string]any)
	if !ok {
		t.Fatalf("schema: no properties in %v", node)
	}
	return slices.Sorted(maps.Keys(props))
}

func strList(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestSchemaParses(t *testing.T) {
	s := loadSchema(t)
	if got := s["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", got)
	}
	if got := s["$id"]; got != "https://optsched.dev/schema/window-v1.json" {
		t.Errorf("$id = %v", got)
	}
	if d, _ := s["description"].(string); !strings.Contains(d, "Lan") || !strings.Contains(d, "Bridi") {
		t.Errorf("top-level description must name Lan et al. and Bridi et al.")
	}
}

// TestSchemaKeysMatchReader checks that the schema's property sets, required
// lists and closedness are those of windowjson.Parse.
func TestSchemaKeysMatchReader(t *testing.T) {
	s := loadSchema(t)
	top := s.at(t)
	job := s.at(t, "properties", "jobs", "items")
	running := s.at(t, "properties", "running", "items")
	for _, c := range []struct {
		name      string
		node      map[string]any
		keys, req []string
	}{
		{"top level", top, readerTopKeys, []string{"time", "topology", "idle", "jobs"}},
		{"jobs[]", job, readerJobKeys, []string{"id", "nodes", "walltime"}},
		{"running[]", running, readerRunningKeys, []string{"id", "nodes", "end"}},
	} {
		if got, want := propKeys(t, c.node), sorted(c.keys); !slices.Equal(got, want) {
			t.Errorf("%s properties = %v, want %v", c.name, got, want)
		}
		if got, want := strList(c.node["required"]), sorted(c.req); !slices.Equal(got, want) {
			t.Errorf("%s required = %v, want %v", c.name, got, want)
		}
	}
	// The reader rejects unknown fields in these objects.
	closed := map[string]map[string]any{
		"top level":         top,
		"jobs[]":            job,
		"running[]":         running,
		"topology":          s.at(t, "properties", "topology"),
		"topology.layout":   s.at(t, "properties", "topology", "properties", "layout"),
		"topology.fat_tree": s.at(t, "properties", "topology", "properties", "fat_tree"),
		"cost":              s.at(t, "properties", "cost"),
		"queues[name]":      s.at(t, "properties", "queues", "additionalProperties"),
	}
	for name, n := range closed {
		if n["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties must be false", name)
		}
	}
	topo := s.at(t, "properties", "topology")
	var kinds []string
	for _, b := range topo["oneOf"].([]any) {
		kinds = append(kinds, strList(b.(map[string]any)["required"])...)
	}
	if want := []string{"fat_tree", "layout", "slurm", "slurm_file"}; !slices.Equal(sorted(kinds), want) {
		t.Errorf("topology oneOf requires %v, want one branch each of %v", kinds, want)
	}
	if got := strList(s.at(t, "properties", "cost", "properties", "model")["enum"]); !slices.Equal(got, []string{"", "lan-code", "lan-paper"}) {
		t.Errorf("cost.model enum = %q, want lan-code, lan-paper and null", got)
	}
	if got := strList(job["properties"].(map[string]any)["pattern"].(map[string]any)["enum"]); !slices.Equal(got,
		sorted([]string{"", model.PatternRD, model.PatternRHVD, model.PatternBinomial})) {
		t.Errorf("jobs[].pattern enum = %q, want rd, rhvd, binomial and null", got)
	}
}

// TestSchemaCommPatternMatchReader checks the job and running-job comm and
// pattern values against the reader: every enum value parses, a value
// outside it does not, and comm takes booleans only.
func TestSchemaCommPatternMatchReader(t *testing.T) {
	s := loadSchema(t)
	job := s.at(t, "properties", "jobs", "items", "properties")
	for _, v := range job["pattern"].(map[string]any)["enum"].([]any) {
		w := minimalWindow()
		w["jobs"].([]any)[0].(map[string]any)["pattern"] = v
		if err := parse(t, w); err != nil {
			t.Errorf("pattern %v from the schema enum: %v", v, err)
		}
	}
	for _, v := range []any{"ring", "RD", "", 1, true} {
		w := minimalWindow()
		w["jobs"].([]any)[0].(map[string]any)["pattern"] = v
		if err := parse(t, w); err == nil || !strings.Contains(err.Error(), "jobs[0].pattern: must be") {
			t.Errorf("pattern %#v outside the schema enum: got %v", v, err)
		}
	}
	for _, c := range []struct {
		path string
		obj  func(w map[string]any) map[string]any
	}{
		{"jobs[0]", func(w map[string]any) map[string]any { return w["jobs"].([]any)[0].(map[string]any) }},
		{"running[0]", func(w map[string]any) map[string]any { return w["running"].([]any)[0].(map[string]any) }},
	} {
		for _, v := range []any{true, false} {
			w := minimalWindow()
			c.obj(w)["comm"] = v
			if err := parse(t, w); err != nil {
				t.Errorf("%s.comm = %v: %v", c.path, v, err)
			}
		}
		for _, v := range []any{"true", 1, []any{}} {
			w := minimalWindow()
			c.obj(w)["comm"] = v
			if err := parse(t, w); err == nil || !strings.Contains(err.Error(), c.path+".comm: must be true or false") {
				t.Errorf("%s.comm = %#v: got %v", c.path, v, err)
			}
		}
	}
	if d := s.at(t, "$defs", "job", "properties", "comm")["default"]; d != true {
		t.Errorf("jobs[].comm default = %v, want true", d)
	}
	if d := s.at(t, "$defs", "runningJob", "properties", "comm")["default"]; d != false {
		t.Errorf("running[].comm default = %v, want false", d)
	}
}

// TestSchemaDescriptions checks that every property the schema declares has
// a description.
func TestSchemaDescriptions(t *testing.T) {
	s := loadSchema(t)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch n := v.(type) {
		case map[string]any:
			if props, ok := n["properties"].(map[string]any); ok {
				for k, p := range props {
					pm, _ := p.(map[string]any)
					if d, _ := pm["description"].(string); strings.TrimSpace(d) == "" {
						t.Errorf("%s.properties.%s has no description", path, k)
					}
				}
			}
			for k, c := range n {
				walk(path+"."+k, c)
			}
		case []any:
			for i, c := range n {
				walk(path+"["+strconv.Itoa(i)+"]", c)
			}
		}
	}
	walk("$", map[string]any(s))
}

// minimalWindow is a small window that windowjson.Parse accepts.
func minimalWindow() map[string]any {
	return map[string]any{
		"time":     100,
		"topology": map[string]any{"layout": map[string]any{"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 4}},
		"idle":     []any{"n0", "n1"},
		"running":  []any{map[string]any{"id": "r", "nodes": "n[2-3]", "end": 200}},
		"jobs":     []any{map[string]any{"id": "a", "nodes": 1, "walltime": 10}},
	}
}

func parse(t *testing.T, w map[string]any) error {
	t.Helper()
	data, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	_, err = windowjson.Parse(data, windowjson.Options{})
	return err
}

// TestSchemaKeysProbeReader cross-checks the schema's keys with the reader
// itself: a key the schema marks optional may be null (null counts as
// absent), a key it marks required must be there, and a key it does not
// list is an unknown field.
func TestSchemaKeysProbeReader(t *testing.T) {
	s := loadSchema(t)
	if err := parse(t, minimalWindow()); err != nil {
		t.Fatalf("minimal window: %v", err)
	}
	for _, c := range []struct {
		path string
		node map[string]any
		obj  func(w map[string]any) map[string]any
	}{
		{"", s.at(t), func(w map[string]any) map[string]any { return w }},
		{"jobs[0].", s.at(t, "properties", "jobs", "items"), func(w map[string]any) map[string]any {
			return w["jobs"].([]any)[0].(map[string]any)
		}},
		{"running[0].", s.at(t, "properties", "running", "items"), func(w map[string]any) map[string]any {
			return w["running"].([]any)[0].(map[string]any)
		}},
		{"cost.", s.at(t, "properties", "cost"), func(w map[string]any) map[string]any {
			w["cost"] = map[string]any{}
			return w["cost"].(map[string]any)
		}},
	} {
		required := strList(c.node["required"])
		for _, k := range propKeys(t, c.node) {
			w := minimalWindow()
			o := c.obj(w)
			if slices.Contains(required, k) {
				delete(o, k)
				if err := parse(t, w); err == nil || !strings.Contains(err.Error(), c.path+k+": required") {
					t.Errorf("without required %s%s: got %v, want %q", c.path, k, err, c.path+k+": required")
				}
				continue
			}
			o[k] = nil
			if err := parse(t, w); err != nil {
				t.Errorf("optional %s%s = null: %v", c.path, k, err)
			}
		}
		w := minimalWindow()
		c.obj(w)["not_in_schema"] = 1
		if err := parse(t, w); err == nil || !strings.Contains(err.Error(), c.path+"not_in_schema: unknown field") {
			t.Errorf("%snot_in_schema: got %v, want an unknown field error", c.path, err)
		}
	}
}

func pattern(t *testing.T, node map[string]any) *regexp.Regexp {
	t.Helper()
	p, ok := node["pattern"].(string)
	if !ok {
		t.Fatalf("schema: no pattern in %v", node)
	}
	re, err := regexp.Compile(p)
	if err != nil {
		t.Fatalf("schema pattern %q: %v", p, err)
	}
	return re
}

// TestSchemaPatternsMatchReader checks the schema's string patterns against
// the reader's parsers. beyond lists strings a pattern accepts that the
// reader rejects for reasons JSON Schema cannot express.
func TestSchemaPatternsMatchReader(t *testing.T) {
	s := loadSchema(t)
	check := func(name string, accepts func(string) bool, reader func(string) bool, ok, bad, beyond []string) {
		t.Helper()
		for _, x := range ok {
			if !reader(x) {
				t.Errorf("%s %q: reader rejects it (bad test case)", name, x)
			}
			if !accepts(x) {
				t.Errorf("%s %q: the reader accepts it, the schema does not", name, x)
			}
		}
		for _, x := range bad {
			if reader(x) {
				t.Errorf("%s %q: reader accepts it (bad test case)", name, x)
			}
			if accepts(x) {
				t.Errorf("%s %q: the reader rejects it, the schema does not", name, x)
			}
		}
		for _, x := range beyond {
			if reader(x) || !accepts(x) {
				t.Errorf("%s %q: want schema accepts (%v), reader rejects (%v)", name, x, accepts(x), !reader(x))
			}
		}
	}

	wt := s.at(t, "$defs", "walltime", "oneOf", "1")
	clock, zero := pattern(t, wt), pattern(t, wt["not"].(map[string]any))
	check("walltime",
		func(x string) bool { return clock.MatchString(x) && !zero.MatchString(x) },
		func(x string) bool { v, err := windowjson.ParseClock(x); return err == nil && v >= 1 && v <= 1<<40 },
		[]string{"1", "59", "60", "3600", "01:00:00", "1:0:0", " 10:00 ", "00:00:01", "100:59:59", "0001:005", "+5", "1:+5", "-0:5", "1:-00", "0:0:1"},
		[]string{"", " ", "0", "00:00", "0:0:0", "-0", "1:60", "1:2:3:4", ":5", "5:", "1::2", "1: 2", "-1", "1:-1", "a", "1.5", "01:00:00s", "1e3", "++1"},
		[]string{"1099511627777", "99999999999999999999"})

	size := pattern(t, s.at(t, "$defs", "size"))
	check("size", size.MatchString,
		func(x string) bool { _, err := model.ParseSize(x); return err == nil },
		[]string{"0", "64", "64gb", "64GB", "64Gb", " 2kb ", "1b", "1B", "3w", "3kw", "3PW", "7mb", "1tb", "1pb"},
		[]string{"", "gb", "64g", "64 gb", "-1", "+1", "1.5gb", "64xb", "64bw", "64wb", "64kbw", "1e3"},
		[]string{"9999999999pb", "99999999999999999999"})

	sel := pattern(t, s.at(t, "$defs", "select"))
	check("select", sel.MatchString,
		func(x string) bool { _, err := model.ParseSelect(x); return err == nil },
		[]string{"ncpus=8", "2:ncpus=8:ngpus=1+1:mem=64gb", "2", " 2 : ncpus = 8 ", "arch=linux", "host=n3:ncpus=1", "a=b=c", "1:x.y-z_w=v", "3+4", "02:ncpus=1"},
		[]string{"", "  ", "0:ncpus=1", "-1:ncpus=1", "x", ":ncpus=1", "ncpus=1:", "ncpus=1+", "+ncpus=1", "ncpus=", "=1", "nc pus=1", "n/c=1", "2:3:ncpus=1", "ncpus=1::mem=1"},
		[]string{"ncpus=abc", "mem=lots", "ncpus=1:ncpus=2", "2000000:ncpus=1"})

	hostlists := []string{"n0", "n[0-3]", " n[0-2,5] ", "tux[0-3,12]", "r[1-2]n[1-2]", "login1,n[1-2]", "n[08-10]", "a , b", "x-y.z", "n[1]"}
	badHostlists := []string{"n[", "n]", "n[]", "n[a-b]", "n[1-]", "n[-1]", "n[1-2-3]", "a,,b", "a,", ",a", "a b", "n[[1]]", "n[1]]", "a\tb"}
	beyondHostlists := []string{"n[5-1]", "n[0-99999999999]"}
	nonEmpty := func(x string) bool { _, err := hostlist.Expand(x); return err == nil }
	for _, p := range [][]string{
		{"properties", "running", "items", "properties", "nodes", "oneOf", "1"},
		{"properties", "node_resources", "propertyNames"},
	} {
		check(strings.Join(p, "."), pattern(t, s.at(t, p...)).MatchString, nonEmpty,
			hostlists, append([]string{"", "  "}, badHostlists...), beyondHostlists)
	}
	// idle also takes a blank string: no idle node.
	check("idle", pattern(t, s.at(t, "properties", "idle", "oneOf", "1")).MatchString,
		func(x string) bool { return strings.TrimSpace(x) == "" || nonEmpty(x) },
		append([]string{"", "  "}, hostlists...), badHostlists, beyondHostlists)

	place := pattern(t, s.at(t, "$defs", "place"))
	check("place", place.MatchString,
		func(x string) bool { _, err := model.ParsePlace(x); return err == nil },
		[]string{"free", "pack", "scatter", "vscatter", "excl", "shared", "exclhost", "scatter:excl", " excl : pack ", "free:shared"},
		[]string{"", " ", "EXCL", "group=switch", "pack:scatter", "excl:shared", "pack:", ":excl", "pack:excl:group=x", "x"},
		nil)

	res := pattern(t, s.at(t, "$defs", "capacities", "propertyNames"))
	for _, x := range []string{"ncpus", "mem", "x.y-z_1"} {
		if !res.MatchString(x) {
			t.Errorf("resource name %q: schema rejects it", x)
		}
	}
	for _, x := range []string{"", "a b", "a=b", "a:b"} {
		if res.MatchString(x) {
			t.Errorf("resource name %q: schema accepts it", x)
		}
	}
}

// TestShippedWindowsUseSchemaKeys checks, lightly, that every window file
// of this folder uses only keys the schema lists, and that Names lists
// exactly those files.
func TestShippedWindowsUseSchemaKeys(t *testing.T) {
	s := loadSchema(t)
	top := propKeys(t, s.at(t))
	job := propKeys(t, s.at(t, "properties", "jobs", "items"))
	running := propKeys(t, s.at(t, "properties", "running", "items"))
	paths, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	var windows []string
	for _, p := range paths {
		if p == schemaFile {
			continue
		}
		windows = append(windows, p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]json.RawMessage
		if err := json.Unmarshal(data, &w); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		for k := range w {
			if !slices.Contains(top, k) {
				t.Errorf("%s: top-level key %q is not in the schema", p, k)
			}
		}
		for _, list := range []struct {
			key  string
			keys []string
		}{{"jobs", job}, {"running", running}} {
			var items []map[string]json.RawMessage
			if raw, ok := w[list.key]; ok && string(raw) != "null" {
				if err := json.Unmarshal(raw, &items); err != nil {
					t.Errorf("%s: %s: %v", p, list.key, err)
					continue
				}
			}
			for i, it := range items {
				for k := range it {
					if !slices.Contains(list.keys, k) {
						t.Errorf("%s: %s[%d] key %q is not in the schema", p, list.key, i, k)
					}
				}
			}
		}
	}
	if len(windows) == 0 {
		t.Fatal("no window files found")
	}
	if got := instances.Names(); !slices.Equal(got, windows) {
		t.Errorf("Names() = %v, want the window files %v (without %s)", got, windows, schemaFile)
	}
}
