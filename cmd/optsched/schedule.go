package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/output"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// This file wires the time-and-resource model of Bridi et al. (optsched
// solve --encoding cp, export --format cnf) into the command line.

// cpScheduler builds the scheduler of the time-and-resource model a
// --solver or --heuristic names (catalog.Scheduler); errors are usage
// errors.
func cpScheduler(name string, initial bool, progress io.Writer, chWeight float64) (solver.Scheduler, error) {
	if chWeight != 0 && name != "sat" {
		return nil, usageError{fmt.Errorf("--ch-weight applies to the sat solver, not %s", name)}
	}
	s, err := catalog.Scheduler(name, catalog.CPOptions{Progress: progress, CHWeight: chWeight, NoFallback: !initial})
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

// granularity validates --granularity and returns it in seconds.
func granularity(d time.Duration) (int64, error) {
	if d < time.Second || d%time.Second != 0 {
		return 0, usageError{fmt.Errorf("--granularity must be a whole number of seconds, at least 1s; got %v", d)}
	}
	return int64(d / time.Second), nil
}

// runSchedule is `optsched solve --encoding cp`.
func runSchedule(ctx context.Context, opts *solveOptions, format string) error {
	if opts.maxJobs != 0 {
		return usageError{fmt.Errorf("--max-jobs applies to the whole-node model; the cp encoding schedules every waiting job")}
	}
	g, err := granularity(opts.granularity)
	if err != nil {
		return err
	}
	name := "sat"
	switch {
	case opts.heuristic != "":
		name = opts.heuristic
	case opts.solverSet:
		name = opts.solver
	}
	var progress io.Writer
	if opts.verbose {
		progress = opts.streams.err
	}
	if opts.fallback != "sa" && opts.fallback != "none" && opts.fallback != "pbs" {
		return usageError{fmt.Errorf("--fallback must be sa, pbs or none, got %q", opts.fallback)}
	}
	if math.IsNaN(opts.chWeight) || math.IsInf(opts.chWeight, 0) || opts.chWeight < 0 {
		return usageError{fmt.Errorf("--ch-weight must be a finite number at least 0, got %v", opts.chWeight)}
	}
	s, err := cpScheduler(name, opts.fallback != "none", progress, opts.chWeight)
	if err != nil {
		return err
	}
	w, err := opts.load()
	if err != nil {
		return err
	}
	if opts.chWeight > 0 && w.Topology == nil {
		return fmt.Errorf("--ch-weight: the window has no topology, so its CH cost is undefined")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	limit := opts.solveLimit(w)
	res, err := solver.ScheduleWindow(ctx, w, s, solver.ScheduleOptions{Granularity: g}, limit)
	if err != nil {
		return err
	}
	doc := output.Answer(w, res)
	if format == "json" {
		if err := writeJSON(opts.streams.out, doc); err != nil {
			return err
		}
	} else {
		output.WriteTable(opts.streams.out, w, &doc)
		if res.CHWeight > 0 && res.Status != solver.Unknown {
			fmt.Fprintf(opts.streams.out, "\nobjective = weighted queue time %s + %g x CH cost %d (%s)\n",
				output.Figure(model.WeightedQueueTime(w, res.Allocations)), res.CHWeight, solver.Objective(w, res.Allocations), w.Cost.Kind)
		}
	}
	if res.Status == solver.Unknown {
		if res.Why != "" {
			return fmt.Errorf("no schedule: %s", res.Why)
		}
		return fmt.Errorf("no schedule found within %v", limit)
	}
	return nil
}

// runExportCNF is `optsched export --format cnf`.
func runExportCNF(opts *exportOptions) error {
	if opts.maxJobs != 0 {
		return usageError{fmt.Errorf("--max-jobs applies to the whole-node model; the cnf export covers every waiting job")}
	}
	g, err := granularity(opts.granularity)
	if err != nil {
		return err
	}
	w, err := loadWindow(opts.window, opts.streams.in)
	if err != nil {
		return err
	}
	if n := int64(cp.Options(w)); n > outLimits.options {
		return tooLarge(fmt.Sprintf("the CNF of %d waiting jobs would have job-node options (jobs × usable nodes)", len(w.Jobs)),
			n, outLimits.options, "export a window of fewer nodes or jobs, or solve this one with optsched solve --encoding cp")
	}
	m, err := cp.Build(w, g)
	if err != nil {
		return err
	}
	if len(m.Jobs) == 0 {
		return fmt.Errorf("no waiting job can start: nothing to export")
	}
	var bound int64
	if math.IsNaN(opts.bound) {
		// Better than the best list schedule.
		bound = math.MaxInt64
		for _, h := range catalog.ListSchedulers() {
			sch, err := h.Schedule(context.Background(), w, solver.ScheduleOptions{Granularity: g})
			if err != nil {
				return err
			}
			var W int64
			for _, a := range sch.Allocations {
				for _, j := range m.Jobs {
					if j.Index == a.Job {
						W += j.Weight * ((a.Start - w.Time) / g)
					}
				}
			}
			bound = min(bound, W-1)
		}
	} else {
		if !m.ExactWeights {
			return usageError{fmt.Errorf("--bound needs queue expected waits with a small common multiple; give none to export against the list schedules")}
		}
		// objective ≤ b  ⇔  W ≤ (b − C)·Scale/g, C the objective of W = 0.
		c := m.ObjectiveOfWeighted(0)
		bound = int64(math.Floor((opts.bound - c) * float64(m.Scale) / float64(g) * (1 + 1e-12)))
	}
	f := &cappedFormula{max: outLimits.literals}
	enc, err := sat.EncodeBounded(m, bound, f)
	if err != nil {
		return err
	}
	if f.over {
		return tooLarge(fmt.Sprintf("the CNF of %d jobs on the %d s grid would have literals (at least)", len(m.Jobs), g), f.lits, outLimits.literals,
			"export a window of fewer nodes or jobs, or a coarser --granularity")
	}
	f.Comments = sat.Comments(m, enc, bound)
	if opts.output == "-" {
		return f.WriteDIMACS(opts.streams.out)
	}
	return writeFileWith(opts.output, f.WriteDIMACS)
}
