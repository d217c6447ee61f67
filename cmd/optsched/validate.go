package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/output"
)

// validateOptions are the inputs of `optsched validate`.
type validateOptions struct {
	streams *streams
	window  string
	result  string
}

func newValidateCmd(s *streams, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "validate WINDOW [RESULT]",
		Short: "Check a window file, or a result against its window",
		Long: `Validate parses a window and reports the first problem with its field path.
Given a result (the JSON of 'optsched solve -o json'), it also checks the
allocation with model.Check — only idle nodes, no node twice, the requested
node counts, known jobs, starts at or after the window time — and that the
reported costs and objective match the window's cost model.

Exit codes: 0 valid, 1 bad input, 2 usage, 3 infeasible or inconsistent result.`,
		Example: `  optsched validate window.json
  optsched solve -o json window.json > result.json && optsched validate window.json result.json`,
		Args: argsBetween(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.window = args[0]
			if len(args) == 2 {
				opts.result = args[1]
			}
			if runF != nil {
				return runF(opts)
			}
			return runValidate(opts)
		},
	}
	return cmd
}

func runValidate(opts *validateOptions) error {
	w, err := loadWindow(opts.window, opts.streams.in)
	if err != nil {
		return err
	}
	out := opts.streams.out
	if opts.result == "" {
		fmt.Fprintf(out, "window ok: %d nodes, %d idle, %d running jobs, %d waiting jobs\n",
			w.Topology.NumNodes(), len(w.Idle), len(w.Running), len(w.Jobs))
		return nil
	}
	var data []byte
	if opts.result == "-" {
		data, err = io.ReadAll(io.LimitReader(opts.streams.in, maxInput))
	} else {
		data, err = windowjson.ReadFileLimited(opts.result)
	}
	if err != nil {
		return err
	}
	var kind struct{ Encoding string }
	if json.Unmarshal(data, &kind) == nil && kind.Encoding == "cp" {
		return validateSchedule(opts, w, data)
	}
	doc, allocs, err := output.ParseResult(w, data)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.result, err)
	}
	if err := model.Check(w, allocs); err != nil {
		return err
	}
	if err := accounted(w, allocs, doc.Deferred); err != nil {
		return infeasibleError{fmt.Errorf("%s: %w", opts.result, err)}
	}

	// The reported costs and objective must be those of the window's cost
	// model. The objective covers the multi-node jobs.
	var obj int64
	for i, a := range allocs {
		c := w.Cost.Cost(w.Topology, a.Nodes)
		if doc.Allocations[i].Cost != c {
			return infeasibleError{fmt.Errorf("allocations[%d] (job %s): reported cost %d, the window's cost model gives %d",
				i, doc.Allocations[i].Job, doc.Allocations[i].Cost, c)}
		}
		if len(a.Nodes) >= 2 {
			obj += c
		}
	}
	if doc.Objective != nil && *doc.Objective != obj {
		return infeasibleError{fmt.Errorf("objective: reported %d, the multi-node allocations cost %d", *doc.Objective, obj)}
	}
	if doc.Bound != nil && doc.Objective != nil && *doc.Bound > float64(*doc.Objective)+1e-6 {
		return infeasibleError{fmt.Errorf("bound: %g is above the objective %d", *doc.Bound, *doc.Objective)}
	}
	multi := false
	for _, a := range allocs {
		multi = multi || len(a.Nodes) >= 2
	}
	if err := doc.CheckFigures(multi); err != nil {
		return infeasibleError{fmt.Errorf("%s: %w", opts.result, err)}
	}
	fmt.Fprintf(out, "result ok: %d jobs allocated, %d deferred, objective %d, status %s\n",
		len(allocs), len(doc.Deferred), obj, doc.Status)
	return nil
}

// validateSchedule checks a schedule of the time-and-resource model (the
// JSON of 'optsched solve --encoding cp'): model.Check, the reported
// objective (the weighted queue time) and the bound.
func validateSchedule(opts *validateOptions, w *model.Window, data []byte) error {
	doc, allocs, err := output.ParseSchedule(w, data)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.result, err)
	}
	if err := model.Check(w, allocs); err != nil {
		return err
	}
	if err := accounted(w, allocs, doc.Deferred); err != nil {
		return infeasibleError{fmt.Errorf("%s: %w", opts.result, err)}
	}

	obj := model.WeightedQueueTime(w, allocs)
	what := "weighted queue time"
	if doc.CHWeight != 0 {
		if !(doc.CHWeight > 0) || math.IsInf(doc.CHWeight, 0) {
			return fmt.Errorf("%s: ch_weight: must be a finite number at least 0, got %v", opts.result, doc.CHWeight)
		}
		var ch int64
		for _, a := range allocs {
			ch += w.Cost.Cost(w.Topology, a.Nodes)
		}
		obj += doc.CHWeight * float64(ch)
		what = fmt.Sprintf("weighted queue time + %g x CH cost", doc.CHWeight)
	}
	if doc.Objective != nil && math.Abs(*doc.Objective-obj) > 1e-6*math.Max(1, math.Abs(obj)) {
		return infeasibleError{fmt.Errorf("objective: reported %.9g, the schedule's %s is %.9g", *doc.Objective, what, obj)}
	}
	if doc.Bound != nil && doc.Objective != nil && *doc.Bound > *doc.Objective+1e-6*math.Max(1, math.Abs(*doc.Objective)) {
		return infeasibleError{fmt.Errorf("bound: %.9g is above the objective %.9g", *doc.Bound, *doc.Objective)}
	}
	if err := doc.CheckFigures(len(allocs) > 0); err != nil {
		return infeasibleError{fmt.Errorf("%s: %w", opts.result, err)}
	}
	fmt.Fprintf(opts.streams.out, "schedule ok: %d jobs scheduled, %d deferred, objective %.6g, status %s\n",
		len(allocs), len(doc.Deferred), obj, doc.Status)
	return nil
}

// accounted checks that every waiting job of w is allocated or deferred
// exactly once in a result document (model.CheckAccounted).
func accounted(w *model.Window, allocs []model.Allocation, deferred []output.DeferralDoc) error {
	ds := make([]model.Deferral, 0, len(deferred))
	jobIndex := w.JobIndices()
	for _, d := range deferred {
		j, _ := jobIndex(d.Job) // the parser checked that it waits
		ds = append(ds, model.Deferral{Job: j, Reason: d.Reason})
	}
	return model.CheckAccounted(w, allocs, ds)
}
