package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

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

// Verify checks that files are images as Save writes them: PNG or SVG
// files of some substance (at least 500 bytes), by their content.
func Verify(files []string) error {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		switch {
		case len(b) < 500:
			return fmt.Errorf("%s: %d bytes", f, len(b))
		case strings.HasSuffix(f, ".png") && string(b[1:4]) != "PNG":
			return fmt.Errorf("%s is not a PNG", f)
		case strings.HasSuffix(f, ".svg") && !strings.Contains(string(b[:200]), "<svg"):
			return fmt.Errorf("%s is not an SVG", f)
		case !strings.HasSuffix(f, ".png") && !strings.HasSuffix(f, ".svg"):
			return fmt.Errorf("%s is neither a PNG nor an SVG file", f)
		}
	}
	return nil
}
