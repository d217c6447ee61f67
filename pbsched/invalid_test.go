package pbsched

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/optsched/optsched/model/pbs"
)

// TestInvalidVnodeOutsideNodes: a vnode that pbsnodes describes invalidly
// (here a name with a space, which no qrun line can carry) fails the
// cycle when optsched manages it — every vnode, or --nodes naming it —
// and is ignored with a note when it is outside --nodes (issue 36: one
// badly named vnode outside --nodes failed the whole cycle).
func TestInvalidVnodeOutsideNodes(t *testing.T) {
	st, _ := fixtureState(t)
	data, err := os.ReadFile(filepath.Join("..", "model", "pbs", "testdata", "pbsnodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(data), `"nodes":{`, `"nodes":{
        "bad node":{"state":"free","resources_available":{"ncpus":8}},`, 1)
	if _, err := pbs.ParseNodes([]byte(doc)); err == nil {
		t.Fatal("strict ParseNodes accepted the bad vnode")
	}
	if st.Nodes, err = pbs.ParseNodesLenient([]byte(doc)); err != nil || len(st.Nodes.Invalid) != 1 {
		t.Fatalf("lenient: %v, %d invalid", err, len(st.Nodes.Invalid))
	}
	for _, c := range []struct {
		nodes string
		fail  bool
	}{
		{"", true},                    // every vnode is optsched's
		{"n[001-016]", false},         // the bad one is outside
		{"n[001-016],bad node", true}, // named by --nodes
	} {
		_, sc := fixtureState(t)
		sc.NodeList = c.nodes
		if err := sc.ResolveNodes(st.Nodes); err != nil {
			t.Fatalf("--nodes %q: %v", c.nodes, err)
		}
		p, err := Decide(context.Background(), st, sc, Options{})
		switch {
		case c.fail && (err == nil || !strings.Contains(err.Error(), `"bad node"`)):
			t.Errorf("--nodes %q: %v, want an error naming the vnode", c.nodes, err)
		case !c.fail && err != nil:
			t.Errorf("--nodes %q: %v", c.nodes, err)
		case !c.fail:
			if !strings.Contains(strings.Join(p.Notes, "\n"), `node "bad node"`) || len(p.Starts) == 0 {
				t.Errorf("--nodes %q: notes %q, %d starts", c.nodes, p.Notes, len(p.Starts))
			}
		}
	}
}
