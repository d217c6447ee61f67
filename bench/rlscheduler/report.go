package rlscheduler

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the result for people: one line per policy with its
// cell, the published figure and the gap to the bound, then its value on
// every sequence.
func (r *Result) WriteTable(w io.Writer) error {
	mode := "without backfilling"
	if r.Backfill {
		mode = "with backfilling"
	}
	paper := "no published row"
	if r.Paper != "" {
		paper = "published row: " + r.Paper
		if r.PublishedRL != nil {
			paper += fmt.Sprintf(" (the learned policy RL: %.2f)", *r.PublishedRL)
		}
	}
	fmt.Fprintf(w, "RLScheduler benchmark (Zhang et al., SC'20): %s, %d nodes of %g processors, %d sequences of %d jobs, %s; %s\n",
		r.Trace, r.Nodes, r.ProcsPerNode, len(r.Sequences), r.Sequences[0].Jobs, mode, paper)
	if r.DropFirst > 0 {
		fmt.Fprintf(w, "first %d job records dropped to line the positions up\n", r.DropFirst)
	}
	capped := 0
	for _, s := range r.Sequences {
		capped += s.Capped
	}
	if capped > 0 {
		fmt.Fprintf(w, "%d jobs wider than the cluster run on all of it\n", capped)
	}
	fmt.Fprintln(w, "average bounded slowdown (10 s), mean over the sequences:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "policy\tprotocol\tours\tpublished\tΔ\t"
	if r.Bound != nil {
		head += "gap to bound\t"
	}
	head += "time\t"
	fmt.Fprintln(tw, head)
	for _, p := range r.Policies {
		pub, delta := "—", "—"
		if p.Published != nil {
			pub = fmt.Sprintf("%.2f", *p.Published)
			delta = fmt.Sprintf("%+.2f", math.Round(p.Mean*100)/100-*p.Published)
			if delta == "-0.00" {
				delta = "+0.00"
			}
		}
		line := fmt.Sprintf("%s\t%s\t%.2f\t%s\t%s\t", p.Name, p.Protocol, p.Mean, pub, delta)
		if r.Bound != nil {
			line += fmt.Sprintf("%.1f %%\t", 100**p.Gap)
		}
		line += fmt.Sprintf("%.1f s\t", p.ElapsedMS/1000)
		fmt.Fprintln(tw, line)
	}
	if r.Bound != nil {
		fmt.Fprintf(tw, "offline schedule\toffline\t%.2f\t—\t—\t\t\t\n", r.Bound.Upper)
		fmt.Fprintf(tw, "bound\toffline\t%.2f\t—\t—\t\t%.1f s\t\n", r.Bound.Mean, r.Bound.ElapsedMS/1000)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Bound != nil {
		fmt.Fprintf(w, "bound: a proven lower bound on the mean bounded slowdown of any schedule of the sequence, offline (it knows every arrival and real run time in advance); %d of %d sequences exact (the proven optimum); gap = (value − bound) / value, mean over sequences\n", r.Bound.Exact, len(r.Sequences))
		fmt.Fprintln(w, "offline schedule: the best schedule the bound's search found, knowing the future too; the offline optimum lies between the bound and it")
	}
	for _, p := range r.Policies {
		if p.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", p.Name, p.Note)
		}
	}
	fmt.Fprintln(w, "\nper sequence (start position):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var b strings.Builder
	b.WriteString("policy\t")
	for _, s := range r.Sequences {
		fmt.Fprintf(&b, "%d\t", s.Start)
	}
	fmt.Fprintln(tw, b.String())
	row := func(name string, v []float64) {
		b.Reset()
		b.WriteString(name + "\t")
		for _, x := range v {
			fmt.Fprintf(&b, "%.2f\t", x)
		}
		fmt.Fprintln(tw, b.String())
	}
	for _, p := range r.Policies {
		row(p.Name, p.PerSequence)
	}
	if r.Bound != nil {
		row("offline schedule", r.Bound.UpperPerSequence)
		row("bound", r.Bound.PerSequence)
	}
	return tw.Flush()
}
