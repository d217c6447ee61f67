package gaps

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/optsched/optsched/bench/report"
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
			bf := report.BoxFigure{Title: fmt.Sprintf("bench scas, class %s: %s per solver", c, fig.name), YLabel: fig.ylabel, Log: fig.log}
			for _, n := range names {
				bf.Boxes = append(bf.Boxes, report.Box{Label: n, Values: fig.vals[n]})
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
