package slurm_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/optsched/optsched/model/slurm"
)

// TestParse: switches come back in line order with their lines (a
// continued line keeps its first), names expanded; an error is an *Error
// at the line at fault. The whole grammar is tested through
// ParseTopology (topology_test.go).
func TestParse(t *testing.T) {
	text := "# a two-level tree\nSwitchName=top Switches=leaf[0-1]\nSwitchName=leaf0 \\\n  Nodes=n[0-1]\nSwitchName=leaf1 Nodes=n2 LinkSpeed=100\n"
	sws, err := slurm.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []slurm.Switch{
		{Name: "top", Line: 2, Switches: []string{"leaf0", "leaf1"}},
		{Name: "leaf0", Line: 3, Nodes: []string{"n0", "n1"}},
		{Name: "leaf1", Line: 5, Nodes: []string{"n2"}},
	}
	if !slices.EqualFunc(sws, want, func(a, b slurm.Switch) bool {
		return a.Name == b.Name && a.Line == b.Line && slices.Equal(a.Nodes, b.Nodes) && slices.Equal(a.Switches, b.Switches)
	}) {
		t.Errorf("got %+v\nwant %+v", sws, want)
	}
	_, err = slurm.Parse("SwitchName=a Nodes=n0\nSwitchName=b Switches=a,c\n")
	var se *slurm.Error
	if !errors.As(err, &se) || se.Line != 2 || err.Error() != `topology.conf line 2: switch "c" listed under "b" is not declared` {
		t.Errorf("undeclared switch: %v", err)
	}
}
