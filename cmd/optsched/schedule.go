package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	f := &cappedFormula{max: outLimits.literals}
	ex, err := sat.ExportWindow(context.Background(), w, sat.ExportOptions{Granularity: g, Bound: opts.bound, Baselines: catalog.ListSchedulers()}, f)
	switch {
	case errors.Is(err, sat.ErrNothingToExport):
		return fmt.Errorf("no waiting job can start: nothing to export")
	case errors.Is(err, sat.ErrInexactBound):
		return usageError{fmt.Errorf("--bound needs queue expected waits with a small common multiple; give none to export against the list schedules")}
	case err != nil:
		return err
	}
	if f.over {
		return tooLarge(fmt.Sprintf("the CNF of %d jobs on the %d s grid would have literals (at least)", len(ex.Model.Jobs), g), f.lits, outLimits.literals,
			"export a window of fewer nodes or jobs, or a coarser --granularity")
	}
	f.Comments = ex.Comments()
	if opts.output == "-" {
		return f.WriteDIMACS(opts.streams.out)
	}
	return writeFileWith(opts.output, f.WriteDIMACS)
}
