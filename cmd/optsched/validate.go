package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/verdict"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/output"
)

// validateOptions are the inputs of `optsched validate`.
type validateOptions struct {
	streams *streams
	window  string
	result  string
	output  string
	// cost and maxJobs are --cost and --max-jobs ("" and -1 when not
	// given); override lets them replace what the result records.
	cost     string
	maxJobs  int
	override bool
}

func newValidateCmd(s *streams, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "validate WINDOW [RESULT]",
		Short: "Check a window file, or a result against its window",
		Long: `Validate parses a window and reports the first problem with its field path.
Given a result (the JSON of 'optsched solve -o json'), it judges the answer
with the independent checker (packages model and model/verdict, which share
no code with the solvers):

  feasible    only free nodes, the requested node counts, no node twice,
              known jobs, starts at or after the window time (model.Check)
  accounted   every waiting job allocated or deferred exactly once
  costs       each allocation's cost is its cost model's, recomputed
  objective   the objective is the CH cost of the multi-node allocations
  selection   the jobs that start are exactly the selection rule's: jobs
              ranked by waiting periods (nwp, more first), then size
              (fewer nodes first), then window order, taken while they fit
              in the idle nodes left, stopping at the first that does not
              (and at the cap of --max-jobs multi-node jobs); under status
              unknown or infeasible the selected multi-node jobs may wait
  optimality  status optimal: the objective is at least the checker's
              lower bound (each selected job's least cost on any idle
              nodes) and at most the cost of the placements the checker
              finds (runs of the idle sequence); status infeasible: the
              checker finds no placement
  bound       a reported bound is at most the checker's placement's cost
  figures     status, objective, bound and gap agree with each other

The cost model is the one the result records ("cost"; solve writes it,
--cost included), else the window's. --cost names it for a result that
records none and must agree with one that does, unless --override is given
(judge the result under another model). --max-jobs likewise: the cap the
result records ("max_jobs"), else --max-jobs, else no cap or the cap the
allocation implies. -o json prints the verdict: every check with its
outcome, the recomputed objective, the lower bound and the checker's best
placement.

Exit codes: 0 valid, 1 bad input, 2 usage, 3 infeasible or inconsistent result.`,
		Example: `  optsched validate window.json
  optsched solve -o json window.json > result.json && optsched validate window.json result.json
  optsched solve -o json --cost lan-paper w.json > r.json && optsched validate w.json r.json
  optsched validate -o json window.json result.json`,
		Args: argsBetween(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.window = args[0]
			if len(args) == 2 {
				opts.result = args[1]
			}
			if !cmd.Flags().Changed("max-jobs") {
				opts.maxJobs = -1
			} else if opts.maxJobs < 0 {
				return usageError{fmt.Errorf("--max-jobs must be at least 0, got %d", opts.maxJobs)}
			}
			if opts.cost != "" {
				if _, err := model.ParseCostKind(opts.cost); err != nil {
					return usageError{fmt.Errorf("--cost: %w", err)}
				}
			}
			if opts.result == "" && (opts.cost != "" || opts.maxJobs >= 0 || opts.override) {
				return usageError{fmt.Errorf("--cost, --max-jobs and --override judge a result: give RESULT")}
			}
			if opts.override && opts.cost == "" && opts.maxJobs < 0 {
				return usageError{fmt.Errorf("--override needs --cost or --max-jobs")}
			}
			if runF != nil {
				return runF(opts)
			}
			return runValidate(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table (lines for people) or json (the verdict)")
	f.StringVar(&opts.cost, "cost", "", "CH cost model (lan-code or lan-paper) of a result that records none; must agree with a result that records one, unless --override")
	f.IntVar(&opts.maxJobs, "max-jobs", 0, "cap on the multi-node jobs the result was solved with, for a result that records none; must agree with one that does, unless --override")
	f.BoolVar(&opts.override, "override", false, "let --cost and --max-jobs replace what the result records")
	return cmd
}

// validateReport is the JSON of 'optsched validate -o json'.
type validateReport struct {
	// Kind is window, result or schedule.
	Kind string `json:"kind"`
	// CostModel is the cost model the result was judged with.
	CostModel *output.CostDoc `json:"cost,omitempty"`
	// MaxJobs is the cap the selection was judged with, when known.
	MaxJobs *int `json:"max_jobs,omitempty"`
	*verdict.Verdict
}

func runValidate(opts *validateOptions) error {
	if opts.output != "json" && opts.output != "table" {
		return usageError{fmt.Errorf("-o must be json or table, got %q", opts.output)}
	}
	w, err := loadWindow(opts.window, opts.streams.in)
	if err != nil {
		return err
	}
	out := opts.streams.out
	if opts.result == "" {
		if opts.output == "json" {
			return writeJSON(out, validateReport{Kind: "window", Verdict: &verdict.Verdict{Valid: true, Checks: []verdict.Check{{
				Name: "window", OK: true,
				Detail: fmt.Sprintf("%d nodes, %d idle, %d running jobs, %d waiting jobs", w.Topology.NumNodes(), len(w.Idle), len(w.Running), len(w.Jobs))}}}})
		}
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
	doc, allocs, err := output.Parse[int64](w, data)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.result, err)
	}
	if err := opts.applyCost(w, doc.Cost); err != nil {
		return err
	}
	ans := verdict.Answer{Status: doc.Status, Objective: doc.Objective, Bound: doc.Bound, Allocations: allocs}
	ans.Costs = make([]int64, len(doc.Allocations))
	for i, a := range doc.Allocations {
		ans.Costs[i] = a.Cost
	}
	for _, d := range doc.Deferred {
		j, _ := w.JobIndex(d.Job) // the parser checked that it waits
		ans.Deferred = append(ans.Deferred, model.Deferral{Job: j, Reason: d.Reason})
	}
	switch {
	case doc.MaxJobs != nil && opts.maxJobs >= 0 && *doc.MaxJobs != opts.maxJobs && !opts.override:
		return usageError{fmt.Errorf("--max-jobs %d disagrees with the result's max_jobs %d (add --override to judge it with %d)", opts.maxJobs, *doc.MaxJobs, opts.maxJobs)}
	case opts.maxJobs >= 0:
		ans.MaxJobs, ans.MaxJobsKnown = opts.maxJobs, true
	case doc.MaxJobs != nil:
		if *doc.MaxJobs < 0 {
			return fmt.Errorf("%s: max_jobs: must be at least 0, got %d", opts.result, *doc.MaxJobs)
		}
		ans.MaxJobs, ans.MaxJobsKnown = *doc.MaxJobs, true
	}
	v := verdict.Judge(w, ans)
	multi := false
	for _, a := range allocs {
		multi = multi || len(a.Nodes) >= 2
	}
	v.Add("figures", doc.CheckFigures(multi), "status, objective, bound and gap agree")
	rep := validateReport{Kind: "result", CostModel: output.CostOf(w.Cost), Verdict: v}
	if ans.MaxJobsKnown {
		rep.MaxJobs = &ans.MaxJobs
	}
	if opts.output == "json" {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else if v.Valid {
		fmt.Fprintf(out, "result ok: %d jobs allocated, %d deferred, objective %d, status %s\n",
			len(allocs), len(doc.Deferred), v.Objective, doc.Status)
		fmt.Fprintf(out, "checker: lower bound %d, best placement found %s, cost model %s\n",
			v.LowerBound, ptrText(v.CheckerBest), w.Cost.Kind)
	}
	if !v.Valid {
		err := v.Err()
		if doc.Cost == nil && opts.cost == "" {
			err = fmt.Errorf("%w\n(the result records no cost model, so it was judged with the window's %s: give --cost if it was solved with another)", err, w.Cost.Kind)
		}
		return infeasibleError{fmt.Errorf("%s: %w", opts.result, err)}
	}
	return nil
}

func ptrText(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// applyCost sets w.Cost to the cost model a result is judged with: the
// one it records (rec), else --cost, else the window's; --cost must agree
// with a recorded model unless --override.
func (opts *validateOptions) applyCost(w *model.Window, rec *output.CostDoc) error {
	if rec != nil {
		m, err := rec.CostModel()
		if err != nil {
			return fmt.Errorf("%s: %w", opts.result, err)
		}
		if opts.cost != "" && opts.cost != m.Kind.String() && !opts.override {
			return usageError{fmt.Errorf("--cost %s disagrees with the result's cost model %s (add --override to judge it under %s)", opts.cost, m.Kind, opts.cost)}
		}
		if m.HopCost != w.Cost.HopCost && !opts.override {
			return infeasibleError{fmt.Errorf("%s: cost.hop_cost: %d, but the window's is %d (solve prices with the window's)", opts.result, m.HopCost, w.Cost.HopCost)}
		}
		w.Cost = m
	}
	if opts.cost != "" && (rec == nil || opts.override) {
		w.Cost.Kind, _ = model.ParseCostKind(opts.cost) // checked in RunE
	}
	return nil
}

// validateSchedule judges a schedule of the time-and-resource model (the
// JSON of 'optsched solve --encoding cp'): verdict.JudgeSchedule and the
// figures.
func validateSchedule(opts *validateOptions, w *model.Window, data []byte) error {
	doc, allocs, err := output.Parse[float64](w, data)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.result, err)
	}
	if opts.maxJobs >= 0 {
		return usageError{fmt.Errorf("--max-jobs does not apply to a schedule (encoding cp)")}
	}
	if err := opts.applyCost(w, doc.Cost); err != nil {
		return err
	}
	ans := verdict.ScheduleAnswer{Objective: doc.Objective, Bound: doc.Bound, CHWeight: doc.CHWeight, Allocations: allocs}
	ans.Costs = make([]int64, len(doc.Allocations))
	for i, a := range doc.Allocations {
		ans.Costs[i] = a.Cost
	}
	for _, d := range doc.Deferred {
		j, _ := w.JobIndex(d.Job) // the parser checked that it waits
		ans.Deferred = append(ans.Deferred, model.Deferral{Job: j, Reason: d.Reason})
	}
	v := verdict.JudgeSchedule(w, ans)
	v.Add("figures", doc.CheckFigures(len(allocs) > 0), "status, objective, bound and gap agree")
	if opts.output == "json" {
		if err := writeJSON(opts.streams.out, validateReport{Kind: "schedule", CostModel: output.CostOf(w.Cost), Verdict: v}); err != nil {
			return err
		}
	} else if v.Valid {
		obj := model.WeightedQueueTime(w, allocs)
		if doc.Objective != nil {
			obj = *doc.Objective
		}
		fmt.Fprintf(opts.streams.out, "schedule ok: %d jobs scheduled, %d deferred, objective %.6g, status %s\n",
			len(allocs), len(doc.Deferred), obj, doc.Status)
	}
	if !v.Valid {
		return infeasibleError{fmt.Errorf("%s: %w", opts.result, v.Err())}
	}
	return nil
}
