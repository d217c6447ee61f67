package output

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/optsched/optsched/solver"
)

// WriteStats writes an answer's statistics for people (solve -v): a line
// per solver family that took part, "stats FAMILY: name value, ...",
// every field under its name in the answer document's "stats" object
// (nested ones as search.sat_calls), null for a counter the solver does
// not report.
func WriteStats(w io.Writer, st *solver.Stats) {
	v := reflect.ValueOf(st).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsNil() {
			continue
		}
		var parts []string
		statFields(&parts, "", f.Elem())
		fmt.Fprintf(w, "stats %s: %s\n", jsonName(v.Type().Field(i)), strings.Join(parts, ", "))
	}
}

// statFields appends the fields of the struct v, "name value", their
// names prefixed.
func statFields(parts *[]string, prefix string, v reflect.Value) {
	for i := range v.NumField() {
		name := prefix + jsonName(v.Type().Field(i))
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			statFields(parts, name+".", f)
			continue
		}
		*parts = append(*parts, name+" "+statValue(f))
	}
}

// statValue is a counter as JSON spells it.
func statValue(f reflect.Value) string {
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return "null"
		}
		f = f.Elem()
	}
	switch f.Kind() {
	case reflect.Float64:
		return strconv.FormatFloat(f.Float(), 'g', -1, 64)
	case reflect.String:
		return strconv.Quote(f.String())
	}
	return fmt.Sprint(f.Interface())
}

// jsonName is the name of a field in JSON: its tag's, or its own.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
