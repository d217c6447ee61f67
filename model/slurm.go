package model

import (
	"errors"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/slurm"
)

// maxSlurmNodes and maxSlurmLevels are slurm.MaxNodes and MaxLevels.
const (
	maxSlurmNodes  = slurm.MaxNodes
	maxSlurmLevels = slurm.MaxLevels
)

// A SlurmTopologyError reports a problem with a topology.conf text. It
// wraps ErrTopology.
type SlurmTopologyError struct {
	// Line is the 1-based number of the line at fault; for a line
	// continued with a trailing backslash, the number of its first
	// physical line. It is 0 when no single line is at fault.
	Line int
	// Msg says what is wrong, e.g. `unknown key "Nodez"`.
	Msg string
}

// Error returns the message, e.g.
// `model: bad topology: topology.conf line 3: unknown key "Nodez"`.
func (e *SlurmTopologyError) Error() string {
	if e.Line <= 0 {
		return ErrTopology.Error() + ": topology.conf: " + e.Msg
	}
	return ErrTopology.Error() + ": topology.conf line " + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Unwrap returns ErrTopology, so that errors.Is(err, ErrTopology) holds.
func (e *SlurmTopologyError) Unwrap() error { return ErrTopology }

// ParseSlurmTopology parses the text of a Slurm topology.conf for the
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
// and within a leaf in hostlist order, as BuildTopology does.
//
// Every error is a *SlurmTopologyError and wraps ErrTopology. It names the
// line at fault, except for a text without any SwitchName= line.
func ParseSlurmTopology(text string) (*Topology, error) {
	sws, err := slurm.Parse(text)
	if err != nil {
		var se *slurm.Error
		if errors.As(err, &se) {
			return nil, &SlurmTopologyError{Line: se.Line, Msg: se.Msg}
		}
		return nil, &SlurmTopologyError{Msg: err.Error()}
	}
	specs := make([]SwitchSpec, len(sws))
	for i, s := range sws {
		specs[i] = SwitchSpec{Name: s.Name, Nodes: s.Nodes, Switches: s.Switches}
	}
	t, err := BuildTopology(specs)
	if err != nil {
		// Not reached: slurm.Parse's checks cover BuildTopology's.
		return nil, &SlurmTopologyError{Msg: strings.TrimPrefix(err.Error(), ErrTopology.Error()+": ")}
	}
	return t, nil
}
