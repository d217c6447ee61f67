package pbs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/optsched/optsched/model/internal/jsonkind"
)

// member is one key of a JSON object with its raw value, in document order.
type member struct {
	key string
	val json.RawMessage
}

// errNotObject and errDupKey are the two ways members can fail on valid
// JSON; callers turn them into an *Error naming the place.
var (
	errNotObject = errors.New("not an object")
	errDupKey    = errors.New("key given twice")
	errMalformed = errors.New("malformed object")
)

// members returns the members of the JSON object raw in document order.
// A key given twice is an error (dupKey names it): PBS never writes one,
// and silently keeping the last would hide a broken file.
//
// raw comes from a document that json.Valid accepted, so members only
// splits it: it finds where each key and value ends, tracking strings and
// nesting, without decoding (encoding/json's Decoder.Token made parsing
// pbsnodes of 2,000 vnodes take tens of milliseconds). Malformed input
// still gets an error, never a panic.
func members(raw json.RawMessage) (ms []member, dupKey string, err error) {
	t := bytes.TrimSpace(raw)
	if jsonkind.Of(t) != "an object" {
		return nil, "", errNotObject
	}
	bad := errMalformed
	i := skipSpace(t, 1)
	if i < len(t) && t[i] == '}' {
		return nil, "", nil
	}
	// Keys seen: by a scan of ms while the object is small (most are:
	// a vnode's or a job's attributes), by a map beyond.
	const scanKeys = 16
	var seen map[string]bool
	ms = make([]member, 0, 8)
	for {
		if i >= len(t) || t[i] != '"' {
			return nil, "", bad
		}
		end := scanString(t, i)
		if end < 0 {
			return nil, "", bad
		}
		var key string
		if bytes.IndexByte(t[i:end], '\\') >= 0 || !isASCII(t[i:end]) {
			// Escapes, and invalid UTF-8 that encoding/json replaces.
			if json.Unmarshal(t[i:end], &key) != nil {
				return nil, "", bad
			}
		} else {
			key = string(t[i+1 : end-1])
		}
		i = skipSpace(t, end)
		if i >= len(t) || t[i] != ':' {
			return nil, "", bad
		}
		i = skipSpace(t, i+1)
		vend := scanValue(t, i)
		if vend < 0 {
			return nil, "", bad
		}
		if seen != nil {
			if seen[key] {
				return nil, key, errDupKey
			}
			seen[key] = true
		} else {
			for _, m := range ms {
				if m.key == key {
					return nil, key, errDupKey
				}
			}
			if len(ms)+1 == scanKeys {
				seen = make(map[string]bool, 2*scanKeys)
				for _, m := range ms {
					seen[m.key] = true
				}
				seen[key] = true
			}
		}
		ms = append(ms, member{key, json.RawMessage(t[i:vend])})
		i = skipSpace(t, vend)
		if i >= len(t) {
			return nil, "", bad
		}
		switch t[i] {
		case ',':
			i = skipSpace(t, i+1)
		case '}':
			return ms, "", nil
		default:
			return nil, "", bad
		}
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func skipSpace(t []byte, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index just after the JSON string starting at
// t[i] (a quote), or -1.
func scanString(t []byte, i int) int {
	for j := i + 1; j < len(t); j++ {
		switch t[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// scanValue returns the index just after the JSON value starting at t[i],
// or -1.
func scanValue(t []byte, i int) int {
	if i >= len(t) {
		return -1
	}
	switch t[i] {
	case '"':
		return scanString(t, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(t); j++ {
			switch t[j] {
			case '"':
				e := scanString(t, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(t) && bytes.IndexByte([]byte(",}] \t\n\r"), t[j]) < 0 {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// scalar returns the text of a JSON string, number or boolean: a string
// unquoted, a number as written (PBS prints numeric-looking strings
// without quotes), true and false as PBS spells booleans ("True",
// "False"). ok is false for null, objects and lists.
func scalar(raw json.RawMessage) (text string, ok bool) {
	switch jsonkind.Of(raw) {
	case "a string":
		if t := bytes.TrimSpace(raw); len(t) >= 2 && t[len(t)-1] == '"' && bytes.IndexByte(t, '\\') < 0 && isASCII(t) {
			// No escapes and plain ASCII: the text between the quotes
			// (what json.Unmarshal gives, without its reflection).
			return string(t[1 : len(t)-1]), true
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case "a number":
		return string(bytes.TrimSpace(raw)), true
	case "a boolean":
		if string(bytes.TrimSpace(raw)) == "true" {
			return "True", true
		}
		return "False", true
	}
	return "", false
}

// isNull reports whether raw is JSON null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// header is the common top of every PBS JSON document.
type header struct {
	Timestamp int64
	Version   string
	Server    string
}

// document checks that data is a JSON object (repairing PBS's bare words
// if needed), reads the common header and returns the raw value of the
// member named list (nil when absent: PBS omits "Jobs" when there are
// none).
func document(source string, data []byte, list string) (header, json.RawMessage, error) {
	var h header
	if !json.Valid(data) {
		fixed, ok := repairBareWords(data)
		if !ok || !json.Valid(fixed) {
			return h, nil, &Error{Source: source, Reason: syntaxReason(data)}
		}
		data = fixed
	}
	ms, dup, err := members(data)
	switch {
	case errors.Is(err, errNotObject):
		return h, nil, &Error{Source: source, Reason: fmt.Sprintf("must be a JSON object, got %s", jsonkind.Of(data))}
	case errors.Is(err, errDupKey):
		return h, nil, &Error{Source: source, Field: dup, Reason: "given twice"}
	case err != nil:
		return h, nil, &Error{Source: source, Reason: err.Error()}
	}
	var body json.RawMessage
	for _, m := range ms {
		switch m.key {
		case "timestamp":
			t, ok := scalar(m.val)
			n, err := strconv.ParseInt(t, 10, 64)
			if !ok || err != nil || n < 0 || n > maxTime {
				return h, nil, &Error{Source: source, Field: "timestamp", Reason: fmt.Sprintf("must be seconds since 1970, got %s", short(m.val))}
			}
			h.Timestamp = n
		case "pbs_version":
			h.Version, _ = scalar(m.val)
		case "pbs_server":
			h.Server, _ = scalar(m.val)
		case list:
			if !isNull(m.val) {
				body = m.val
			}
		}
	}
	return h, body, nil
}

// syntaxReason describes why data is not JSON, with a line and column.
func syntaxReason(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := 1, 1
		for _, c := range data[:min(int(se.Offset), len(data))] {
			if c == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Sprintf("not valid JSON at line %d, column %d: %v", line, col, se)
	}
	if err != nil {
		return fmt.Sprintf("not valid JSON: %v", err)
	}
	return "not valid JSON"
}

// repairBareWords quotes the bare words PBS's JSON writer can print for
// string values that look numeric but are not JSON numbers (inf, nan,
// 007, 1.2.3): outside strings, every run of characters that is not
// structural, not white space and not a JSON literal or number becomes a
// string. ok is false when there was nothing to repair.
func repairBareWords(data []byte) (out []byte, ok bool) {
	var b bytes.Buffer
	b.Grow(len(data) + 64)
	inStr, esc := false, false
	for i := 0; i < len(data); {
		c := data[i]
		if inStr {
			b.WriteByte(c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			i++
			continue
		}
		switch c {
		case '"':
			inStr = true
			b.WriteByte(c)
			i++
			continue
		case '{', '}', '[', ']', ',', ':', ' ', '\t', '\n', '\r':
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(data) && !strings.ContainsRune("{}[],: \t\n\r\"", rune(data[j])) {
			j++
		}
		word := data[i:j]
		if isJSONWord(word) {
			b.Write(word)
		} else {
			q, _ := json.Marshal(string(word))
			b.Write(q)
			ok = true
		}
		i = j
	}
	return b.Bytes(), ok
}

// isJSONWord reports whether w is a JSON literal or number.
func isJSONWord(w []byte) bool {
	switch string(w) {
	case "true", "false", "null":
		return true
	}
	var n json.Number
	return json.Unmarshal(w, &n) == nil
}

// short quotes a raw value for a message, cut to 60 bytes.
func short(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// maxTime bounds times and durations read from PBS (about 35,000 years in
// seconds), as model does, so that sums of times cannot overflow.
const maxTime = 1 << 40
