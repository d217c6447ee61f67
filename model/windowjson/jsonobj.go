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
// Its members are kept in slices, found by a linear search while there
// are few (a job has a dozen at most: maps per object were a third of
// the time of reading a million jobs) and through an index beyond.
type jobj struct {
	path string
	keys []string
	vals []json.RawMessage
	used []bool
	idx  map[string]int // nil while len(keys) <= linearKeys
}

// linearKeys is the most members found by a linear search.
const linearKeys = 16

// find returns the index of key among the members, or -1.
func (o *jobj) find(key string) int {
	if o.idx != nil {
		if i, ok := o.idx[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range o.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// add appends a member; false when key is already one.
func (o *jobj) add(key string, v json.RawMessage) bool {
	if o.find(key) >= 0 {
		return false
	}
	o.keys, o.vals, o.used = append(o.keys, key), append(o.vals, v), append(o.used, false)
	switch {
	case o.idx != nil:
		o.idx[key] = len(o.keys) - 1
	case len(o.keys) > linearKeys:
		o.idx = make(map[string]int, 2*len(o.keys))
		for i, k := range o.keys {
			o.idx[k] = i
		}
	}
	return true
}

// members returns the members as a map, for objects whose keys are
// names (queues, node_resources, capacities, units).
func (o *jobj) members() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(o.keys))
	for i, k := range o.keys {
		m[k] = o.vals[i]
	}
	return m
}

// use marks key as read.
func (o *jobj) use(key string) {
	if i := o.find(key); i >= 0 {
		o.used[i] = true
	}
}

// decodeValue decodes raw into v with numbers kept as json.Number, and
// describes a type mismatch without Go type names.
func decodeValue(path string, raw json.RawMessage, v any) error {
	// The common cases without a Decoder (one allocation per call at
	// most): unescaped strings, numbers, lists and booleans.
	switch p := v.(type) {
	case *string:
		if s, ok := quickString(raw); ok {
			*p = s
			return nil
		}
	case *json.Number:
		if t := bytes.TrimSpace(raw); jsonkind.Of(t) == "a number" {
			*p = json.Number(t)
			return nil
		}
	case *[]json.RawMessage:
		if l, _, err := splitList(raw, -1); err == nil {
			*p = l
			return nil
		}
	case *bool:
		switch string(bytes.TrimSpace(raw)) {
		case "true":
			*p = true
			return nil
		case "false":
			*p = false
			return nil
		}
	}
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
	// Split the members one by one (scan.go: no copies), so that a key
	// given twice is an error rather than silently the last value.
	o := &jobj{path: path}
	bad := func() (*jobj, error) { return nil, fieldErr(path, "must be an object: malformed") }
	i := skipSpace(raw, 0) + 1 // past '{'
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return bad()
		}
		if raw[i] == '}' && len(o.keys) == 0 {
			return o, nil
		}
		if raw[i] != '"' {
			return bad()
		}
		e := skipString(raw, i)
		if e < 0 {
			return bad()
		}
		if e-i-2 > 6*maxString {
			return nil, fieldErr(path, "a key of %d bytes is longer than the limit of %d bytes of one string", e-i-2, maxString)
		}
		key, ok := quickString(raw[i:e])
		if !ok {
			if err := json.Unmarshal(raw[i:e], &key); err != nil {
				return bad()
			}
		}
		if len(key) > maxString {
			return nil, fieldErr(path, "a key of %d bytes is longer than the limit of %d bytes of one string", len(key), maxString)
		}
		i = skipSpace(raw, e)
		if i >= len(raw) || raw[i] != ':' {
			return bad()
		}
		vs := skipSpace(raw, i+1)
		ve := skipValue(raw, vs)
		if ve < 0 {
			return nil, fieldErr(o.sub(key), "bad value")
		}
		if !o.add(key, json.RawMessage(raw[vs:ve:ve])) {
			return nil, fieldErr(o.sub(key), "given twice")
		}
		i = skipSpace(raw, ve)
		if i >= len(raw) {
			return bad()
		}
		switch raw[i] {
		case ',':
			i++
		case '}':
			return o, nil
		default:
			return bad()
		}
	}
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
	i := o.find(key)
	if i < 0 {
		return nil, false
	}
	o.used[i] = true
	raw := o.vals[i]
	if string(bytes.TrimSpace(raw)) == "null" {
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
	for i, k := range o.keys {
		if !o.used[i] {
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
	return decodeString(o.sub(key), raw, maxString)
}

// decodeString decodes the JSON string raw at path, of at most max bytes
// once unescaped (max < 0: no bound beyond the input's). A longer one is
// refused before it is copied when its raw text already says so.
func decodeString(path string, raw json.RawMessage, max int) (string, error) {
	if max >= 0 && len(raw)-2 > max && bytes.IndexByte(raw, '\\') < 0 {
		return "", stringTooLong(path, len(raw)-2, max)
	}
	if max >= 0 && len(raw)-2 > 6*max { // an unescaped byte takes at most 6 raw ones (\u00XX)
		return "", fieldErr(path, "a string of at least %d bytes is longer than the limit of %d bytes of one string (see docs/limits.md)", (len(raw)-2+5)/6, max)
	}
	var s string
	if err := decodeValue(path, raw, &s); err != nil {
		return "", err
	}
	if max >= 0 && len(s) > max {
		return "", stringTooLong(path, len(s), max)
	}
	return s, nil
}

func stringTooLong(path string, n, max int) error {
	return fieldErr(path, "a string of %d bytes is longer than the limit of %d bytes of one string (see docs/limits.md)", n, max)
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
		s, err := decodeString(path, raw, maxString)
		if err != nil {
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

// list returns key as a list of raw values, of at most max elements
// (max < 0: no bound; what names them in the error).
func (o *jobj) list(key string, required bool, max int, what string) ([]json.RawMessage, bool, error) {
	raw, ok := o.get(key)
	if !ok {
		if required {
			return nil, false, fieldErr(o.sub(key), "required")
		}
		return nil, false, nil
	}
	if k := jsonkind.Of(raw); k != "a list" {
		return nil, false, fieldErr(o.sub(key), "must be a list, got %s", k)
	}
	l, n, err := splitList(raw, max)
	if err == errTooMany {
		return nil, false, fieldErr(o.sub(key), "%d %s exceed the limit of %d in one window (see docs/limits.md): split them over several windows, or leave out those that cannot start now", n, what, max)
	}
	if err != nil {
		return nil, false, fieldErr(o.sub(key), "must be a list: malformed")
	}
	return l, true, nil
}

// objects calls fn on every member of the list under key, each an object
// read at path key[i]; a missing list is empty (an error when required).
func (o *jobj) objects(key string, required bool, max int, what string, fn func(path string, m *jobj) error) error {
	list, _, err := o.list(key, required, max, what)
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
