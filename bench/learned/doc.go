// Package learned holds optsched's learned job-selection designs, each
// trained with the one learning core heuristics/learn (layers, Adam,
// PPO) on the benchmark simulators of bench.
//
// Two designs are built. RLScheduler (D. Zhang et al., SC'20; the
// benchmark of bench/rlscheduler):
//
//   - State: the waiting jobs in submit order, the first MaxVisible = 128
//     visible, Features = 8 values each (Features lists them; the
//     published code's four id-like features — memory, user, group,
//     executable, constant on the Lublin trace — are replaced by
//     features of the queue and the cluster; see docs/learned.md).
//     Feature set 2 (FeatureSet2, the shipped weights') puts F1's two
//     terms, FAge and FLogArea, in place of the two features that are
//     the same for every job of a decision.
//   - Residual policy (RLScheduler.Residual = ResidualF1, the shipped
//     Lublin-1 weights'): the visible jobs are the 128 of the lowest F1
//     key and a job's logit is F1's key, negated and divided by a
//     temperature, plus the kernel's output, a correction whose last
//     layer starts at zero (untrained, the argmax is F1's choice).
//   - Actor: the kernel network, one small MLP 8–32–16–8–1 (ReLU), as
//     published, applied to every visible job alike and giving one
//     logit per job; a softmax over the visible jobs, padding masked
//     (probability exactly 0; only the real rows are computed). The
//     chosen job is the head of the protocol's loop (no backfilling: it
//     waits until it fits).
//   - Critic: an MLP 14–32–16–1 on a summary of the state (the features'
//     means and maxima over the visible jobs, the queue's length, the
//     free nodes): a baseline only.
//   - Training (TrainRLScheduler): PPO with the clipped objective on
//     episodes of 256 consecutive jobs whose start is drawn from the
//     parts of the trace outside the protocol's ten test sequences
//     (TrainingStarts); reward −(mean bounded slowdown of the episode)
//     at its end; advantages by GAE (γ = 1, λ = 0.97) over the critic,
//     with F1's mean bounded slowdown on the same 256 jobs subtracted as
//     an action-independent baseline; Adam, actor 3e-4 and critic 1e-3
//     as published. Optionally (TrainConfig.Imitate) a warm start by
//     imitation of a published policy's choices, and (ValStarts) the
//     weights chosen by their argmax policy's mean on validation
//     sequences that training never touches.
//   - Use: a Chooser for bench/rlscheduler's published loop
//     (ReplayChooser) and for bench/sim's event-driven simulation;
//     argmax by default, sampling on request.
//
// RLSchert (Q. Wang et al., Appl. Sci. 11(20) 9448, 2021), for bench/sim
// (Schert is a sim.JobPicker and sim.Killer):
//
//   - Design (SchertDesign; NewSchertDesign is the default one, the
//     zero value the paper's; each weights file stores its own, and the
//     shipped files' rank key and KillRule2 thresholds were chosen per
//     trace on validation sequences): the SchertVisible = 5 visible jobs
//     are, in the queue design, the job holding an EASY reservation (by
//     default the shortest request) and the first four by the rank key
//     of the others that may start now without delaying it; in the
//     paper's, the 5 oldest (the rest is a backlog count). Each has its
//     predicted length, nodes, wait, whether it may start, whether it
//     was requeued, its request; the cluster's time × nodes occupancy
//     over SchertHorizon = 120 slots by the running jobs' predicted
//     remaining times, pooled to 12 bins of busy share; a slot is the
//     99th-percentile request / 100 (SchertNorm).
//   - Predictor: UserPredictor, bench/predict's user-mape rule online
//     (user-ratio-cond in the paper's design), fed by the ends the
//     simulation shows it.
//   - Picker: a kernel network scoring each visible job and a "void"
//     row (start nothing until the next event) alike; jobs that may not
//     start are masked. The paper's flat MLP over the whole state
//     (SchertFlatSizes; SchertTrainConfig.FlatPicker) is a variant; the
//     kernel won on validation sequences (docs/learned.md). Killer: a
//     kernel network scoring each running job not yet killed (up to 16,
//     longest predicted remaining first) and a no-kill row; a killed job
//     is requeued and restarts from scratch.
//   - Training (TrainRLSchert): imitation of rules (the visible job of
//     the lowest rank key that may start; KillRule2, or KillRule in the
//     paper's design) by cross-entropy, then PPO
//     on the reward −Σ Δt / predicted length over the jobs in the system,
//     scaled per episode by the rule's mean slowdown; a critic on the
//     whole state. Episodes are 256 jobs outside the test sequences.
//   - Measurement: EvalSchert, beside RLSchert's baselines over the same
//     window (WindowGreedy) and bench/sim's full-queue SJF and SAF.
//
// JoSHH (Sun Haisong, 2022; joshh.go, joshh_train.go): a job selector
// (MLP 32–64–32–5) over Q = 5 visible jobs that fit now — the oldest and
// the four shortest requests (or smallest areas, request × nodes), in the
// shipped windows (Reserve) only those that do not delay an EASY
// reservation for the waiting job of the smallest area (on HPC2N it
// starts once it fits) — and the cluster's occupancy over T = 5
// hourly steps, and an allocation selector (MLP 7–16–2) choosing
// depth-first or breadth-first placement per job (sim.Strategy). It runs
// as bench/sim's select policy (JoSHHChooser is a sim.Selector) and is
// trained with PPO on the same core (TrainJoSHH): the job selector on the
// discounted local reward (−Σ wait/run over the waiting jobs, accrued
// between decisions) times the episode's mean normalised turnaround, the
// allocation selector on each placement's CH-cost saving against
// first-fit. EvaluateJoSHH runs it and the heuristics on a trace's test
// sequences. docs/learned.md states every choice where the paper is
// vague.
package learned
