// Package jsonkind names the JSON type of a raw value for error messages,
// one namer for the readers of external JSON under model (the window
// codec model/windowjson and the PBS readers model/pbs), so that they
// describe a value of the wrong type in the same words.
package jsonkind

import "bytes"

// Of names the JSON type of raw for error messages: "an object", "a list",
// "a string", "a boolean", "null", "a number", or "nothing". It looks at
// the first non-space byte only.
func Of(raw []byte) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
