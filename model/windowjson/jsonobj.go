package windowjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/internal/jsonkind"
)

// A FieldError reports bad input at a field path of a JSON document, such
// as "jobs[3].nodes: must be at least 1". Every error of Parse is one; the
// readers of output's result and schedule documents use it too.
type FieldError struct {
	// Path leads to the field at fault, as in `jobs[3].nodes` or
	// `queues["q"].expected_wait`; empty for the document as a whole.
	Path string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns "PATH: REASON", or REASON alone when Path is empty.
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

func fieldErr(path, format string, args ...any) error {
	return &FieldError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// jobj is one decoded JSON object with the path that leads to it; it
// remembers which keys were read so that unknown keys can be reported.
type jobj struct {
	path string
	m    map[string]json.RawMessage
	used map[string]bool
}

// decodeValue decodes raw into v with numbers kept as json.Number, and
// describes a type mismatch without Go type names.
func decodeValue(path string, raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fieldErr(path, "must be %s, got %s", wantKind(v), jsonkind.Of(raw))
	}
	return nil
}

func wantKind(v any) string {
	switch v.(type) {
	case *map[string]json.RawMessage:
		return "an object"
	case *[]json.RawMessage:
		return "a list"
	case *string:
		return "a string"
	case *json.Number:
		return "a number"
	case *bool:
		return "true or false"
	}
	return "a value of another type"
}

func newObj(path string, raw json.RawMessage) (*jobj, error) {
	if jsonkind.Of(raw) != "an object" {
		return nil, fieldErr(path, "must be an object, got %s", jsonkind.Of(raw))
	}
	// Read the members one by one, so that a key given twice is an error
	// rather than silently the last value.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return nil, fieldErr(path, "must be an object: %v", err)
	}
	o := &jobj{path: path, m: map[string]json.RawMessage{}, used: map[string]bool{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fieldErr(path, "bad object: %v", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fieldErr(o.sub(key), "bad value: %v", err)
		}
		if _, dup := o.m[key]; dup {
			return nil, fieldErr(o.sub(key), "given twice")
		}
		o.m[key] = v
	}
	return o, nil
}

func (o *jobj) sub(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// get returns the raw value of key, marking it read; ok is false when the
// key is absent or null.
func (o *jobj) get(key string) (json.RawMessage, bool) {
	o.used[key] = true
	raw, ok := o.m[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, false
	}
	return raw, true
}

func (o *jobj) has(key string) bool {
	_, ok := o.get(key)
	return ok
}

// unknown reports the first key (in sorted order) that was never read.
func (o *jobj) unknown() error {
	var extra []string
	for k := range o.m {
		if !o.used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return fieldErr(o.sub(extra[0]), "unknown field")
}

// int returns key as an integer in [lo, hi]; def when absent and not
// required.
func (o *jobj) int(key string, required bool, def, lo, hi int64) (int64, error) {
	raw, ok := o.get(key)
	if !ok {
		if required {
			return 0, fieldErr(o.sub(key), "required")
		}
		return def, nil
	}
	return parseInt(o.sub(key), raw, lo, hi)
}

func parseInt(path string, raw json.RawMessage, lo, hi int64) (int64, error) {
	if k := jsonkind.Of(raw); k != "a number" {
		return 0, fieldErr(path, "must be a number, got %s", k)
	}
	var n json.Number
	if err := decodeValue(path, raw, &n); err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		if f, ferr := n.Float64(); ferr == nil && (f > float64(hi) || f < float64(lo)) {
			return 0, rangeErr(path, n.String(), f > float64(hi), lo, hi)
		}
		return 0, fieldErr(path, "must be an integer, got %s", n)
	}
	if v < lo || v > hi {
		return 0, rangeErr(path, n.String(), v > hi, lo, hi)
	}
	return v, nil
}

// rangeErr says that value (too large when high) is out of [lo, hi].
func rangeErr(path, value string, high bool, lo, hi int64) error {
	switch {
	case hi == maxInt && high:
		return fieldErr(path, "%s is too large (at most %d)", value, hi)
	case hi == maxInt:
		return fieldErr(path, "must be at least %d", lo)
	default:
		return fieldErr(path, "must be between %d and %d", lo, hi)
	}
}

const maxInt = 1<<63 - 1

// str returns key as a string; def when absent and not required.
func (o *jobj) str(key string, required bool, def string) (string, error) {
	raw, ok := o.get(key)
	if !ok {
		if required {
			return "", fieldErr(o.sub(key), "required")
		}
		return def, nil
	}
	var s string
	if err := decodeValue(o.sub(key), raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// id returns key as a job identifier, a string or an integer.
func (o *jobj) id(key string) (string, error) {
	raw, ok := o.get(key)
	if !ok {
		return "", fieldErr(o.sub(key), "required")
	}
	path := o.sub(key)
	switch jsonkind.Of(raw) {
	case "a string":
		var s string
		if err := decodeValue(path, raw, &s); err != nil {
			return "", err
		}
		if strings.TrimSpace(s) == "" {
			return "", fieldErr(path, "must not be empty")
		}
		return s, nil
	case "a number":
		v, err := parseInt(path, raw, 0, maxInt)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(v, 10), nil
	}
	return "", fieldErr(path, "must be a string or a non-negative integer, got %s", jsonkind.Of(raw))
}

// list returns key as a list of raw values.
func (o *jobj) list(key string, required bool) ([]json.RawMessage, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		if required {
			return nil, false, fieldErr(o.sub(key), "required")
		}
		return nil, false, nil
	}
	var l []json.RawMessage
	if err := decodeValue(o.sub(key), raw, &l); err != nil {
		return nil, false, err
	}
	return l, true, nil
}

// objects calls fn on every member of the list under key, each an object
// read at path key[i]; a missing list is empty (an error when required).
func (o *jobj) objects(key string, required bool, fn func(path string, m *jobj) error) error {
	list, _, err := o.list(key, required)
	if err != nil {
		return err
	}
	for i, raw := range list {
		path := fmt.Sprintf("%s[%d]", o.sub(key), i)
		m, err := newObj(path, raw)
		if err != nil {
			return err
		}
		if err := fn(path, m); err != nil {
			return err
		}
	}
	return nil
}

// nodes reads the required, non-empty node list under "nodes".
func (o *jobj) nodes(path string, t *model.Topology) ([]int, error) {
	raw, ok := o.get("nodes")
	if !ok {
		return nil, fieldErr(path+".nodes", "required")
	}
	ids, err := nodeList(path+".nodes", raw, t)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fieldErr(path+".nodes", "must name at least one node")
	}
	return ids, nil
}

// parseSeconds parses a number of seconds or a "[[HH:]MM:]SS" string.
func parseSeconds(path string, raw json.RawMessage, lo, hi int64) (int64, error) {
	if jsonkind.Of(raw) != "a string" {
		return parseInt(path, raw, lo, hi)
	}
	var s string
	if err := decodeValue(path, raw, &s); err != nil {
		return 0, err
	}
	v, err := ParseClock(s)
	if err != nil {
		return 0, fieldErr(path, "%v", err)
	}
	if v < lo || v > hi {
		return 0, fieldErr(path, "must be between %d and %d s", lo, hi)
	}
	return v, nil
}

// ParseClock parses a duration written "[[HH:]MM:]SS" (PBS's walltime form)
// into seconds.
func ParseClock(s string) (int64, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("bad duration %q (want [[HH:]MM:]SS)", s)
	}
	var total int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil || v < 0 || (i > 0 && v >= 60) || v > 1<<40 {
			return 0, fmt.Errorf("bad duration %q (want [[HH:]MM:]SS)", s)
		}
		total = total*60 + v
	}
	return total, nil
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
