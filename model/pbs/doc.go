// Package pbs reads the state of an OpenPBS / PBS Professional server into
// optsched's model types: the JSON that `qstat -f -F json` writes for jobs,
// that `pbsnodes -av -F json` writes for vnodes, and the queue list of
// `qstat -Q -f -F json` (or its plain-text form, which is what pbs_snapshot
// keeps in server/qstat_Qf.out). It also builds a model.Topology from
// custom vnode resources that name switch levels (ALCF-style tier0/tier1).
//
// pbs parses; it decides nothing. Which jobs may start and where is the
// business of the command that uses it (`optsched pbs plan`). Every
// function here is pure: bytes in, values or an *Error out, never a panic,
// and the readers are fuzzed.
//
// Formats follow PBS Professional 2022.1 / OpenPBS 22: a top-level object
// {"timestamp": …, "pbs_version": …, "pbs_server": …, "Jobs": {id: {…}}}
// (or "nodes", or "Queue"), attribute names as in pbs_job_attributes(7B)
// and pbs_node_attributes(7B), resources in nested objects
// ("Resource_List", "resources_available", "resources_assigned"). PBS's
// JSON writer prints values that look numeric without quotes, so every
// string-valued field also accepts a number (a custom string resource
// tier1 = 7 arrives as 7), and a document that is not valid JSON because a
// value such as inf or 007 was printed bare is repaired by quoting such
// bare words before it is rejected.
package pbs
