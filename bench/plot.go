package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// PlotSCAS draws, per class, box plots of the solve latency (log scale,
// milliseconds) and of the gap to the best bound (percent) per solver,
// and saves each as PNG and SVG in dir: scas-CLASS-latency.{png,svg} and
// scas-CLASS-gap.{png,svg}. It returns the files written.
func PlotSCAS(samples []Sample, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rows := Summarise(samples) // fixes class and solver order
	var files []string
	var classes []string
	for _, r := range rows {
		if len(classes) == 0 || classes[len(classes)-1] != r.Class {
			classes = append(classes, r.Class)
		}
	}
	best := map[[2]any]float64{}
	for _, s := range samples {
		k := [2]any{s.Class, s.Window}
		if _, ok := best[k]; !ok {
			best[k] = math.Inf(-1)
		}
		if s.OK && s.Bound != nil {
			best[k] = max(best[k], *s.Bound)
		}
	}
	for _, c := range classes {
		var names []string
		lat := map[string]plotter.Values{}
		gap := map[string]plotter.Values{}
		for _, r := range rows {
			if r.Class == c {
				names = append(names, r.Solver)
			}
		}
		for _, s := range samples {
			if s.Class != c {
				continue
			}
			lat[s.Solver] = append(lat[s.Solver], max(s.Seconds*1000, 1e-3))
			if b := best[[2]any{s.Class, s.Window}]; s.OK && s.Objective > 0 && !math.IsInf(b, -1) {
				gap[s.Solver] = append(gap[s.Solver], 100*(float64(s.Objective)-b)/float64(s.Objective))
			}
		}
		for _, fig := range []struct {
			name, ylabel string
			vals         map[string]plotter.Values
			log          bool
		}{
			{"latency", "solve latency (ms, log scale)", lat, true},
			{"gap", "gap to the best bound (%)", gap, false},
		} {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("bench scas, class %s: %s per solver", c, fig.name)
			p.Y.Label.Text = fig.ylabel
			if fig.log {
				p.Y.Scale = plot.LogScale{}
				p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
			}
			var labels []string
			for _, n := range names {
				v := fig.vals[n]
				if len(v) == 0 {
					continue
				}
				box, err := plotter.NewBoxPlot(vg.Points(20), float64(len(labels)), v)
				if err != nil {
					return files, fmt.Errorf("plot %s %s %s: %w", c, fig.name, n, err)
				}
				p.Add(box)
				labels = append(labels, n)
			}
			if len(labels) == 0 {
				continue
			}
			p.NominalX(labels...)
			for _, ext := range []string{"png", "svg"} {
				f := filepath.Join(dir, fmt.Sprintf("scas-%s-%s.%s", c, fig.name, ext))
				if err := p.Save(vg.Length(90+70*len(labels))*vg.Millimeter/4, 100*vg.Millimeter, f); err != nil {
					return files, fmt.Errorf("plot %s: %w", f, err)
				}
				files = append(files, f)
			}
		}
	}
	return files, nil
}
