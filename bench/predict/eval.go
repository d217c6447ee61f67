package predict

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Config sets up Evaluate. The zero value takes the defaults.
type Config struct {
	// WarmUp is the fraction of the jobs, by submit time, used only as
	// history (0: 0.7).
	WarmUp float64
	// MinRun is the shortest run time, s, of an evaluated job (0: 60).
	MinRun int64
	// Fractions are the elapsed fractions of the run at which each job is
	// predicted, each in [0, 1) (nil: 0 and 0.5).
	Fractions []float64
}

func (c Config) withDefaults() (Config, error) {
	if c.WarmUp == 0 {
		c.WarmUp = 0.7
	}
	if c.MinRun == 0 {
		c.MinRun = 60
	}
	if c.Fractions == nil {
		c.Fractions = []float64{0, 0.5}
	}
	if !(c.WarmUp > 0 && c.WarmUp < 1) {
		return c, fmt.Errorf("predict: warm-up fraction %v is not in (0, 1)", c.WarmUp)
	}
	if c.MinRun < 1 {
		return c, fmt.Errorf("predict: minimum run %d s is not positive", c.MinRun)
	}
	for _, f := range c.Fractions {
		if !(f >= 0 && f < 1) {
			return c, fmt.Errorf("predict: elapsed fraction %v is not in [0, 1)", f)
		}
	}
	return c, nil
}

// A Result is one predictor's error at one elapsed fraction.
type Result struct {
	Predictor string  `json:"predictor"`
	Elapsed   float64 `json:"elapsed_fraction"`
	// MAPE is the mean absolute percentage error over the evaluated jobs,
	// %; MedianAPE the median.
	MAPE      float64 `json:"mape_pct"`
	MedianAPE float64 `json:"median_ape_pct"`
	Jobs      int     `json:"jobs"`
}

// Published is a figure from the literature, measured on other data.
type Published struct {
	Predictor string  `json:"predictor"`
	MAPE      float64 `json:"mape_pct"`
	Source    string  `json:"source"`
}

// PublishedRLSchert are RLSchert's overall MAPE figures [Wang21] on its
// own (private) VASP jobs.
var PublishedRLSchert = []Published{
	{"RLSchert user-behaviour", 110.8, "Wang et al. 2021 (RLSchert), private VASP jobs: other data"},
	{"RLSchert XGBoost", 39.8, "Wang et al. 2021 (RLSchert), private VASP jobs: other data"},
}

// A Report is what Evaluate measured.
type Report struct {
	// Jobs is the jobs given; WarmUp the first of them by submit time,
	// history only; HeldOut the rest.
	Jobs    int `json:"jobs"`
	WarmUp  int `json:"warm_up"`
	HeldOut int `json:"held_out"`
	// Evaluated are the held-out jobs predicted: run ≥ MinRun and a known
	// request. ShortRun and NoRequest count the held-out jobs left out.
	Evaluated int   `json:"evaluated"`
	ShortRun  int   `json:"held_out_short_run"`
	NoRequest int   `json:"held_out_no_request"`
	MinRun    int64 `json:"min_run_s"`
	// Results has one row per predictor and fraction, predictors in the
	// order given, fractions within.
	Results   []Result    `json:"results"`
	Published []Published `json:"published"`
}

// ErrNoneEvaluated is returned when no held-out job can be evaluated.
var ErrNoneEvaluated = errors.New("predict: no held-out job has a known request and a run time of at least the minimum")

// Evaluate predicts every evaluated held-out job of jobs at each elapsed
// fraction with each predictor (see the package comment) and reports the
// errors.
func Evaluate(jobs []Job, preds []Predictor, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
	warm := int(math.Floor(cfg.WarmUp * float64(len(order))))
	rep := &Report{Jobs: len(order), WarmUp: warm, HeldOut: len(order) - warm, MinRun: cfg.MinRun,
		Published: PublishedRLSchert}
	var eval []Job
	for _, j := range order[warm:] {
		switch {
		case j.Run < cfg.MinRun:
			rep.ShortRun++
		case j.Request <= 0:
			rep.NoRequest++
		default:
			eval = append(eval, j)
		}
	}
	rep.Evaluated = len(eval)
	if len(eval) == 0 {
		return rep, fmt.Errorf("%w (%d s): %d held out, %d shorter, %d without a request", ErrNoneEvaluated, cfg.MinRun, rep.HeldOut, rep.ShortRun, rep.NoRequest)
	}
	h := NewHistory(order)
	apes := make([]float64, len(eval))
	for _, p := range preds {
		for _, f := range cfg.Fractions {
			for i, j := range eval {
				e := int64(math.Floor(f * float64(j.Run)))
				actual := float64(j.Run - e)
				got := p.Remaining(h, j.Start+e, Running{User: j.User, Request: j.Request, Elapsed: e})
				apes[i] = APE(got, actual)
			}
			rep.Results = append(rep.Results, Result{Predictor: p.Name(), Elapsed: f, MAPE: mean(apes), MedianAPE: Median(slices.Clone(apes)), Jobs: len(eval)})
		}
	}
	return rep, nil
}

// APE is the absolute percentage error of a prediction, 100 × |predicted −
// actual| / actual; actual must be positive.
func APE(predicted, actual float64) float64 {
	return 100 * math.Abs(predicted-actual) / actual
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// WriteTable prints the report for people: a row per predictor with its
// MAPE (and median APE) at each elapsed fraction, then the published
// figures.
func (r *Report) WriteTable(w io.Writer) error {
	var fracs []float64
	for _, res := range r.Results {
		if !slices.Contains(fracs, res.Elapsed) {
			fracs = append(fracs, res.Elapsed)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "jobs %d: first %d by submit for history only, %d held out; evaluated %d (run ≥ %d s, request known; %d shorter, %d without a request)\n",
		r.Jobs, r.WarmUp, r.HeldOut, r.Evaluated, r.MinRun, r.ShortRun, r.NoRequest)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "predictor\t")
	for _, f := range fracs {
		fmt.Fprintf(tw, "MAPE %% at %g%%\tmedian APE %% at %g%%\t", 100*f, 100*f)
	}
	fmt.Fprintln(tw)
	row := map[string][]Result{}
	var names []string
	for _, res := range r.Results {
		if _, ok := row[res.Predictor]; !ok {
			names = append(names, res.Predictor)
		}
		row[res.Predictor] = append(row[res.Predictor], res)
	}
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
		for _, f := range fracs {
			i := slices.IndexFunc(row[n], func(x Result) bool { return x.Elapsed == f })
			if i < 0 {
				fmt.Fprint(tw, "-\t-\t")
				continue
			}
			fmt.Fprintf(tw, "%.1f\t%.1f\t", row[n][i].MAPE, row[n][i].MedianAPE)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Published) > 0 {
		b.WriteString("published, measured on other data (not comparable job for job):\n")
		for _, p := range r.Published {
			fmt.Fprintf(&b, "  %-24s overall MAPE %.1f %%  (%s)\n", p.Predictor, p.MAPE, p.Source)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
