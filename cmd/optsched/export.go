package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/optsched/optsched/encode"
	"github.com/optsched/optsched/encode/dcas"
	"github.com/optsched/optsched/encode/scas"
	"github.com/optsched/optsched/model"
)

// exportEncodings are the values of export's --encoding (the programs it
// writes as LP or MPS: the cp encoding is --format cnf).
var exportEncodings = []string{"scas", "dcas"}

// exportOptions are the inputs of `optsched export`.
type exportOptions struct {
	streams     *streams
	window      string
	format      string
	formulation string
	// encoding is scas (M_SCAS) or dcas (the free count program).
	encoding string
	maxJobs  int
	// output is the file to write (--out; "-" for stdout); format0 the
	// -o value, a format or (deprecated) a file.
	output, format0 string
	// granularity and bound serve --format cnf (schedule.go).
	granularity time.Duration
	bound       float64
}

func newExportCmd(s *streams, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "export FILE|-",
		Short: "Write a window's 0-1 program (M_SCAS or the free count program) as LP or MPS",
		Long: `Export selects the window's jobs as solve does and writes the M_SCAS 0-1
program of its multi-node jobs (Lan et al. §IV-A) in lp_solve's LP format or
in free MPS, so that CBC, HiGHS, SCIP, Gurobi or lp_solve can be timed on
exactly the model optsched solves. The objective is stated as minimisation;
all variables are binary.

--encoding dcas writes instead the free problem (any node sets, the
optimum of optsched solve --encoding dcas) as a 0-1 program over per-switch
counts: z[j,v,k] = 1 when job j has at least k nodes under switch v, and
each job's CH cost, integer division included, in binary cost bits. Its
optimum equals the free optimum.

--format cnf writes instead the complete CNF of the time-and-resource model
(optsched solve --encoding cp) in DIMACS: satisfiable exactly when some
schedule on the --granularity grid has a weighted queue time of at most
--bound (default: strictly better than the best of the PBS list
schedules). Comment lines say which variables hold each job's start and
units.`,
		Example: `  optsched export --format mps window.json > window.mps
  optsched export --encoding dcas --format mps window.json > window-free.mps
  optsched export --format lp --formulation paper --max-jobs 5 window.json
  optsched export --format cnf instances/eurora-example.json > eurora.cnf && cadical eurora.cnf`,
		Args: argsBetween(1, 1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.window = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runExport(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.format, "format", "mps", "lp (lp_solve syntax) or mps (free MPS); cnf: DIMACS CNF of the time-and-resource model (--encoding cp)")
	f.DurationVar(&opts.granularity, "granularity", 60*time.Second, "cnf: time grid of the starts (whole seconds)")
	f.Float64Var(&opts.bound, "bound", math.NaN(), "cnf: ask for a schedule with weighted queue time at most this (default: better than the best PBS list schedule)")
	f.StringVar(&opts.formulation, "formulation", "strong", "strong or paper (--encoding scas)")
	f.StringVar(&opts.encoding, "encoding", "scas", "scas (M_SCAS) or dcas (the free problem's count program)")
	f.IntVar(&opts.maxJobs, "max-jobs", 0, "cap on the multi-node jobs, as for solve")
	f.StringVar(&opts.output, "out", "-", "file to write, - for stdout")
	f.StringVarP(&opts.format0, "output", "o", "", "output format, as --format: lp, mps or cnf (-o FILE, the old spelling, still writes FILE)")
	return cmd
}

func runExport(opts *exportOptions) error {
	if err := outputFlag(opts.streams, "export", opts.format0, []string{"lp", "mps", "cnf"}, &opts.format, &opts.output); err != nil {
		return err
	}
	if opts.format == "cnf" {
		return runExportCNF(opts)
	}
	if opts.format != "lp" && opts.format != "mps" {
		return usageError{fmt.Errorf("--format must be lp or mps (or cnf), got %q", opts.format)}
	}
	form, err := scas.ParseFormulation(opts.formulation)
	if err != nil {
		return usageError{fmt.Errorf("--formulation: %w", err)}
	}
	if !slices.Contains(exportEncodings, opts.encoding) {
		return usageError{fmt.Errorf("--encoding must be scas or dcas, got %q", opts.encoding)}
	}
	if opts.maxJobs < 0 {
		return usageError{fmt.Errorf("--max-jobs must be at least 0, got %d", opts.maxJobs)}
	}
	w, err := loadWindow(opts.window, opts.streams.in)
	if err != nil {
		return err
	}
	sel := model.SelectJobs(w, opts.maxJobs)
	if len(sel.Multi) == 0 {
		return fmt.Errorf("the window selects no multi-node job: nothing to export")
	}
	if opts.encoding == "scas" {
		_, _, nz := scas.Size(w, sel.Multi, form)
		if nz > outLimits.nonzeros {
			remedy := "export a window of fewer idle nodes, or cap the jobs with --max-jobs"
			if form == scas.Paper {
				remedy += "; the strong form (--formulation strong) is smaller"
			}
			return tooLarge(fmt.Sprintf("the M_SCAS program (%s form) of %d jobs on %d idle nodes would have nonzero coefficients", form, len(sel.Multi), len(w.Idle)),
				nz, outLimits.nonzeros, remedy)
		}
	}
	var prog *encode.Program
	if opts.encoding == "dcas" {
		e, err := dcas.Build(context.Background(), w, sel.Multi)
		if err != nil {
			return err
		}
		prog = &e.Program
	} else {
		e, err := scas.Build(w, sel.Multi, form)
		if err != nil {
			return err
		}
		prog = &e.Program
	}
	write := prog.WriteMPS
	if opts.format == "lp" {
		write = prog.WriteLP
	}
	if opts.output == "-" {
		return write(opts.streams.out)
	}
	f, err := os.Create(opts.output)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
