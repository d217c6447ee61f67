package slurm

import (
	"errors"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model"
)

// A TopologyError reports a problem with a topology.conf text that
// ParseTopology was to build a Topology from. It wraps model.ErrTopology.
type TopologyError struct {
	// Line is the 1-based number of the line at fault; for a line
	// continued with a trailing backslash, the number of its first
	// physical line. It is 0 when no single line is at fault.
	Line int
	// Msg says what is wrong, e.g. `unknown key "Nodez"`.
	Msg string
}

// Error returns the message, e.g.
// `model: bad topology: topology.conf line 3: unknown key "Nodez"`.
func (e *TopologyError) Error() string {
	if e.Line <= 0 {
		return model.ErrTopology.Error() + ": topology.conf: " + e.Msg
	}
	return model.ErrTopology.Error() + ": topology.conf line " + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Unwrap returns model.ErrTopology, so that errors.Is(err,
// model.ErrTopology) holds.
func (e *TopologyError) Unwrap() error { return model.ErrTopology }

// ParseTopology parses the text of a Slurm topology.conf for the
// topology/tree plugin and builds its Topology.
//
// Each non-blank line declares one switch with whitespace-separated
// KEY=VALUE pairs: SwitchName=NAME and either Nodes=HOSTLIST (a leaf switch)
// or Switches=HOSTLIST (an upper switch; the hostlist names switches, such
// as s[0-3]). LinkSpeed=N is accepted and ignored. Keys are
// case-insensitive and may come in any order; values are case-sensitive.
// As in Slurm, '#' starts a comment that runs to the end of the line, and a
// trailing backslash joins the next line to this one. Switches may be
// listed under an upper switch before or after their own line. Anything
// else is an error: an unknown or repeated key, a pair without '=', an empty
// value, a bad hostlist, a switch declared twice, a node under two
// switches, a name used for both a node and a switch, a Switches= entry
// that is not declared, is already under another switch or closes a
// cycle, more than 16 switch levels, or more than 2^20 nodes.
//
// Nodes are numbered leaf switch by leaf switch in the order of the lines,
// and within a leaf in hostlist order, as model.BuildTopology does.
//
// Every error is a *TopologyError and wraps model.ErrTopology. It names the
// line at fault, except for a text without any SwitchName= line.
func ParseTopology(text string) (*model.Topology, error) {
	sws, err := Parse(text)
	if err != nil {
		var se *Error
		if errors.As(err, &se) {
			return nil, &TopologyError{Line: se.Line, Msg: se.Msg}
		}
		return nil, &TopologyError{Msg: err.Error()}
	}
	specs := make([]model.SwitchSpec, len(sws))
	for i, s := range sws {
		specs[i] = model.SwitchSpec{Name: s.Name, Nodes: s.Nodes, Switches: s.Switches}
	}
	t, err := model.BuildTopology(specs)
	if err != nil {
		// Not reached: Parse's checks cover BuildTopology's.
		return nil, &TopologyError{Msg: strings.TrimPrefix(err.Error(), model.ErrTopology.Error()+": ")}
	}
	return t, nil
}
