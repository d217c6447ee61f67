package windowjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file splits a document Parse has validated (json.Valid) into its
// members and elements without copying: the values are subslices of the
// input. encoding/json's Decoder copied every value once per level and
// allocated per token, which on a 200 MB window of 4.48 million jobs took
// 57 s and 4.5 GB; the splitter reads each byte a few times and keeps
// only the slices.

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string that starts at b[i]
// (a '"'), or -1 when it does not end.
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// The quote ends the string unless an odd run of backslashes
		// escapes it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// skipValue returns the index just past the value that starts at b[i]
// (after any whitespace), or -1 when b holds no complete value there.
func skipValue(b []byte, i int) int {
	i = skipSpace(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				e := skipString(b, i)
				if e < 0 {
					return -1
				}
				i = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	// A number, true, false or null: up to the next delimiter.
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// splitList returns the elements of the list raw (validated JSON), at
// most max of them (max < 0: no bound). Past max it keeps nothing more,
// counts the rest and returns errTooMany with the count.
func splitList(raw []byte, max int) ([]json.RawMessage, int, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, 0, errNotList
	}
	i = skipSpace(raw, i+1)
	out := []json.RawMessage{}
	if i < len(raw) && raw[i] == ']' {
		return out, 0, nil
	}
	n := 0
	for i < len(raw) {
		e := skipValue(raw, i)
		if e < 0 {
			return nil, n, errNotList
		}
		n++
		if max < 0 || n <= max {
			out = append(out, raw[i:e:e])
		}
		i = skipSpace(raw, e)
		if i >= len(raw) {
			break
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			if max >= 0 && n > max {
				return nil, n, errTooMany
			}
			return out, n, nil
		default:
			return nil, n, errNotList
		}
	}
	return nil, n, errNotList
}

type scanError string

func (e scanError) Error() string { return string(e) }

const (
	errNotList scanError = "not a list"
	errTooMany scanError = "too many elements"
)

// quickString returns the text of the JSON string raw when it holds no
// escape and is valid UTF-8 (no copy but the string's); ok is false
// when encoding/json must decode it.
func quickString(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return "", false // escapes, or bytes encoding/json replaces by U+FFFD
	}
	return string(body), true
}
