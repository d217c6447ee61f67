package pbs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/internal/jsonkind"
)

// Nodes is the parsed output of `pbsnodes -av -F json`.
type Nodes struct {
	// Timestamp is the server time of the query, seconds since 1970; 0
	// when absent.
	Timestamp int64
	// Version and Server are pbs_version and pbs_server.
	Version, Server string
	// Nodes lists the vnodes in document order.
	Nodes []Node
	// Invalid lists the vnodes ParseNodesLenient left out of Nodes: a
	// name that cannot be used on a qrun line, or an attribute that does
	// not parse. ParseNodes fails on the first instead.
	Invalid []InvalidNode
}

// An InvalidNode is a vnode of pbsnodes that does not parse.
type InvalidNode struct {
	// Name is the vnode's name as pbsnodes gives it.
	Name string
	// Err says what is wrong (an *Error naming the vnode and attribute).
	Err error
}

// A Node is one vnode of pbsnodes -av.
type Node struct {
	// Name is the vnode name.
	Name string
	// State lists the words of the state attribute: "free", or one or
	// more of job-exclusive, job-busy, busy, down, offline,
	// resv-exclusive, state-unknown, provisioning, stale, ... joined by
	// commas in the document.
	State []string
	// Sharing is the sharing attribute (default_shared, default_excl,
	// default_exclhost, ignore_excl, force_excl, force_exclhost); ""
	// when absent, which PBS treats as default_shared.
	Sharing string
	// Queue is the node's queue attribute: when set, only jobs of that
	// queue may run on it.
	Queue string
	// Available holds the numeric resources_available (integers, and
	// sizes in bytes): ncpus, mem, ngpus, custom consumables.
	Available model.Resources
	// Text holds every scalar resources_available as text, numeric ones
	// included (host, vnode, arch, tier0, Qlist, ...).
	Text map[string]string
	// Assigned holds the numeric resources_assigned.
	Assigned model.Resources
	// Jobs are the ids of the jobs on the vnode (each once, without the
	// "/0" slot suffix).
	Jobs []string
}

// Free reports whether the vnode's state is exactly "free": the only state
// in which optsched will start a job on it. A free vnode may still run
// jobs that leave part of it unused.
func (n *Node) Free() bool { return len(n.State) == 1 && n.State[0] == "free" }

// StateText returns the state as PBS writes it ("down,offline").
func (n *Node) StateText() string { return strings.Join(n.State, ",") }

// sharingValues are the values of the vnode sharing attribute.
var sharingValues = map[string]bool{
	"default_shared": true, "default_excl": true, "default_exclhost": true,
	"ignore_excl": true, "force_excl": true, "force_exclhost": true,
}

// integerResources and sizeResources are resources whose values must be
// integers or sizes; a value that is neither is an error. Other resources
// are numeric when their value parses as a size, text otherwise.
var (
	integerResources = map[string]bool{"ncpus": true, "ngpus": true, "nmics": true, "naccelerators": true, "mpiprocs": true, "ompthreads": true, "nodect": true}
	sizeResources    = map[string]bool{"mem": true, "vmem": true, "pmem": true}
)

// ParseNodes parses the output of `pbsnodes -av -F json`. Attributes
// optsched does not use are ignored; every error is an *Error naming the
// vnode and the attribute.
func ParseNodes(data []byte) (*Nodes, error) {
	out, err := ParseNodesLenient(data)
	if err == nil && len(out.Invalid) > 0 {
		return nil, out.Invalid[0].Err
	}
	return out, err
}

// ParseNodesLenient parses as ParseNodes, but a vnode whose name or
// attributes do not parse is listed in Invalid instead of failing the
// whole document, for the caller to judge: a scheduler managing part of
// the cluster ignores such a vnode outside its part. Errors of the
// document itself (not JSON, no nodes object, a vnode listed twice) still
// fail.
func ParseNodesLenient(data []byte) (*Nodes, error) {
	const src = "pbsnodes"
	h, body, err := document(src, data, "nodes")
	if err != nil {
		return nil, err
	}
	out := &Nodes{Timestamp: h.Timestamp, Version: h.Version, Server: h.Server}
	if body == nil {
		return out, nil
	}
	list, dup, err := members(body)
	if err != nil {
		if dup != "" {
			return nil, &Error{Source: src, Object: "node " + dup, Reason: "listed twice"}
		}
		return nil, &Error{Source: src, Field: "nodes", Reason: fmt.Sprintf("must be an object of vnodes, got %s", jsonkind.Of(body))}
	}
	out.Nodes = make([]Node, 0, len(list))
	for _, m := range list {
		n, err := parseNode(m.key, m.val)
		if err != nil {
			out.Invalid = append(out.Invalid, InvalidNode{Name: m.key, Err: err})
			continue
		}
		out.Nodes = append(out.Nodes, n)
	}
	return out, nil
}

func parseNode(name string, raw json.RawMessage) (Node, error) {
	const src = "pbsnodes"
	obj := "node " + name
	bad := func(field, format string, args ...any) error {
		return &Error{Source: src, Object: obj, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	n := Node{Name: name, Available: model.Resources{}, Assigned: model.Resources{}, Text: map[string]string{}}
	if !ValidName(name) {
		return n, &Error{Source: src, Object: fmt.Sprintf("node %q", cut(name)), Reason: "vnode name is empty or contains white space, separators or shell metacharacters"}
	}
	attrs, dup, err := members(raw)
	if err != nil {
		if dup != "" {
			return n, bad(dup, "given twice")
		}
		return n, &Error{Source: src, Object: obj, Reason: fmt.Sprintf("must be an object of attributes, got %s", jsonkind.Of(raw))}
	}
	haveState := false
	for _, a := range attrs {
		if isNull(a.val) {
			continue
		}
		switch a.key {
		case "state":
			s, ok := scalar(a.val)
			if !ok {
				return n, bad(a.key, "must be a string, got %s", jsonkind.Of(a.val))
			}
			for _, w := range strings.Split(s, ",") {
				w = strings.TrimSpace(w)
				if w == "" {
					return n, bad(a.key, "%q has an empty state word", s)
				}
				n.State = append(n.State, w)
			}
			haveState = true
		case "sharing":
			s, _ := scalar(a.val)
			if !sharingValues[s] {
				return n, bad(a.key, "%q is not a sharing value (default_shared, default_excl, default_exclhost, ignore_excl, force_excl, force_exclhost)", cut(s))
			}
			n.Sharing = s
		case "queue":
			n.Queue, _ = scalar(a.val)
		case "resources_available":
			if err := parseNodeResources(a.key, a.val, n.Available, n.Text, bad); err != nil {
				return n, err
			}
		case "resources_assigned":
			if err := parseNodeResources(a.key, a.val, n.Assigned, nil, bad); err != nil {
				return n, err
			}
		case "jobs":
			ids, err := jobList(a.val)
			if err != nil {
				return n, bad(a.key, "%v", err)
			}
			n.Jobs = ids
		}
	}
	if !haveState {
		return n, bad("state", "missing")
	}
	return n, nil
}

// parseNodeResources reads a resources_available or resources_assigned
// object into amounts (numeric values) and text (every scalar, when
// text is not nil).
func parseNodeResources(attr string, raw json.RawMessage, amounts model.Resources, text map[string]string,
	bad func(field, format string, args ...any) error) error {
	res, dup, err := members(raw)
	if err != nil {
		if dup != "" {
			return bad(attr+"."+dup, "given twice")
		}
		return bad(attr, "must be an object, got %s", jsonkind.Of(raw))
	}
	for _, r := range res {
		field := attr + "." + r.key
		if isNull(r.val) {
			continue
		}
		s, ok := scalar(r.val)
		if !ok {
			if integerResources[r.key] || sizeResources[r.key] {
				return bad(field, "must be a number or a size, got %s", jsonkind.Of(r.val))
			}
			continue // an unusual custom resource type; not ours to judge
		}
		if text != nil {
			text[r.key] = s
		}
		switch {
		case integerResources[r.key]:
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || v < 0 || v > maxTime {
				return bad(field, "%q must be a non-negative integer", cut(s))
			}
			amounts[r.key] = v
		case sizeResources[r.key]:
			v, err := model.ParseSize(s)
			if err != nil {
				return bad(field, "%v", err)
			}
			amounts[r.key] = v
		default:
			// Text (host names, switch names) is not a size: skip
			// ParseSize's error message, which costs more than the rest.
			if t := strings.TrimSpace(s); t == "" || t[0] < '0' || t[0] > '9' {
				continue
			}
			if v, err := model.ParseSize(s); err == nil {
				amounts[r.key] = v
			}
		}
	}
	return nil
}

// jobList reads a vnode's jobs attribute: a list of job ids or one
// comma-separated string, each possibly with a "/slot" suffix
// ("123.svr/0"). Ids are returned once each, in order.
func jobList(raw json.RawMessage) ([]string, error) {
	var items []string
	switch jsonkind.Of(raw) {
	case "a list":
		var l []json.RawMessage
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		for i, r := range l {
			s, ok := scalar(r)
			if !ok {
				return nil, fmt.Errorf("entry %d must be a job id, got %s", i, jsonkind.Of(r))
			}
			items = append(items, s)
		}
	default:
		s, ok := scalar(raw)
		if !ok {
			return nil, fmt.Errorf("must be a list of job ids, got %s", jsonkind.Of(raw))
		}
		items = strings.Split(s, ",")
	}
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		id := strings.TrimSpace(it)
		if slash := strings.LastIndexByte(id, '/'); slash >= 0 && slash+1 < len(id) && strings.Trim(id[slash+1:], "0123456789") == "" {
			id = id[:slash] // the slot: "123.svr/0"
		}
		if id == "" || strings.ContainsRune(id, '/') || !ValidName(id) {
			return nil, fmt.Errorf("bad job id %q (want 123.server or 123.server/0)", cut(it))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}
