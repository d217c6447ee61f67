package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/optsched/optsched/catalog"
	"github.com/optsched/optsched/encode/cp"
	"github.com/optsched/optsched/solver"
	"github.com/optsched/optsched/solver/sat"
)

// This file wires the time-and-resource model of Bridi et al. (optsched
// solve --encoding cp, export --format cnf) into the command line.

// cpScheduler builds the scheduler of the time-and-resource model a
// --solver or --heuristic names (catalog.Scheduler), with the list
// schedules as its fallback when initial is set; errors are usage errors.
func cpScheduler(name string, initial bool, progress io.Writer, chWeight float64) (solver.Scheduler, error) {
	o := catalog.Options{Progress: progress, CHWeight: chWeight}
	if !initial {
		o.Fallback = "none"
	}
	s, err := catalog.Scheduler(name, o)
	if err != nil {
		return nil, flagError(err)
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
