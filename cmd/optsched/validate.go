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
	"github.com/optsched/optsched/solver"
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
		return validateAnswer(opts, w, data, scheduleJudging(opts, w))
	}
	return validateAnswer(opts, w, data, resultJudging(opts, w))
}

// A judging is what validate does differently for one model's answers.
type judging[O solver.ObjectiveValue] struct {
	// kind is the report's kind: result or schedule.
	kind string
	// admit checks the flags against the document, before the cost model
	// is set.
	admit func(doc *output.AnswerDoc[O]) error
	// judge judges the answer (the verdict package's independent checks)
	// and returns the cap on the multi-node jobs it was judged with,
	// when known.
	judge func(doc *output.AnswerDoc[O], allocs []model.Allocation, costs []int64, deferred []model.Deferral) (*verdict.Verdict, *int, error)
	// priced says whether the allocations hold a job the objective
	// prices (for the figures).
	priced func(allocs []model.Allocation) bool
	// summary is the table's report of a valid answer.
	summary func(doc *output.AnswerDoc[O], allocs []model.Allocation, v *verdict.Verdict) string
}

// validateAnswer is validate's one path for an answer document of either
// model: read it onto w, set the cost model it is judged with, judge it,
// check its figures and report.
func validateAnswer[O solver.ObjectiveValue](opts *validateOptions, w *model.Window, data []byte, j judging[O]) error {
	doc, allocs, err := output.Parse[O](w, data)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.result, err)
	}
	if err := j.admit(doc); err != nil {
		return err
	}
	if err := opts.applyCost(w, doc.Cost); err != nil {
		return err
	}
	costs := make([]int64, len(doc.Allocations))
	for i, a := range doc.Allocations {
		costs[i] = a.Cost
	}
	var deferred []model.Deferral
	for _, d := range doc.Deferred {
		j, _ := w.JobIndex(d.Job) // the parser checked that it waits
		deferred = append(deferred, model.Deferral{Job: j, Reason: d.Reason})
	}
	v, maxJobs, err := j.judge(doc, allocs, costs, deferred)
	if err != nil {
		return err
	}
	v.Add("figures", doc.CheckFigures(j.priced(allocs)), "status, objective, bound and gap agree")
	if opts.output == "json" {
		if err := writeJSON(opts.streams.out, validateReport{Kind: j.kind, CostModel: output.CostOf(w.Cost), MaxJobs: maxJobs, Verdict: v}); err != nil {
			return err
		}
	} else if v.Valid {
		fmt.Fprint(opts.streams.out, j.summary(doc, allocs, v))
	}
	if !v.Valid {
		err := v.Err()
		if doc.Cost == nil && opts.cost == "" {
			err = fmt.Errorf("%w\n(the %s records no cost model, so it was judged with the window's %s: give --cost if it was solved with another)", err, j.kind, w.Cost.Kind)
		}
		return infeasibleError{fmt.Errorf("%s: %w", opts.result, err)}
	}
	return nil
}

// resultJudging judges a result of the whole-node model: verdict.Judge,
// with the cap on the multi-node jobs the result records or --max-jobs
// gives.
func resultJudging(opts *validateOptions, w *model.Window) judging[int64] {
	return judging[int64]{
		kind:  "result",
		admit: func(*output.ResultDoc) error { return nil },
		judge: func(doc *output.ResultDoc, allocs []model.Allocation, costs []int64, deferred []model.Deferral) (*verdict.Verdict, *int, error) {
			ans := verdict.Answer{Status: doc.Status, Objective: doc.Objective, Bound: doc.Bound, Allocations: allocs, Costs: costs, Deferred: deferred}
			switch {
			case doc.MaxJobs != nil && opts.maxJobs >= 0 && *doc.MaxJobs != opts.maxJobs && !opts.override:
				return nil, nil, usageError{fmt.Errorf("--max-jobs %d disagrees with the result's max_jobs %d (add --override to judge it with %d)", opts.maxJobs, *doc.MaxJobs, opts.maxJobs)}
			case opts.maxJobs >= 0:
				ans.MaxJobs, ans.MaxJobsKnown = opts.maxJobs, true
			case doc.MaxJobs != nil:
				if *doc.MaxJobs < 0 {
					return nil, nil, fmt.Errorf("%s: max_jobs: must be at least 0, got %d", opts.result, *doc.MaxJobs)
				}
				ans.MaxJobs, ans.MaxJobsKnown = *doc.MaxJobs, true
			}
			var maxJobs *int
			if ans.MaxJobsKnown {
				maxJobs = &ans.MaxJobs
			}
			return verdict.Judge(w, ans), maxJobs, nil
		},
		priced: func(allocs []model.Allocation) bool {
			for _, a := range allocs {
				if len(a.Nodes) >= 2 {
					return true
				}
			}
			return false
		},
		summary: func(doc *output.ResultDoc, allocs []model.Allocation, v *verdict.Verdict) string {
			return fmt.Sprintf("result ok: %d jobs allocated, %d deferred, objective %d, status %s\n", len(allocs), len(doc.Deferred), v.Objective, doc.Status) +
				fmt.Sprintf("checker: lower bound %d, best placement found %s, cost model %s\n", v.LowerBound, ptrText(v.CheckerBest), w.Cost.Kind)
		},
	}
}

// scheduleJudging judges a schedule of the time-and-resource model (the
// JSON of 'optsched solve --encoding cp'): verdict.JudgeSchedule.
func scheduleJudging(opts *validateOptions, w *model.Window) judging[float64] {
	return judging[float64]{
		kind: "schedule",
		admit: func(*output.ScheduleDoc) error {
			if opts.maxJobs >= 0 {
				return usageError{fmt.Errorf("--max-jobs does not apply to a schedule (encoding cp)")}
			}
			return nil
		},
		judge: func(doc *output.ScheduleDoc, allocs []model.Allocation, costs []int64, deferred []model.Deferral) (*verdict.Verdict, *int, error) {
			ans := verdict.ScheduleAnswer{Objective: doc.Objective, Bound: doc.Bound, CHWeight: doc.CHWeight, Allocations: allocs, Costs: costs, Deferred: deferred}
			return verdict.JudgeSchedule(w, ans), nil, nil
		},
		priced: func(allocs []model.Allocation) bool { return len(allocs) > 0 },
		summary: func(doc *output.ScheduleDoc, allocs []model.Allocation, _ *verdict.Verdict) string {
			obj := model.WeightedQueueTime(w, allocs)
			if doc.Objective != nil {
				obj = *doc.Objective
			}
			return fmt.Sprintf("schedule ok: %d jobs scheduled, %d deferred, objective %.6g, status %s\n", len(allocs), len(doc.Deferred), obj, doc.Status)
		},
	}
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
