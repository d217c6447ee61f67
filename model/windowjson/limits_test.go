package windowjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setLimit lowers one of the reader's limits for a test.
func setLimit(t *testing.T, p *int, v int) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// genWindow writes a window of the 25×4×10 layout with jobs waiting jobs
// and running running jobs (one node each), job ids of idLen bytes.
func genWindow(jobs, running, idLen int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"time": 100, "topology": {"layout": {"pods": 25, "leaves_per_pod": 4, "nodes_per_leaf": 10}}, "idle": "n[500-999]", "running": [`)
	for i := range running {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id": "r%d", "nodes": ["n%d"], "end": 200}`, i, i)
	}
	b.WriteString(`], "jobs": [`)
	for i := range jobs {
		if i > 0 {
			b.WriteByte(',')
		}
		id := fmt.Sprintf("j%d", i)
		if idLen > len(id) {
			id += strings.Repeat("x", idLen-len(id))
		}
		fmt.Fprintf(&b, `{"id": %q, "nodes": %d, "walltime": 60}`, id, 1+i%7)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// TestCountLimits: a window of more waiting or running jobs than the
// limits is refused naming the list, the count, the limit and what to
// change; one at the limits is read.
func TestCountLimits(t *testing.T) {
	setLimit(t, &maxJobs, 20)
	setLimit(t, &maxRunning, 5)
	w, err := Parse(genWindow(20, 5, 0), Options{})
	if err != nil || len(w.Jobs) != 20 || len(w.Running) != 5 {
		t.Fatalf("at the limits: %v", err)
	}
	_, err = Parse(genWindow(21, 0, 0), Options{})
	for _, want := range []string{"jobs: 21 waiting jobs exceed the limit of 20", "split them"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("21 jobs: %v, want %q", err, want)
		}
	}
	if _, err = Parse(genWindow(1, 6, 0), Options{}); err == nil || !strings.Contains(err.Error(), "running: 6 running jobs exceed the limit of 5") {
		t.Errorf("6 running: %v", err)
	}
}

// TestStringLimit: a job id, a node name or a key past the string limit
// is refused naming its field and both lengths; topology.slurm and
// hostlists are bounded by the input alone.
func TestStringLimit(t *testing.T) {
	setLimit(t, &maxString, 64)
	if _, err := Parse(genWindow(3, 0, 64), Options{}); err != nil {
		t.Fatalf("ids of 64 bytes: %v", err)
	}
	_, err := Parse(genWindow(3, 0, 65), Options{})
	if err == nil || !strings.Contains(err.Error(), "jobs[0].id: a string of 65 bytes is longer than the limit of 64 bytes") {
		t.Errorf("id of 65 bytes: %v", err)
	}
	// Escapes count once unescaped; a raw text beyond 6× the limit is
	// refused before it is decoded.
	esc := `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}}, "idle": [], "jobs": [{"id": "` +
		strings.Repeat(`\u0041`, 64) + `", "nodes": 1, "walltime": 1}]}`
	if _, err := Parse([]byte(esc), Options{}); err != nil {
		t.Errorf("an escaped id of 64 bytes: %v", err)
	}
	if _, err := Parse([]byte(strings.Replace(esc, `\u0041`, `\u0041\u0041`, 1)), Options{}); err == nil || !strings.Contains(err.Error(), "65 bytes") {
		t.Errorf("an escaped id of 65 bytes: %v", err)
	}
	long := strings.Repeat("y", 1000)
	for name, doc := range map[string]string{
		"node name": `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}}, "idle": ["` + long + `"], "jobs": []}`,
		"key":       `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}}, "idle": [], "jobs": [], "` + long + `": 1}`,
		"queue":     `{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}}, "idle": [], "jobs": [{"id": 1, "nodes": 1, "walltime": 1, "queue": "` + long + `"}]}`,
	} {
		if _, err := Parse([]byte(doc), Options{}); err == nil || !strings.Contains(err.Error(), "1000 bytes is longer than the limit of 64") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// topology.slurm: 100 switch lines, far past 64 bytes.
	var conf strings.Builder
	for i := range 100 {
		fmt.Fprintf(&conf, "SwitchName=s%d Nodes=n%d\\n", i, i)
	}
	doc := `{"time": 0, "topology": {"slurm": "` + conf.String() + `"}, "idle": "n[0-99]", "jobs": []}`
	if w, err := Parse([]byte(doc), Options{}); err != nil || len(w.Idle) != 100 {
		t.Errorf("a long topology.slurm: %v", err)
	}
}

// TestSplitterMatchesDecoder: the splitter keeps exactly the members and
// elements encoding/json sees, escapes and nesting included.
func TestSplitterMatchesDecoder(t *testing.T) {
	for _, doc := range []string{
		`{}`, `{"a": 1}`, ` { "a" : [1, {"b": "x\"}]"}, []] , "c\\": "\\", "d": null, "e": -1.5e3, "f": true } `,
		`{"\u0041": "\"", "s": "a\\\"b", "n": [[], [[]], {}], "z": "}"}`,
	} {
		o, err := newObj("", []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		m := o.members()
		if len(m) != len(want) {
			t.Errorf("%s: %d members, want %d", doc, len(m), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(m[k]), bytes.TrimSpace(v)) {
				t.Errorf("%s: member %q = %s, want %s", doc, k, m[k], v)
			}
			if bytes.HasPrefix(v, []byte("[")) {
				l, _, err := splitList(v, -1)
				var wl []json.RawMessage
				json.Unmarshal(v, &wl)
				if err != nil || len(l) != len(wl) {
					t.Errorf("%s: list %s: %d elements (%v), want %d", doc, v, len(l), err, len(wl))
				}
			}
		}
	}
}

// TestManyMembers: past linearKeys members an object is indexed; a key
// given twice is still found, early or late.
func TestManyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		fmt.Fprintf(&b, `"k%d": %d, `, i, i)
	}
	doc := b.String()
	o, err := newObj("", []byte(doc+`"end": 0}`))
	if err != nil || len(o.members()) != 41 {
		t.Fatalf("41 members: %v", err)
	}
	for _, k := range []string{"k0", "k16", "k39", "end"} {
		if raw, ok := o.get(k); !ok || (k != "end" && string(raw) != strings.TrimPrefix(k, "k")) {
			t.Errorf("get %s = %s, %v", k, raw, ok)
		}
	}
	for _, dup := range []string{"k3", "k30"} {
		if _, err := newObj("", []byte(doc+`"`+dup+`": 1}`)); err == nil || !strings.Contains(err.Error(), dup+": given twice") {
			t.Errorf("%s twice: %v", dup, err)
		}
	}
}

// endless is a reader that never ends, of one byte.
type endless struct {
	b    byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

// TestReadJSONStopsEarly: /dev/zero and a binary input stop at their
// first byte, having read at most a chunk; an endless stream of white
// space stops at the byte limit; a file larger than it is refused by its
// size; a document is returned as read.
func TestReadJSONStopsEarly(t *testing.T) {
	z := &endless{b: 0}
	if _, err := ReadJSON(z, "stdin", 0); err == nil || !strings.Contains(err.Error(), "stdin: byte 0x00 at offset 0") {
		t.Errorf("zeros: %v", err)
	}
	if z.read > readChunk {
		t.Errorf("zeros: read %d bytes before stopping", z.read)
	}
	if _, err := ReadJSONFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "byte 0x00") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := ReadJSON(strings.NewReader("  \n<html>"), "x", 0); err == nil || !strings.Contains(err.Error(), `byte '<' at offset 3 begins no JSON value`) {
		t.Errorf("html: %v", err)
	}
	old := inputLimit
	inputLimit = 3 * readChunk
	defer func() { inputLimit = old }()
	sp := &endless{b: ' '}
	if _, err := ReadJSON(sp, "stdin", 0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d bytes", inputLimit)) {
		t.Errorf("spaces: %v", err)
	}
	if sp.read > int(inputLimit)+readChunk {
		t.Errorf("spaces: read %d bytes past the limit", sp.read)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, bytes.Repeat([]byte(" "), int(inputLimit)+1), 0o644)
	if _, err := ReadJSONFile(big); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes, larger than", inputLimit+1)) {
		t.Errorf("big file: %v", err)
	}
	doc := genWindow(5000, 10, 0) // several chunks
	for _, size := range []int64{0, int64(len(doc))} {
		got, err := ReadJSON(io.MultiReader(bytes.NewReader(doc[:100]), bytes.NewReader(doc[100:])), "doc", size)
		if err != nil || !bytes.Equal(got, doc) {
			t.Errorf("size %d: %d bytes (%v), want the %d of the document", size, len(got), err, len(doc))
		}
	}
}

// FuzzReadJSON: ReadJSON returns its input unchanged or refuses it; it
// refuses no valid JSON text but for its size.
func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(`{"time": 1}`))
	f.Add([]byte("\x00"))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Add([]byte(` "a\tb" `))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, size := range []int64{0, int64(len(data))} {
			got, err := ReadJSON(bytes.NewReader(data), "in", size)
			if err == nil && !bytes.Equal(got, data) {
				t.Fatalf("size %d: returned %q for %q", size, got, data)
			}
			if err != nil && json.Valid(data) {
				t.Fatalf("size %d: refused valid JSON %q: %v", size, data, err)
			}
		}
	})
}

// FuzzParse: Parse never panics, and the splitter agrees with
// encoding/json on the members of every valid object it reads.
func FuzzParse(f *testing.F) {
	f.Add(genWindow(3, 2, 0))
	f.Add([]byte(`{"time": 0, "topology": {"layout": {"pods": 1, "leaves_per_pod": 1, "nodes_per_leaf": 2}}, "idle": ["n0"], "jobs": [{"id": "\u0041", "nodes": 1, "walltime": "1:00"}]}`))
	f.Add([]byte(`{"a": [1, "]", {"b": "\\"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		Parse(data, Options{})
		if !json.Valid(data) || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			return
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(data, &want) != nil {
			return
		}
		o, err := newObj("", data)
		if err != nil {
			if strings.Contains(err.Error(), "given twice") || strings.Contains(err.Error(), "longer than the limit") {
				return
			}
			t.Fatalf("%q: %v", data, err)
		}
		m := o.members()
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(m[k]), bytes.TrimSpace(v)) {
				t.Fatalf("%q: member %q = %s, want %s", data, k, m[k], v)
			}
		}
	})
}
