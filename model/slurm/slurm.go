package slurm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/hostlist"
)

// MaxNodes bounds the nodes of a parsed topology.conf, and separately the
// switch names its Switches= hostlists may expand to, so that the work and
// memory of Parse stay bounded on any input.
const MaxNodes = 1 << 20

// MaxLevels bounds the switch levels of a parsed topology.conf. Real trees
// have two to five; the bound keeps the ancestor lists of the topology
// built from it (levels × nodes entries) small on hostile input.
const MaxLevels = 16

// An Error reports a problem with a topology.conf text at a line.
type Error struct {
	// Line is the 1-based number of the line at fault; for a line
	// continued with a trailing backslash, the number of its first
	// physical line. It is 0 when no single line is at fault.
	Line int
	// Msg says what is wrong, e.g. `unknown key "Nodez"`.
	Msg string
}

// Error returns "topology.conf line N: MSG" (or "topology.conf: MSG").
func (e *Error) Error() string {
	if e.Line <= 0 {
		return "topology.conf: " + e.Msg
	}
	return "topology.conf line " + strconv.Itoa(e.Line) + ": " + e.Msg
}

// A Switch is one SwitchName= line of a topology.conf: its name, the line
// it is on, and the node names (a leaf switch) or the switch names (an
// upper switch) it lists, hostlists expanded.
type Switch struct {
	Name     string
	Line     int
	Nodes    []string
	Switches []string
}

// slurmLine is one logical line of topology.conf: continued physical lines
// joined, the comment removed.
type slurmLine struct {
	num  int // first physical line, 1-based
	text string
}

// slurmLines splits text into logical lines as Slurm's config reader does:
// on each physical line everything from '#' on is a comment; a line whose
// last non-blank character is a backslash continues onto the next one, the
// backslash removed and nothing inserted in its place. Blank logical lines
// are dropped.
func slurmLines(text string) []slurmLine {
	var out []slurmLine
	var cur strings.Builder
	start := 0
	for i, phys := range strings.Split(text, "\n") {
		if c := strings.IndexByte(phys, '#'); c >= 0 {
			phys = phys[:c]
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		trimmed := strings.TrimRight(phys, " \t\r\v\f")
		bs := len(trimmed) - len(strings.TrimRight(trimmed, `\`))
		if bs%2 == 1 {
			cur.WriteString(trimmed[:len(trimmed)-1])
			continue
		}
		cur.WriteString(phys)
		if s := cur.String(); strings.TrimSpace(s) != "" {
			out = append(out, slurmLine{num: start, text: s})
		}
		cur.Reset()
	}
	if s := cur.String(); strings.TrimSpace(s) != "" {
		out = append(out, slurmLine{num: start, text: s})
	}
	return out
}

// slurmSwitch is one SwitchName= line.
type slurmSwitch struct {
	name     string
	line     int
	nodes    []string
	switches []string
}

// Parse parses the text of a Slurm topology.conf for the topology/tree
// plugin and returns its switches in the order of their lines.
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
// A leaf switch's nodes are in hostlist order.
//
// Every error is an *Error. It names the line at fault, except for a text
// without any SwitchName= line.
func Parse(text string) ([]Switch, error) {
	var (
		sws       []slurmSwitch
		swByName  = make(map[string]int) // switch name → index in sws
		nodeSw    = make(map[string]int) // node name → index of its switch
		nodeCount int                    // nodes so far
		refCount  int                    // Switches= entries so far
		lineErr   = lineError
	)
	for _, ln := range slurmLines(text) {
		f, err := parseFields(ln)
		if err != nil {
			return nil, err
		}
		name, nodes, switches, hasNodes, hasSwitches := f.name, f.nodes, f.switches, f.hasNodes, f.hasSwitches
		if !f.hasName {
			return nil, lineErr(ln.num, "SwitchName missing")
		}
		if strings.ContainsAny(name, "[],=") {
			return nil, lineErr(ln.num, "bad switch name %q", name)
		}
		if first, dup := swByName[name]; dup {
			return nil, lineErr(ln.num, "switch %q declared again (first at line %d)", name, sws[first].line)
		}
		if owner, clash := nodeSw[name]; clash {
			return nil, lineErr(ln.num, "switch %q has the name of a node under switch %q (line %d)",
				name, sws[owner].name, sws[owner].line)
		}
		switch {
		case hasNodes && hasSwitches:
			return nil, lineErr(ln.num, "switch %q has both Nodes= and Switches=", name)
		case !hasNodes && !hasSwitches:
			return nil, lineErr(ln.num, "switch %q has neither Nodes= nor Switches=", name)
		}
		idx := len(sws)
		swByName[name] = idx
		sws = append(sws, slurmSwitch{name: name, line: ln.num})
		sw := &sws[idx]
		if hasNodes {
			names, err := hostlist.Expand(nodes)
			if err != nil {
				return nil, lineErr(ln.num, "bad hostlist in Nodes= of switch %q: %v", name, err)
			}
			if nodeCount += len(names); nodeCount > MaxNodes {
				return nil, lineErr(ln.num, "more than %d nodes", MaxNodes)
			}
			for _, n := range names {
				if strings.ContainsRune(n, '=') {
					return nil, lineErr(ln.num, "bad node name %q", n)
				}
				if owner, dup := nodeSw[n]; dup {
					return nil, lineErr(ln.num, "node %q is already under switch %q (line %d)",
						n, sws[owner].name, sws[owner].line)
				}
				if s, clash := swByName[n]; clash {
					return nil, lineErr(ln.num, "node %q has the name of switch %q (line %d)",
						n, n, sws[s].line)
				}
				nodeSw[n] = idx
			}
			sw.nodes = names
		} else {
			names, err := hostlist.Expand(switches)
			if err != nil {
				return nil, lineErr(ln.num, "bad hostlist in Switches= of switch %q: %v", name, err)
			}
			if refCount += len(names); refCount > MaxNodes {
				return nil, lineErr(ln.num, "more than %d Switches= entries", MaxNodes)
			}
			sw.switches = names
		}
	}
	if len(sws) == 0 {
		return nil, lineErr(0, "no SwitchName= lines")
	}
	parent, err := resolveParents(sws, swByName, nodeSw)
	if err != nil {
		return nil, err
	}
	if err := checkDepths(sws, parent); err != nil {
		return nil, err
	}
	out := make([]Switch, len(sws))
	for i, s := range sws {
		out[i] = Switch{Name: s.name, Line: s.line, Nodes: s.nodes, Switches: s.switches}
	}
	return out, nil
}

// lineFields are the keys of one line of topology.conf.
type lineFields struct {
	name, nodes, switches                 string
	hasName, hasNodes, hasSwitches, speed bool
}

// parseFields reads the KEY=VALUE fields of a line: each known key at
// most once, with a value (LinkSpeed a whole number, otherwise ignored).
func parseFields(ln slurmLine) (lineFields, error) {
	var f lineFields
	for _, tok := range strings.Fields(ln.text) {
		key, val, ok := strings.Cut(tok, "=")
		if !ok || key == "" {
			return f, lineError(ln.num, "%q is not KEY=VALUE", tok)
		}
		var seen *bool
		var dst *string
		switch strings.ToLower(key) {
		case "switchname":
			seen, dst = &f.hasName, &f.name
		case "nodes":
			seen, dst = &f.hasNodes, &f.nodes
		case "switches":
			seen, dst = &f.hasSwitches, &f.switches
		case "linkspeed":
			seen, dst = &f.speed, new(string)
		default:
			return f, lineError(ln.num, "unknown key %q", key)
		}
		if *seen {
			return f, lineError(ln.num, "key %q given twice", key)
		}
		if val == "" {
			return f, lineError(ln.num, "empty %s=", key)
		}
		if seen == &f.speed {
			if _, err := strconv.ParseUint(val, 10, 32); err != nil {
				return f, lineError(ln.num, "bad LinkSpeed %q (want a whole number)", val)
			}
		}
		*seen, *dst = true, val
	}
	return f, nil
}

// lineError is an *Error at a line.
func lineError(line int, format string, args ...any) error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// resolveParents resolves the Switches= entries in line order: each must
// name a declared switch other than the lister that no earlier line has
// claimed. It returns each switch's parent (-1: a root).
func resolveParents(sws []slurmSwitch, swByName, nodeSw map[string]int) ([]int, error) {
	lineErr := lineError
	parent := make([]int, len(sws))
	for i := range parent {
		parent[i] = -1
	}
	for i, s := range sws {
		for _, c := range s.switches {
			ci, ok := swByName[c]
			switch {
			case !ok:
				if owner, isNode := nodeSw[c]; isNode {
					return nil, lineErr(s.line, "switch %q listed under %q is not declared (it is a node under switch %q, line %d)",
						c, s.name, sws[owner].name, sws[owner].line)
				}
				return nil, lineErr(s.line, "switch %q listed under %q is not declared", c, s.name)
			case ci == i:
				return nil, lineErr(s.line, "switch %q lists itself", s.name)
			case parent[ci] >= 0:
				p := sws[parent[ci]]
				return nil, lineErr(s.line, "switch %q listed under %q is already under %q (line %d)",
					c, s.name, p.name, p.line)
			}
			parent[ci] = i
		}
	}
	return parent, nil
}

// checkDepths walks up from every switch, in line order, to find cycles
// and depths in linear time: a cycle, or a switch more than MaxLevels
// below its root, is an error.
func checkDepths(sws []slurmSwitch, parent []int) error {
	// depth[i] counts the switches above i; -1 is unknown and -2 marks a
	// switch on the walk in progress.
	depth := make([]int, len(sws))
	for i := range depth {
		depth[i] = -1
	}
	var path []int
	for i := range sws {
		path = path[:0]
		j := i
		for j >= 0 && depth[j] == -1 {
			depth[j] = -2
			path = append(path, j)
			j = parent[j]
		}
		if j >= 0 && depth[j] == -2 {
			return cycleErr(sws, parent, j)
		}
		d := -1 // depth of j, the switch above the walk (-1: none)
		if j >= 0 {
			d = depth[j]
		}
		for k := len(path) - 1; k >= 0; k-- {
			d++
			depth[path[k]] = d
			if d >= MaxLevels {
				s := sws[path[k]]
				return lineError(s.line, "switch %q is %d levels below its root switch; at most %d levels are supported",
					s.name, d, MaxLevels)
			}
		}
	}
	return nil
}

// cycleErr reports the cycle of switches through j, at the line of its
// switch that comes first in the file.
func cycleErr(sws []slurmSwitch, parent []int, j int) error {
	first := j
	for k := parent[j]; k != j; k = parent[k] {
		first = min(first, k)
	}
	// Name the cycle upwards from first, eliding the middle of long ones.
	const show = 8
	var b strings.Builder
	b.WriteString("switches form a cycle: " + strconv.Quote(sws[first].name))
	n := 0
	for k := parent[first]; ; k = parent[k] {
		if n++; n < show || k == first {
			b.WriteString(" is under " + strconv.Quote(sws[k].name))
		} else if n == show {
			b.WriteString(" is under ...")
		}
		if k == first {
			break
		}
	}
	return &Error{Line: sws[first].line, Msg: b.String()}
}
