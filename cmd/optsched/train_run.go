package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/optsched/optsched/bench/report"
)

// This file is the plumbing the train sched designs share: the progress
// (a line per update, or a bar), the weights file, the learning curve and
// the final line.

// trainProgress returns the Progress of a training of total updates:
// with --verbose or when the error stream is not a terminal, line's text
// per update on it, else a bar noting note's text; done ends the bar.
func trainProgress[U any](opts *trainSchedOptions, total int, line, note func(U) string) (progress func(U), done func()) {
	errw := opts.streams.err
	verbose := opts.verbose || !isTerminal(errw)
	var bar *report.Bar
	if !verbose {
		bar = report.NewBar(errw, "train sched", total)
	}
	return func(u U) {
		if verbose {
			fmt.Fprintln(errw, line(u))
		}
		bar.Note(note(u))
		bar.Add(1)
	}, bar.Done
}

// trainWith sets *progress to trainProgress's, runs train and ends the
// bar.
func trainWith[U, R any](opts *trainSchedOptions, total int, line, note func(U) string, progress *func(U), train func() (R, error)) (R, error) {
	var done func()
	*progress, done = trainProgress(opts, total, line, note)
	defer done()
	return train()
}

// curvePoint is one update of a learning curve: the episodes so far, the
// mean reward of the update's episodes and the baseline's on the same
// episodes.
type curvePoint struct {
	episodes         int
	reward, baseline float64
}

// trainOutput is what a train sched design writes once trained.
type trainOutput struct {
	design string // the --design name
	// write writes the weights.
	write func(io.Writer) error
	// curve, title, yLabel and baseLabel make the learning curve (with
	// its moving average, weight 0.1 per update).
	curve                    []curvePoint
	title, yLabel, baseLabel string
	// summary is the final line's report of the last update.
	summary string
}

// finishTraining writes the weights to --out, the learning curve to
// --plot (default: --out's name with .png) and the final line on the
// output stream, timed from t0.
func finishTraining(opts *trainSchedOptions, o trainOutput, t0 time.Time) error {
	f, err := os.Create(opts.out)
	if err != nil {
		return err
	}
	if err := o.write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	plotPath := opts.plot
	if plotPath == "" {
		plotPath = strings.TrimSuffix(strings.TrimSuffix(opts.out, ".gz"), ".bin") + ".png"
	}
	pts := make([]report.LearningPoint, len(o.curve))
	var moving float64
	for i, c := range o.curve {
		if i == 0 {
			moving = c.reward
		} else {
			moving = 0.9*moving + 0.1*c.reward
		}
		pts[i] = report.LearningPoint{Episodes: c.episodes, Reward: c.reward, Moving: moving, Baseline: c.baseline}
	}
	if err := report.PlotLearningCurveLabelled(pts, o.title, o.yLabel, o.baseLabel, plotPath); err != nil {
		return err
	}
	fmt.Fprintf(opts.streams.out, "trained %s in %.0f s: %s; weights: %s; learning curve: %s\n",
		o.design, time.Since(t0).Seconds(), o.summary, opts.out, plotPath)
	return nil
}
