// Package output owns what optsched answers: the JSON documents of a
// window solve (ResultDoc, the contract of `optsched solve -o json`) and of
// a time-and-resource schedule (ScheduleDoc) with their readers, the check
// that a document's status, objective, bound and gap agree, the
// conversion of the solver pipelines' answers into documents — one core
// for both pipelines' figures — and the tables for people.
//
// It knows the model and the solver contracts; feasibility stays
// model.Check's business.
package output
