package limits

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Print writes rep for people: a table per class (a row per solver and
// limit), the failed runs, and the verdict. A peak RSS marked "≤" is at
// or below the floor of its measurement (Cell.RSSFloorKiB); one marked
// "!" breaks the memory promise, as does an overshoot marked "!" the
// deadline.
func Print(out io.Writer, rep *Report) error {
	describe := map[string]string{}
	for _, c := range Classes() {
		describe[c.Name] = c.Describe
	}
	var failures []string
	for i := 0; i < len(rep.Cells); {
		class := rep.Cells[i].Class
		fmt.Fprintf(out, "%s: %s\n\n", class, describe[class])
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "solver\tlimit\truns\tstatuses\tmedian elapsed\tp99 overshoot\tworst overshoot\tworst wall\tpeak RSS\tfailed\t")
		for ; i < len(rep.Cells) && rep.Cells[i].Class == class; i++ {
			c := &rep.Cells[i]
			for _, f := range c.Failures {
				failures = append(failures, c.Where()+" "+f)
			}
			if c.Unavailable != "" {
				fmt.Fprintf(tw, "%s\t%v\t%d\tunavailable\t—\t—\t—\t—\t—\t—\t\n", c.Solver, c.Limit, c.Runs)
				continue
			}
			elapsed, p99, worst := "—", "—", "—"
			if c.Answered > 0 {
				elapsed = fmt.Sprintf("%.3f ms", c.MedianElapsedMS)
				p99 = fmt.Sprintf("%+.3f ms", c.P99OvershootMS)
				worst = fmt.Sprintf("%+.3f ms", c.WorstOvershootMS)
				if c.OverDeadline() {
					worst += " !"
				}
			}
			rss := "—"
			if c.PeakRSSKiB != nil {
				rss = mib(*c.PeakRSSKiB)
				if c.RSSFloorKiB != nil && *c.PeakRSSKiB <= *c.RSSFloorKiB {
					rss = "≤ " + rss
				}
				if c.OverMemory() {
					rss += " !"
				}
			}
			fmt.Fprintf(tw, "%s\t%v\t%d\t%s\t%s\t%s\t%s\t%.1f ms\t%s\t%d\t\n", c.Solver, c.Limit, c.Runs, StatusText(c.Statuses),
				elapsed, p99, worst, c.WorstWallMS, rss, len(c.Failures))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	if len(failures) > 0 {
		fmt.Fprintf(out, "failed runs (%d):\n", len(failures))
		for _, f := range failures {
			fmt.Fprintf(out, "  %s\n", f)
		}
		fmt.Fprintln(out)
	}
	return printVerdict(out, rep)
}

// printVerdict writes the verdict section.
func printVerdict(out io.Writer, rep *Report) error {
	v := &rep.Verdict
	fmt.Fprintln(out, "verdict")
	if v.WorstOvershootAt == "" {
		fmt.Fprintln(out, "  deadline: no answer to judge")
	} else {
		fmt.Fprintf(out, "  deadline (elapsed_ms ≤ limit + %.0f ms): worst overshoot %+.3f ms at %s; %s\n",
			DeadlineSlackMS, v.WorstOvershootMS, v.WorstOvershootAt, over(v.OverDeadline, len(rep.Cells)))
	}
	bounded := slices.ContainsFunc(rep.Cells, func(c Cell) bool { return c.Bounded && c.Unavailable == "" })
	switch {
	case !bounded:
		fmt.Fprintln(out, "  memory (peak RSS < 1 GiB up to 10,000 nodes and 200 jobs): no class it applies to was run")
	case v.WorstRSSKiB == nil:
		fmt.Fprintln(out, "  memory (peak RSS < 1 GiB up to 10,000 nodes and 200 jobs): not measured on this platform")
	default:
		fmt.Fprintf(out, "  memory (peak RSS < 1 GiB up to 10,000 nodes and 200 jobs): worst %s at %s; %s\n",
			mib(*v.WorstRSSKiB), v.WorstRSSAt, over(v.OverMemory, len(rep.Cells)))
	}
	if v.UnboundedRSSKiB != nil {
		fmt.Fprintf(out, "  outside the memory promise: peak %s at %s\n", mib(*v.UnboundedRSSKiB), v.UnboundedRSSAt)
	}
	if v.Failures > 0 {
		fmt.Fprintf(out, "  failed runs: %d, in %s\n", v.Failures, strings.Join(v.FailedCells, ", "))
	} else {
		fmt.Fprintln(out, "  failed runs: none")
	}
	if len(v.Unavailable) > 0 {
		fmt.Fprintf(out, "  not in this optsched (not judged): %s\n", strings.Join(v.Unavailable, ", "))
	}
	verdict := "the promises held in every cell"
	if !v.OK {
		verdict = "the promises did NOT hold"
	}
	runs := 0
	for i := range rep.Cells {
		runs += rep.Cells[i].Runs
	}
	_, err := fmt.Fprintf(out, "  %s (%d runs in %.1f s)\n", verdict, runs, rep.Seconds)
	return err
}

// over says which of n cells are over a bound.
func over(cells []string, n int) string {
	if len(cells) == 0 {
		return "no cell over"
	}
	return fmt.Sprintf("%d of %d cells over: %s", len(cells), n, strings.Join(cells, ", "))
}
