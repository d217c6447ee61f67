package pbsched

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/sched/schedtest"
)

var updateAppliedDocs = flag.Bool("update-applied-docs", false, "rewrite testdata/applied-docs.golden")

// TestAppliedDocs holds the whole text of a plan's documents (the JSON
// of -o json and the audit log, the script or record, the summary) with
// what Apply did: failures, arguments, starts not run, and a dry run
// (the golden file was written when the outcome was a field of Plan).
func TestAppliedDocs(t *testing.T) {
	mk := func() *Plan {
		return &Plan{
			Header: Header{Server: "pbs.example", PBSVersion: "23.06.06", Time: 1764230400, Topology: "switch levels from vnode resource switch",
				Nodes: NodesDoc{Owned: 6, Idle: 4, PartlyUsed: 1, NotFree: map[string]int{"down": 1}, Ignored: 2}, Skipped: []Reason{{"9.s", "queue q9 is not optsched's"}}},
			Starts: []*Start{
				{Job: "1.s", Queue: "workq", Path: PathWhole, Placement: "csp", Why: "asks for whole vnodes", Chunks: []VChunk{{Vnode: "a"}, {Vnode: "b"}}, Cost: 3},
				{Job: "2.s", Queue: "workq", Path: PathPartial, Placement: "first-fit", Why: "shares a vnode", Chunks: []VChunk{{Vnode: "c"}}, Cost: -1},
				{Job: "3.s", Queue: "workq", Path: PathWhole, Placement: "csp", Why: "asks for whole vnodes", Chunks: []VChunk{{Vnode: "d"}}, Cost: 0},
				{Job: "4.s", Queue: "big", Path: PathPartial, Placement: "first-fit", Why: "shares a vnode", Chunks: []VChunk{{Vnode: "e"}}, Cost: -1},
			},
			Deferred:  []Reason{{"5.s", "needs 8 vnodes, 0 idle"}},
			Notes:     []string{"a note"},
			Digest:    "0123456789abcdef0123456789abcdef",
			Selection: SelectionBackfill,
			Order:     OrderFIFO,
		}
	}
	var b strings.Builder
	for _, name := range []string{"failures", "context ends", "dry run"} {
		ctx, cancel := context.WithCancelCause(context.Background())
		var r Runner = &fakeRunner{fail: map[string]bool{"2.s": true, "4.s": true}}
		if name == "context ends" {
			r = &argsRunner{fakeRunner{fail: map[string]bool{"2.s": true}}, cancel}
		}
		p := mk()
		var o *Outcome
		if name != "dry run" {
			o, _ = Apply(ctx, p, r)
		}
		cancel(nil)
		applied := o != nil
		fmt.Fprintf(&b, "== %s\n", name)
		data, err := json.MarshalIndent(p.Doc("qrun", !applied, o), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n", data)
		if err := p.WriteScript(&b, "/opt/pbs/bin/qrun", applied, o); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "summary: %s\n", p.Summary(applied, o))
	}
	schedtest.Golden(t, filepath.Join("testdata", "applied-docs.golden"), b.String(), *updateAppliedDocs)
}
