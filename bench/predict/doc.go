// Package predict predicts the remaining run time of a running job from
// what an archive log records — the job's requested time, its elapsed
// time, and the same user's jobs that have already finished — and
// measures the predictions' error on the held-out part of a log (optsched
// bench predict).
//
// # Information
//
// A prediction for a job at time t sees a Running (the job's user, its
// requested time, its elapsed time — never its run time) and a History
// that answers only with jobs whose end, start + run, is at or before t
// (History.Finished). Nothing else of the log reaches a predictor, so no
// prediction can use a job that has not finished by t
// (TestNoLeak changes such jobs and checks that the predictions do not
// move). Jobs without a user id have no history.
//
// # Predictors
//
// Each predicts a total run time x and answers the remaining time
// clip(x) − e, where e is the elapsed time and clip bounds x to
// [e, max(request, e)] when the request is known and from below by e
// otherwise: a job has run at least e, and (when it is killed at its
// request) at most its request. A job already past its request (SWF logs
// do not enforce it) is predicted to end now.
//
//   - RequestLeft ("request-left"): x = the request, the remaining time a
//     scheduler without prediction assumes (EASY backfilling's).
//   - UserLast ("user-last"): x = the run time of the user's most recently
//     finished job; the request when the user has none.
//   - UserRatio ("user-ratio"): x = the request × the median of run/request
//     over the user's last K finished jobs with a known request; the
//     request when there are none.
//   - UserRatio with Conditional ("user-ratio-cond"): the same over the
//     user's last K finished jobs that ran longer than e (looking back at
//     most 8K jobs): the median of the jobs like this one that have
//     survived as long, which is what elapsed time tells.
//
// # Evaluation
//
// Evaluate sorts the jobs by submit time (stable) and holds out the last
// 1 − WarmUp of them (30 % by default); the first 70 % serve only as
// history. Every job finished by t is history, held-out ones included,
// as a predictor running on the system would see them. A held-out job is
// evaluated when its run time is at least MinRun (60 s by default) and its
// request is known; for each fraction f (0 and 0.5 by default) it is
// predicted at elapsed e = ⌊f × run⌋, at t = start + e, against the actual
// remaining time run − e. The absolute percentage error is
// 100 × |predicted − actual| / actual, and MAPE its mean over the
// evaluated jobs; the median is reported beside.
//
// FromTrace takes the jobs of a trace read with trace.Options.KeepSWF:
// jobs whose wait or run time the log does not give are dropped (their
// start or end is unknown), as are jobs whose run time is unknown.
//
// RLSchert [Wang21] reports, on its own private VASP jobs, an overall MAPE
// of 110.8 % for its user-behaviour predictor and 39.8 % for XGBoost
// (Published); they are printed beside for reference, measured on other
// data with other features.
//
// References:
//
//   - [Wang21] Q. Wang et al., "RLSchert: An HPC Job Scheduler Using Deep
//     Reinforcement Learning and Remaining Time Prediction", Applied
//     Sciences 11(20) 9448, 2021.
package predict
