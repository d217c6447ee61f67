package sim

import (
	"path/filepath"

	"github.com/optsched/optsched/bench/report"
)

// Plot draws r's distributions as box plots, labelled label (the policy
// and solver, say), and writes them as PNG and SVG in dir: sim-wait (the
// jobs' waits, hours), sim-cost (the CH cost of the multi-node jobs),
// and, for the window policy, sim-latency (the windows' solve latency, ms,
// log scale) and sim-gap (the per-window gap to the gap solver's optimum
// or bound, percent) when measured. Figures without data are skipped. It
// returns the files written.
func (r *Result) Plot(dir, label string) ([]string, error) {
	var wait, cost, lat, gap []float64
	for i := range r.Jobs {
		j := &r.Jobs[i]
		wait = append(wait, float64(j.Wait())/3600)
		if j.NodeCount() > 1 {
			cost = append(cost, float64(j.Cost))
		}
	}
	for _, d := range r.SolveTimes {
		lat = append(lat, d.Seconds()*1000)
	}
	for _, g := range r.Gaps {
		gap = append(gap, 100*g.Gap)
	}
	figs := []struct {
		name string
		fig  report.BoxFigure
	}{
		{"sim-wait", report.BoxFigure{Title: "wait per job", YLabel: "wait (h)", Boxes: []report.Box{{Label: label, Values: wait}}}},
		{"sim-cost", report.BoxFigure{Title: "CH cost per multi-node job", YLabel: "CH cost", Boxes: []report.Box{{Label: label, Values: cost}}}},
		{"sim-latency", report.BoxFigure{Title: "window solve latency", YLabel: "ms (log scale)", Log: true, Boxes: []report.Box{{Label: label, Values: lat}}}},
		{"sim-gap", report.BoxFigure{Title: "gap to " + r.GapSolver + " per window", YLabel: "gap (%)", Boxes: []report.Box{{Label: label, Values: gap}}}},
	}
	var files []string
	for _, f := range figs {
		fs, err := f.fig.Save(filepath.Join(dir, f.name))
		files = append(files, fs...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}
