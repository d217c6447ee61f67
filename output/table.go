package output

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/optsched/optsched/model"
	"github.com/optsched/optsched/model/hostlist"
	"github.com/optsched/optsched/solver"
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

// WriteTable writes an answer document of window w for people: the
// figures, then a line per allocation — whole-node, its nodes and cost;
// time-and-resource, its queue, start, wait and units, the jobs that start
// now (the decisions) first, then the reservations of later starts — and
// the deferred jobs with their reasons.
func WriteTable[O solver.ObjectiveValue](out io.Writer, w *model.Window, d *AnswerDoc[O]) {
	num := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return Figure(*p)
	}
	var obj *float64
	if d.Objective != nil {
		o := float64(*d.Objective)
		obj = &o
	}
	gap := "-"
	if d.Gap != nil {
		gap = fmt.Sprintf("%.3f%%", 100**d.Gap)
	}
	fmt.Fprintf(out, "status %s   objective %s   bound %s   gap %s\n", d.Status, num(obj), num(d.Bound), gap)
	grid := ""
	if d.Scheduled() {
		grid = fmt.Sprintf("grid %d s   ", *d.Granularity)
	}
	fmt.Fprintf(out, "solver %s   encoding %s   %selapsed %.3f ms\n\n", d.Solver, d.Encoding, grid, d.ElapsedMS)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if d.Scheduled() {
		writeScheduleRows(tw, w, d.Allocations)
	} else {
		fmt.Fprintln(tw, "JOB\tNODES\tCOST\tSTART\tNODE LIST")
		for _, a := range d.Allocations {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", a.Job, len(a.Nodes), a.Cost, a.Start, hostlist.Compress(a.Nodes))
		}
	}
	tw.Flush()
	writeDeferred(out, d.Deferred)
}

// writeScheduleRows writes the rows of a time-and-resource answer: queue,
// start (now or +seconds), wait and units of every job.
func writeScheduleRows(tw io.Writer, w *model.Window, allocs []AllocationDoc) {
	fmt.Fprintln(tw, "JOB\tQUEUE\tSTART\tWAIT\tUNITS\tNODES")
	jobIndex := w.JobIndices()
	for _, a := range allocs {
		j, _ := jobIndex(a.Job)
		when := "now"
		if a.Start > w.Time {
			when = fmt.Sprintf("+%ds", a.Start-w.Time)
		}
		units := ""
		for i, n := range slices.Sorted(maps.Keys(a.Units)) {
			if i > 0 {
				units += " "
			}
			units += fmt.Sprintf("%s:%d", n, a.Units[n])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%ds\t%s\t%s\n", a.Job, w.Jobs[j].Queue, when, a.Start-w.Jobs[j].Submit, units, hostlist.Compress(a.Nodes))
	}
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
