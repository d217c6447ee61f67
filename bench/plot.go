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

// A Box is one box of a BoxFigure: its label on the x axis and the values
// it summarises.
type Box struct {
	Label  string
	Values []float64
}

// A BoxFigure is a figure of box plots side by side, the form of the
// papers' latency and cost figures (Lan et al. Fig. 6).
type BoxFigure struct {
	Title, YLabel string
	// Log puts the y axis on a log scale; values must then be positive
	// (smaller ones are raised to 1e-3).
	Log   bool
	Boxes []Box
}

// Save draws f and writes it as base.png and base.svg, creating base's
// folder. Boxes without values are left out; when none has values,
// nothing is written and Save returns no files and no error. It returns
// the files written.
func (f BoxFigure) Save(base string) ([]string, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.Y.Label.Text = f.YLabel
	if f.Log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	var labels []string
	for _, b := range f.Boxes {
		if len(b.Values) == 0 {
			continue
		}
		v := make(plotter.Values, len(b.Values))
		for i, x := range b.Values {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("plot %s: box %s: value %v", f.Title, b.Label, x)
			}
			if f.Log {
				x = max(x, 1e-3)
			}
			v[i] = x
		}
		box, err := plotter.NewBoxPlot(vg.Points(20), float64(len(labels)), v)
		if err != nil {
			return nil, fmt.Errorf("plot %s: box %s: %w", f.Title, b.Label, err)
		}
		p.Add(box)
		labels = append(labels, b.Label)
	}
	if len(labels) == 0 {
		return nil, nil
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(labels))-0.4 // room around a lone box
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, ext := range []string{"png", "svg"} {
		file := base + "." + ext
		if err := p.Save(vg.Length(40+20*len(labels))*vg.Millimeter, 100*vg.Millimeter, file); err != nil {
			return files, fmt.Errorf("plot %s: %w", file, err)
		}
		files = append(files, file)
	}
	return files, nil
}

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
		lat := map[string][]float64{}
		gap := map[string][]float64{}
		for _, r := range rows {
			if r.Class == c {
				names = append(names, r.Solver)
			}
		}
		for _, s := range samples {
			if s.Class != c {
				continue
			}
			lat[s.Solver] = append(lat[s.Solver], s.Seconds*1000)
			if b := best[[2]any{s.Class, s.Window}]; s.OK && s.Objective > 0 && !math.IsInf(b, -1) {
				gap[s.Solver] = append(gap[s.Solver], 100*(float64(s.Objective)-b)/float64(s.Objective))
			}
		}
		for _, fig := range []struct {
			name, ylabel string
			vals         map[string][]float64
			log          bool
		}{
			{"latency", "solve latency (ms, log scale)", lat, true},
			{"gap", "gap to the best bound (%)", gap, false},
		} {
			bf := BoxFigure{Title: fmt.Sprintf("bench scas, class %s: %s per solver", c, fig.name), YLabel: fig.ylabel, Log: fig.log}
			for _, n := range names {
				bf.Boxes = append(bf.Boxes, Box{Label: n, Values: fig.vals[n]})
			}
			fs, err := bf.Save(filepath.Join(dir, fmt.Sprintf("scas-%s-%s", c, fig.name)))
			files = append(files, fs...)
			if err != nil {
				return files, err
			}
		}
	}
	return files, nil
}
