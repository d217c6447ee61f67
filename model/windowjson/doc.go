// Package windowjson is the JSON codec of model.Window, the window format
// (version 1) documented in docs/formats.md and described by
// instances/window.schema.json. It owns:
//
//   - the reader, Parse and Load: a strict reader that rejects unknown
//     fields, keys given twice, numbers written as strings (but for a
//     walltime's "[[HH:]MM:]SS") and anything model's invariants forbid,
//     with every error a *FieldError naming the field path and the reason
//     ("jobs[3].nodes: must be at least 1");
//   - the writer, Marshal, whose output Parse reads back;
//   - ParseClock, the "[[HH:]MM:]SS" durations of walltimes;
//   - ReadFileLimited and ReadLimited, which bound what optsched reads from
//     one input to MaxInputBytes.
//
// The window itself, its topology and its jobs are model's vocabulary; a
// topology given as a Slurm topology.conf is built by model/slurm.
package windowjson
