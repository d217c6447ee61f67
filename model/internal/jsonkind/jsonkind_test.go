package jsonkind

import "testing"

func TestOf(t *testing.T) {
	for raw, want := range map[string]string{
		` {"a": 1}`: "an object", "[]": "a list", `"x"`: "a string", "true": "a boolean", "false": "a boolean",
		"null": "null", "-1.5": "a number", "7": "a number", "": "nothing", " \n\t": "nothing",
	} {
		if got := Of([]byte(raw)); got != want {
			t.Errorf("Of(%q) = %q, want %q", raw, got, want)
		}
	}
}
