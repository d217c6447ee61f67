package pbs

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/optsched/optsched/model/internal/jsonkind"
)

// A Queue is one queue of `qstat -Q -f`.
type Queue struct {
	Name string
	// Type is queue_type: "Execution" or "Route".
	Type string
	// Enabled: the queue accepts new jobs. Started: jobs in it may run.
	Enabled, Started bool
}

// Execution reports whether jobs in the queue can be run (qrun requires an
// execution queue).
func (q *Queue) Execution() bool { return strings.EqualFold(q.Type, "Execution") }

// Queues is the parsed queue list.
type Queues struct {
	Timestamp       int64
	Version, Server string
	Queues          []Queue
}

// Lookup returns the queue called name.
func (qs *Queues) Lookup(name string) (*Queue, bool) {
	for i := range qs.Queues {
		if qs.Queues[i].Name == name {
			return &qs.Queues[i], true
		}
	}
	return nil, false
}

// ParseQueues parses the output of `qstat -Q -f -F json`, or the plain
// text of `qstat -Q -f` (pbs_snapshot keeps only the text, in
// server/qstat_Qf.out): "Queue: NAME" lines followed by indented
// "attribute = value" lines. Every queue needs a queue_type.
func ParseQueues(data []byte) (*Queues, error) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && t[0] == '{' {
		return parseQueuesJSON(data)
	}
	return parseQueuesText(data)
}

func parseQueuesJSON(data []byte) (*Queues, error) {
	const src = "queues"
	h, body, err := document(src, data, "Queue")
	if err != nil {
		return nil, err
	}
	out := &Queues{Timestamp: h.Timestamp, Version: h.Version, Server: h.Server}
	if body == nil {
		return out, nil
	}
	list, dup, err := members(body)
	if err != nil {
		if dup != "" {
			return nil, &Error{Source: src, Object: "queue " + dup, Reason: "listed twice"}
		}
		return nil, &Error{Source: src, Field: "Queue", Reason: fmt.Sprintf("must be an object of queues, got %s", jsonkind.Of(body))}
	}
	for _, m := range list {
		q := Queue{Name: m.key}
		attrs, dup, err := members(m.val)
		if err != nil {
			if dup != "" {
				return nil, &Error{Source: src, Object: "queue " + m.key, Field: dup, Reason: "given twice"}
			}
			return nil, &Error{Source: src, Object: "queue " + m.key, Reason: fmt.Sprintf("must be an object of attributes, got %s", jsonkind.Of(m.val))}
		}
		kv := map[string]string{}
		for _, a := range attrs {
			if s, ok := scalar(a.val); ok {
				kv[a.key] = s
			}
		}
		if err := q.fill(kv); err != nil {
			return nil, err
		}
		out.Queues = append(out.Queues, q)
	}
	return out, nil
}

func parseQueuesText(data []byte) (*Queues, error) {
	const src = "queues"
	out := &Queues{}
	var cur *Queue
	kv := map[string]string{}
	flush := func() error {
		if cur == nil {
			return nil
		}
		if err := cur.fill(kv); err != nil {
			return err
		}
		out.Queues = append(out.Queues, *cur)
		return nil
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
		case strings.HasPrefix(line, "Queue:"):
			if err := flush(); err != nil {
				return nil, err
			}
			name := strings.TrimSpace(strings.TrimPrefix(line, "Queue:"))
			if name == "" {
				return nil, &Error{Source: src, Reason: fmt.Sprintf("line %d: queue without a name", i+1)}
			}
			if seen[name] {
				return nil, &Error{Source: src, Object: "queue " + name, Reason: fmt.Sprintf("listed twice (line %d)", i+1)}
			}
			seen[name] = true
			cur, kv = &Queue{Name: name}, map[string]string{}
		case line[0] == '\t' && cur != nil:
			// A continuation of a long value; no attribute we use wraps.
		case cur == nil:
			return nil, &Error{Source: src, Reason: fmt.Sprintf("line %d: %q before the first \"Queue:\" line (want qstat -Q -f output)", i+1, cut(trimmed))}
		default:
			k, v, ok := strings.Cut(trimmed, "=")
			if !ok {
				return nil, &Error{Source: src, Object: "queue " + cur.Name, Reason: fmt.Sprintf("line %d: %q is not attribute = value", i+1, cut(trimmed))}
			}
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(out.Queues) == 0 {
		return nil, &Error{Source: src, Reason: "no queues (want qstat -Q -f output, JSON or text)"}
	}
	return out, nil
}

// fill sets the queue's fields from its attributes.
func (q *Queue) fill(kv map[string]string) error {
	bad := func(field, format string, args ...any) error {
		return &Error{Source: "queues", Object: "queue " + q.Name, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	t, ok := kv["queue_type"]
	if !ok {
		return bad("queue_type", "missing")
	}
	switch strings.ToLower(t) {
	case "execution", "e":
		q.Type = "Execution"
	case "route", "r":
		q.Type = "Route"
	default:
		return bad("queue_type", "%q is neither Execution nor Route", cut(t))
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{"enabled", &q.Enabled}, {"started", &q.Started}} {
		v, ok := kv[f.key]
		if !ok {
			continue // PBS prints both; absent means False
		}
		switch strings.ToLower(v) {
		case "true", "t", "y", "1":
			*f.dst = true
		case "false", "f", "n", "0":
		default:
			return bad(f.key, "%q is not True or False", cut(v))
		}
	}
	return nil
}
