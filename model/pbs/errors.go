package pbs

import "strings"

// An Error reports bad PBS input: which document, which job, node or queue,
// which attribute, and why. Its message reads like
//
//	qstat: job 123.pbs01: Resource_List.walltime: "1:xx:00" is not a duration ([[HH:]MM:]SS)
type Error struct {
	// Source names the document: "qstat" (jobs), "pbsnodes" or "queues".
	Source string
	// Object names the job, node or queue at fault ("job 123.pbs01",
	// "node n003"); empty for the document as a whole.
	Object string
	// Field is the attribute path within the object ("Resource_List.select",
	// "resources_available.mem"); empty when the object as a whole is bad.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error joins the non-empty parts: source, object, field, reason.
func (e *Error) Error() string {
	parts := make([]string, 0, 4)
	for _, p := range []string{e.Source, e.Object, e.Field, e.Reason} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}
