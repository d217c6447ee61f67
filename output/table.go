package output

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
)

// Figure writes an objective or a bound for people: an integral value as
// an integer (2638660, never 2.63866e+06 beside an integer objective),
// others with six significant digits (8.78801), or two decimals at most
// where those would need an exponent (2638659.5).
func Figure(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	if r := math.Round(x); math.Abs(x-r) <= 1e-9*math.Max(1, math.Abs(x)) && math.Abs(r) < 1<<53 {
		return strconv.FormatInt(int64(r), 10)
	}
	if g := strconv.FormatFloat(x, 'g', 6, 64); !strings.ContainsRune(g, 'e') {
		return g
	}
	return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64)
}

// WriteResultTable writes a result document for people: the figures,
// then a line per allocation and the deferred jobs with their reasons.
func WriteResultTable(out io.Writer, d *ResultDoc) {
	num := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	bound, gap := "-", "-"
	if d.Bound != nil {
		bound = Figure(*d.Bound)
	}
	if d.Gap != nil {
		gap = fmt.Sprintf("%.3f%%", 100**d.Gap)
	}
	fmt.Fprintf(out, "status %s   objective %s   bound %s   gap %s\n", d.Status, num(d.Objective), bound, gap)
	fmt.Fprintf(out, "solver %s   encoding %s   elapsed %.3f ms\n\n", d.Solver, d.Encoding, d.ElapsedMS)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tNODES\tCOST\tSTART\tNODE LIST")
	for _, a := range d.Allocations {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", a.Job, len(a.Nodes), a.Cost, a.Start, hostlist.Compress(a.Nodes))
	}
	tw.Flush()
	writeDeferred(out, d.Deferred)
}

// WriteScheduleTable writes a schedule document of window w for people: the jobs that start
// now (the decisions) first, then the reservations of later starts.
func WriteScheduleTable(out io.Writer, w *model.Window, d *ScheduleDoc) {
	num := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return Figure(*p)
	}
	gap := "-"
	if d.Gap != nil {
		gap = fmt.Sprintf("%.3f%%", 100**d.Gap)
	}
	fmt.Fprintf(out, "status %s   objective %s   bound %s   gap %s\n", d.Status, num(d.Objective), num(d.Bound), gap)
	fmt.Fprintf(out, "solver %s   encoding %s   grid %d s   elapsed %.3f ms\n\n", d.Solver, d.Encoding, d.Granularity, d.ElapsedMS)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tQUEUE\tSTART\tWAIT\tUNITS\tNODES")
	jobIndex := w.JobIndices()
	for _, a := range d.Allocations {
		j, _ := jobIndex(a.Job)
		when := "now"
		if a.Start > w.Time {
			when = fmt.Sprintf("+%ds", a.Start-w.Time)
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range a.Units {
				if !yield(n) {
					return
				}
			}
		})
		units := ""
		for i, n := range names {
			if i > 0 {
				units += " "
			}
			units += fmt.Sprintf("%s:%d", n, a.Units[n])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%ds\t%s\t%s\n", a.Job, w.Jobs[j].Queue, when, a.Start-w.Jobs[j].Submit, units, hostlist.Compress(a.Nodes))
	}
	tw.Flush()
	writeDeferred(out, d.Deferred)
}

// writeDeferred writes the deferred jobs with their reasons, if any.
func writeDeferred(out io.Writer, deferred []DeferralDoc) {
	if len(deferred) == 0 {
		return
	}
	fmt.Fprintf(out, "\ndeferred (%d):\n", len(deferred))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, def := range deferred {
		fmt.Fprintf(tw, "  %s\t%s\n", def.Job, def.Reason)
	}
	tw.Flush()
}
