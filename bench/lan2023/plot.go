package lan2023

import (
	"fmt"
	"path/filepath"

	"github.com/optsched/optsched/bench/report"
)

// PlotFig6 draws Fig. 6 of [Lan23] from r as the paper does — box plots
// over the epochs of the mean CH cost and of the mean wait, one box per
// series (FCFS, BF, each window period τ) — with, beside each of our
// boxes, the published figures' box ("paper") when the authors' result
// files cover the series. It writes fig6-cost and fig6-wait, each as PNG
// and SVG, in dir and returns the files written.
func PlotFig6(r *Report, dir string) ([]string, error) {
	cost := report.BoxFigure{Title: "Fig. 6 (Lan et al.): mean CH cost per epoch", YLabel: "mean CH cost (lan-code)"}
	wait := report.BoxFigure{Title: "Fig. 6 (Lan et al.): mean wait per epoch", YLabel: "mean wait (s)"}
	for _, s := range r.series() {
		var c, w, pc, pw []float64
		for _, f := range s.figs {
			c = append(c, f.MeanCost)
			w = append(w, f.MeanWait)
			if p, ok := r.published(s.key, f.Epoch); ok {
				pc = append(pc, float64(p.Cost))
				pw = append(pw, float64(p.Wait))
			}
		}
		cost.Boxes = append(cost.Boxes, report.Box{Label: s.name, Values: c})
		wait.Boxes = append(wait.Boxes, report.Box{Label: s.name, Values: w})
		if len(pc) == len(s.figs) { // the whole series is published
			cost.Boxes = append(cost.Boxes, report.Box{Label: s.name + " paper", Values: pc})
			wait.Boxes = append(wait.Boxes, report.Box{Label: s.name + " paper", Values: pw})
		}
	}
	var files []string
	for _, f := range []struct {
		fig  report.BoxFigure
		name string
	}{{cost, "fig6-cost"}, {wait, "fig6-wait"}} {
		fs, err := f.fig.Save(filepath.Join(dir, f.name))
		files = append(files, fs...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// PlotTables draws Tables III and IV of [Lan23] from r as box plots over
// the epochs, one box per built method: the epoch's cost (Table III) and
// its mean solve time per window in milliseconds on a log scale (Table
// IV). The paper gives only means, so its figures are not boxes; the
// markdown tables print them beside ours. It writes table3-cost and
// table4-time, each as PNG and SVG, in dir and returns the files written.
func PlotTables(r *TableResult, dir string) ([]string, error) {
	cost := report.BoxFigure{Title: "Table III (Lan et al.): cost per epoch", YLabel: "Σ window CH cost / periods"}
	tm := report.BoxFigure{Title: "Table IV (Lan et al.): mean time per window, per epoch", YLabel: "ms per window (log scale)", Log: true}
	for m, meth := range r.Methods {
		if !meth.Built {
			continue
		}
		var c, t []float64
		for _, ep := range r.Epochs {
			if m >= len(ep.Rows) {
				return nil, fmt.Errorf("lan2023: epoch %d has %d rows for %d methods", ep.Index, len(ep.Rows), len(r.Methods))
			}
			c = append(c, ep.Rows[m].Cost)
			t = append(t, ep.Rows[m].MeanTimeMS)
		}
		cost.Boxes = append(cost.Boxes, report.Box{Label: meth.Name, Values: c})
		tm.Boxes = append(tm.Boxes, report.Box{Label: meth.Name, Values: t})
	}
	var files []string
	for _, f := range []struct {
		fig  report.BoxFigure
		name string
	}{{cost, "table3-cost"}, {tm, "table4-time"}} {
		fs, err := f.fig.Save(filepath.Join(dir, f.name))
		files = append(files, fs...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}
