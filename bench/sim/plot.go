package sim

import (
	"path/filepath"

	"github.com/optsched/optsched/bench"
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
		if len(j.Nodes) > 1 {
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
		fig  bench.BoxFigure
	}{
		{"sim-wait", bench.BoxFigure{Title: "wait per job", YLabel: "wait (h)", Boxes: []bench.Box{{Label: label, Values: wait}}}},
		{"sim-cost", bench.BoxFigure{Title: "CH cost per multi-node job", YLabel: "CH cost", Boxes: []bench.Box{{Label: label, Values: cost}}}},
		{"sim-latency", bench.BoxFigure{Title: "window solve latency", YLabel: "ms (log scale)", Log: true, Boxes: []bench.Box{{Label: label, Values: lat}}}},
		{"sim-gap", bench.BoxFigure{Title: "gap to " + r.GapSolver + " per window", YLabel: "gap (%)", Boxes: []bench.Box{{Label: label, Values: gap}}}},
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
