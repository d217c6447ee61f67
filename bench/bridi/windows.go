package bridi

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/optsched/optsched/heuristics"
	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/windowjson"
	"github.com/optsched/optsched/solver"
)

// A CorpusConfig describes a corpus of decision windows drawn from the
// workload (Corpus).
type CorpusConfig struct {
	// Seed, Jobs and MeanInterarrival give the workload, as in Config
	// (defaults 1 → the workload's, 300 jobs, 60 s: a queue of up to about
	// 25 jobs).
	Seed             uint64
	Jobs             int
	MeanInterarrival float64
	// MinJobs keeps the decisions with at least this many waiting jobs
	// (default 1).
	MinJobs int
	// Sample, when positive, draws this many of them at random (seeded by
	// Seed); 0 keeps them all.
	Sample int
}

// A CorpusWindow is a window of a corpus with a name to report it by.
type CorpusWindow struct {
	// Name is the file it was read from, or t<time> for a simulated one.
	Name   string
	Window *model.Window
}

// Corpus simulates the workload of cfg under PBSWalltime and returns the
// windows of its decisions with at least MinJobs waiting jobs, or a seeded
// sample of them, in time order. The path is PBSWalltime's, not CP/SAT's,
// because it depends on neither the solver nor the machine: the same
// configuration gives the same corpus everywhere, so that two versions
// of a solver can be compared window by window. (Along CP/SAT's own path
// the queues are somewhat shorter.)
func Corpus(ctx context.Context, cfg CorpusConfig) ([]CorpusWindow, error) {
	if cfg.Jobs <= 0 {
		cfg.Jobs = 300
	}
	if cfg.MeanInterarrival <= 0 {
		cfg.MeanInterarrival = 60
	}
	jobs := Workload(Config{Seed: cfg.Seed, Jobs: cfg.Jobs, MeanInterarrival: cfg.MeanInterarrival})
	var out []CorpusWindow
	keep := func(w *model.Window, t int64, _ *solver.ScheduleResult) error {
		if len(w.Jobs) >= cfg.MinJobs {
			out = append(out, CorpusWindow{Name: "t" + strconv.FormatInt(t, 10), Window: w})
		}
		return nil
	}
	if _, err := simulate(ctx, jobs, heuristics.PBSWalltime(), 1, 0, keep); err != nil {
		return nil, fmt.Errorf("bridi: corpus: %w", err)
	}
	if cfg.Sample > 0 && cfg.Sample < len(out) {
		rng := rand.New(rand.NewPCG(cfg.Seed, 0xc0b5))
		pick := rng.Perm(len(out))[:cfg.Sample]
		slices.Sort(pick)
		sample := make([]CorpusWindow, len(pick))
		for k, i := range pick {
			sample[k] = out[i]
		}
		out = sample
	}
	return out, nil
}

// ReadCorpus reads the window JSON files of paths, a directory standing
// for the *.json files in it (in name order).
func ReadCorpus(paths []string) ([]CorpusWindow, error) {
	var out []CorpusWindow
	for _, p := range paths {
		files := []string{p}
		if st, err := os.Stat(p); err != nil {
			return nil, err
		} else if st.IsDir() {
			if files, err = filepath.Glob(filepath.Join(p, "*.json")); err != nil {
				return nil, err
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no *.json windows in the directory", p)
			}
		}
		for _, f := range files {
			w, err := windowjson.Load(f)
			if err != nil {
				return nil, err
			}
			out = append(out, CorpusWindow{Name: f, Window: w})
		}
	}
	return out, nil
}

// WriteCorpus writes every window of c to dir as <name>.json, the base
// name of a window read from a file kept as it was (for study with
// optsched solve --encoding cp).
func WriteCorpus(dir string, c []CorpusWindow) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, cw := range c {
		name := strings.TrimSuffix(filepath.Base(cw.Name), ".json") + ".json"
		if err := writeWindow(filepath.Join(dir, name), cw.Window); err != nil {
			return err
		}
	}
	return nil
}

// A CorpusResult is one scheduler's answer on one window of a corpus.
type CorpusResult struct {
	Window string `json:"window"`
	// Jobs is the number of waiting jobs.
	Jobs   int    `json:"jobs"`
	Solver string `json:"solver"`
	Status string `json:"status"`
	// Objective is Eq. (2) of the schedule (absent with status unknown);
	// Bound the scheduler's own proven lower bound, when it has one.
	Objective *float64 `json:"objective,omitempty"`
	Bound     *float64 `json:"bound,omitempty"`
	// Gap is (Objective − B) / Objective, B the best lower bound any
	// scheduler of the run proved on the window: for a heuristic, how far
	// from optimal it is at most. Absent with status unknown.
	Gap     *float64      `json:"gap,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// SolveCorpus schedules every window of c with every scheduler of ss,
// on the granularity grid, each within limit (solver.SolveWindow, so model.Check sees every
// schedule), and measures each answer's gap to the best bound any of
// them proved on the window. A bound above another scheduler's objective
// is an error: one of the two is wrong. progress, when set, gets a line
// per window.
func SolveCorpus(ctx context.Context, c []CorpusWindow, ss []solver.Scheduler, granularity int64, limit time.Duration, progress io.Writer) ([]CorpusResult, error) {
	var out []CorpusResult
	for _, cw := range c {
		best, bestFrom := math.Inf(-1), ""
		rows := make([]CorpusResult, len(ss))
		for k, s := range ss {
			sr, err := solver.SolveWindow(ctx, cw.Window, s, solver.Options{Granularity: granularity, TimeLimit: limit})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", cw.Name, err)
			}
			r := CorpusResult{Window: cw.Name, Jobs: len(cw.Window.Jobs), Solver: s.Name(), Status: sr.Status.String(), Elapsed: sr.Elapsed}
			if sr.Status != solver.Unknown && sr.Status != solver.Infeasible {
				r.Objective = ptr(sr.Objective)
			}
			if sr.HasBound() {
				r.Bound = ptr(sr.Bound)
				if sr.Bound > best {
					best, bestFrom = sr.Bound, s.Name()
				}
			}
			rows[k] = r
		}
		for k := range rows {
			r := &rows[k]
			if r.Objective == nil || math.IsInf(best, -1) {
				continue
			}
			o := *r.Objective
			if best > o+1e-9*max(1, math.Abs(o)) {
				return nil, fmt.Errorf("%s: %w: %s's bound %g is above %s's objective %g", cw.Name, solver.ErrSolverBug, bestFrom, best, r.Solver, o)
			}
			g := 0.0
			if o > 0 {
				g = max(0, (o-best)/o)
			}
			r.Gap = ptr(g)
		}
		if progress != nil {
			fmt.Fprintf(progress, "%s (%d jobs):", cw.Name, len(cw.Window.Jobs))
			for _, r := range rows {
				fmt.Fprintf(progress, " %s %s %s", r.Solver, r.Status, fmtGap(r.Gap))
			}
			fmt.Fprintln(progress)
		}
		out = append(out, rows...)
	}
	return out, nil
}

func ptr(v float64) *float64 { return &v }

func fmtGap(g *float64) string {
	if g == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f %%", 100**g)
}

// A CorpusRow summarises one scheduler's answers on a set of windows.
type CorpusRow struct {
	Solver string
	// Jobs is the range of waiting jobs of the windows ("all" for every
	// window).
	Jobs    string
	Windows int
	// Proven counts status optimal; Within1 the answers within 1 % of the
	// best bound; OwnWithin1 those within 1 % of the scheduler's own
	// bound, the gap it reports (−1 for a scheduler that proves no
	// bound); Unknown the windows without an answer.
	Proven, Within1, OwnWithin1, Unknown int
	// Gaps to the best bound: mean, median and max over the answers.
	GapMean, GapMedian, GapMax float64
	// Latency median and max.
	LatencyMedian, LatencyMax time.Duration
}

// jobBands are the ranges of waiting jobs the report breaks rows into.
var jobBands = [][2]int{{1, 6}, {7, 9}, {10, 14}, {15, math.MaxInt}}

// SummariseCorpus returns a row per scheduler over all windows, then a
// row per scheduler and band of waiting jobs (1–6, 7–9, 10–14, 15+) that
// has windows, in the order of the schedulers' first results.
func SummariseCorpus(rs []CorpusResult) []CorpusRow {
	var names []string
	for _, r := range rs {
		if !slices.Contains(names, r.Solver) {
			names = append(names, r.Solver)
		}
	}
	row := func(name, label string, keep func(CorpusResult) bool) (CorpusRow, bool) {
		row := CorpusRow{Solver: name, Jobs: label}
		var gaps []float64
		var lat []time.Duration
		bounded := false
		for _, r := range rs {
			if r.Solver != name || !keep(r) {
				continue
			}
			row.Windows++
			lat = append(lat, r.Elapsed)
			if r.Status == solver.Optimal.String() {
				row.Proven++
			}
			if r.Gap == nil {
				row.Unknown++
				continue
			}
			gaps = append(gaps, *r.Gap)
			if *r.Gap <= 0.01 {
				row.Within1++
			}
			if r.Bound != nil {
				bounded = true
				if o := *r.Objective; o <= 0 || (o-*r.Bound)/o <= 0.01 {
					row.OwnWithin1++
				}
			}
		}
		if !bounded {
			row.OwnWithin1 = -1
		}
		if row.Windows == 0 {
			return row, false
		}
		if len(gaps) > 0 {
			slices.Sort(gaps)
			for _, g := range gaps {
				row.GapMean += g
			}
			row.GapMean /= float64(len(gaps))
			row.GapMedian, row.GapMax = gaps[len(gaps)/2], gaps[len(gaps)-1]
		}
		slices.Sort(lat)
		row.LatencyMedian, row.LatencyMax = lat[len(lat)/2], lat[len(lat)-1]
		return row, true
	}
	var out []CorpusRow
	for _, n := range names {
		r, _ := row(n, "all", func(CorpusResult) bool { return true })
		out = append(out, r)
	}
	for _, b := range jobBands {
		label := fmt.Sprintf("%d–%d", b[0], b[1])
		if b[1] == math.MaxInt {
			label = fmt.Sprintf("%d+", b[0])
		}
		for _, n := range names {
			if r, ok := row(n, label, func(r CorpusResult) bool { return r.Jobs >= b[0] && r.Jobs <= b[1] }); ok {
				out = append(out, r)
			}
		}
	}
	return out
}

// WriteCorpusReport writes the rows as a table: the median latency also
// as a ratio to the first scheduler's in the same band.
func WriteCorpusReport(out io.Writer, rows []CorpusRow) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "jobs\tsolver\twindows\tproven\town gap ≤ 1 %\t≤ 1 %\tunknown\tgap mean\tmedian\tmax\tlatency median\tmax\t× first\t")
	base := map[string]time.Duration{}
	for _, r := range rows {
		if _, ok := base[r.Jobs]; !ok {
			base[r.Jobs] = r.LatencyMedian
		}
		ratio := "-"
		if b := base[r.Jobs]; b > 0 {
			ratio = fmt.Sprintf("%.3g", float64(r.LatencyMedian)/float64(b))
		}
		own := "-"
		if r.OwnWithin1 >= 0 {
			own = strconv.Itoa(r.OwnWithin1)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%d\t%.3f %%\t%.3f %%\t%.2f %%\t%s\t%s\t%s\t\n", r.Jobs, r.Solver, r.Windows, r.Proven, own, r.Within1, r.Unknown,
			100*r.GapMean, 100*r.GapMedian, 100*r.GapMax, fmtDur(r.LatencyMedian), fmtDur(r.LatencyMax), ratio)
	}
	return tw.Flush()
}
