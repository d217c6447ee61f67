package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/bench/predict"
	"github.com/optsched/optsched/bench/trace"
)

// benchPredictOptions are the inputs of `optsched bench predict`.
type benchPredictOptions struct {
	streams *streams
	trace   string
	output  string
	k       int
}

func newBenchPredictCmd(s *streams, runF func(*benchPredictOptions) error) *cobra.Command {
	opts := &benchPredictOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "predict",
		Short: "Measure remaining-run-time predictors on an SWF log (MAPE on held-out jobs)",
		Long: `Bench predict measures predictors of a running job's remaining run time
that use only what an archive log records: the job's requested and elapsed
time and the same user's jobs finished by then. The first 70 % of the jobs
by submit time are history only; each of the last 30 % with a run time of
at least 60 s and a known request is predicted when it starts and at half
its run, and the mean absolute percentage error (MAPE) of each predictor
is printed, with the median, beside RLSchert's published figures (measured
on its private VASP jobs: other data).

Predictors: request-left (request − elapsed, the baseline a scheduler has
without prediction), user-last (the user's last run time), user-ratio (the
request × the median run/request of the user's last --k finished jobs) and
user-ratio-cond (the same over the user's jobs that ran longer than the
elapsed time) and user-mape (the remaining time of the user's last --k
jobs that ran longer than the elapsed time, their median weighted by
1 / remaining: the guess of least percentage error over them). See
docs/predict.md.`,
		Example: `  optsched bench predict --trace instances/traces/KTH-SP2-1996-2.1-cln.swf.gz
  optsched bench predict --trace instances/traces/HPC2N-2002-2.1-cln.swf.gz -o json`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runBenchPredict(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.trace, "trace", "", "SWF log (gzip accepted)")
	f.StringVarP(&opts.output, "output", "o", "table", "output format: table or json")
	f.IntVar(&opts.k, "k", predict.DefaultK, "finished jobs of the user in user-ratio's median")
	return cmd
}

func runBenchPredict(opts *benchPredictOptions) error {
	if opts.output != "table" && opts.output != "json" {
		return usageError{fmt.Errorf("-o must be table or json, got %q", opts.output)}
	}
	if opts.trace == "" {
		return usageError{fmt.Errorf("--trace: give an SWF log")}
	}
	if opts.k < 1 {
		return usageError{fmt.Errorf("--k must be at least 1, got %d", opts.k)}
	}
	tr, err := trace.Open(opts.trace, "swf", trace.Options{KeepSWF: true})
	if err != nil {
		return err
	}
	jobs, dropped, err := predict.FromTrace(tr)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		return fmt.Errorf("%s: the log gives no job's wait and run time (%d jobs), so no job's start and end are known", opts.trace, dropped)
	}
	preds := []predict.Predictor{predict.RequestLeft{}, predict.UserLast{}, predict.UserRatio{K: opts.k}, predict.UserRatio{K: opts.k, Conditional: true}, predict.UserMAPE{K: opts.k}}
	rep, err := predict.Evaluate(jobs, preds, predict.Config{})
	if err != nil {
		return fmt.Errorf("%s: %w", opts.trace, err)
	}
	if opts.output == "json" {
		return writeJSON(opts.streams.out, rep)
	}
	fmt.Fprintf(opts.streams.out, "%s: %s\n", opts.trace, tr.Records.Summary())
	return rep.WriteTable(opts.streams.out)
}
