package trace

import (
	"bytes"
	"strings"
	"testing"
)

// scaleLog: a 10-processor cluster; job 2 is the largest (8 processors
// requested); job 3 requests -1 and ran on 3; job 4 is the partial
// record of a checkpointed job (status 2), kept as it is.
const scaleLog = `; MaxNodes: 10
; MaxProcs: 10
; Installation: test
1 0 5 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1
2 10 0 50 8 -1 -1 8 60 -1 1 2 1 -1 1 -1 -1 -1

3 30.4 1 20 3 -1 -1 -1 30 -1 0 1 1 -1 2 -1 2 -1
4 40 0 10 1 -1 -1 1 10 -1 2 1 1 -1 1 -1 -1 -1
`

func TestScaleSWF(t *testing.T) {
	var out bytes.Buffer
	if err := ScaleSWF(&out, strings.NewReader(scaleLog), ScaleOptions{Nodes: 100, Jobs: 10}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if strings.Contains(text, "MaxNodes") && !strings.Contains(text, "MaxNodes and MaxProcs dropped") || strings.Contains(text, "; MaxProcs") {
		t.Errorf("the size header is kept:\n%s", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	var jobs []string
	for _, l := range lines {
		if !strings.HasPrefix(l, ";") {
			jobs = append(jobs, l)
		}
	}
	want := []string{
		"1 0 5 100 25 -1 -1 25 200 -1 1 1 1 -1 1 -1 -1 -1", // 2 × 100/8 = 25
		"2 10 0 50 100 -1 -1 100 60 -1 1 2 1 -1 1 -1 -1 -1",
		"3 30.4 1 20 38 -1 -1 -1 30 -1 0 1 1 -1 2 -1 2 -1", // 3 × 12.5 = 37.5 → 38; -1 kept
		"4 40 0 10 13 -1 -1 13 10 -1 2 1 1 -1 1 -1 -1 -1",
		// The second copy: submits + 41 (last submit 40, + 1), ids + 4,
		// the preceding job 2 → 6.
		"5 41 5 100 25 -1 -1 25 200 -1 1 1 1 -1 1 -1 -1 -1",
		"6 51 0 50 100 -1 -1 100 60 -1 1 2 1 -1 1 -1 -1 -1",
		"7 71 1 20 38 -1 -1 -1 30 -1 0 1 1 -1 2 -1 6 -1",
		"8 81 0 10 13 -1 -1 13 10 -1 2 1 1 -1 1 -1 -1 -1",
		"9 82 5 100 25 -1 -1 25 200 -1 1 1 1 -1 1 -1 -1 -1",
		"10 92 0 50 100 -1 -1 100 60 -1 1 2 1 -1 1 -1 -1 -1",
	}
	if strings.Join(jobs, "\n") != strings.Join(want, "\n") {
		t.Errorf("job lines\n%s\nwant\n%s", strings.Join(jobs, "\n"), strings.Join(want, "\n"))
	}
	tr, err := ReadSWF(strings.NewReader(text), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Nodes != 100 || tr.NodesFrom != "largest job" || len(tr.Jobs) != 8 || tr.Records.Partial != 2 {
		t.Errorf("read back: %d nodes from %q, %d jobs, %d partial; want 100 from the largest job, 8, 2",
			tr.Nodes, tr.NodesFrom, len(tr.Jobs), tr.Records.Partial)
	}
	if tr.Header["Installation"] != "test" || !strings.Contains(tr.Header["Note"], "x 100/8") {
		t.Errorf("header %v", tr.Header)
	}

	// Nodes 0 and Jobs 0: the log once, the counts as they were.
	out.Reset()
	if err := ScaleSWF(&out, strings.NewReader(scaleLog), ScaleOptions{}); err != nil {
		t.Fatal(err)
	}
	if tr, err := ReadSWF(&out, Options{}); err != nil || tr.Nodes != 8 || len(tr.Jobs) != 3 {
		t.Errorf("unscaled: %v, %+v", err, tr)
	}
	for _, bad := range []string{"1 2 3\n", "x 0 5 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n", ""} {
		if err := ScaleSWF(&out, strings.NewReader(bad), ScaleOptions{Jobs: 1}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if err := ScaleSWF(&out, strings.NewReader(scaleLog), ScaleOptions{Nodes: -1}); err == nil {
		t.Error("negative nodes: no error")
	}
}
