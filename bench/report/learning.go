package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// A LearningPoint is one point of a learning curve: after Episodes
// episodes, the batch's mean reward, its moving average, and the mean
// reward the baseline (SA's uniform repair) gets on the same episodes.
type LearningPoint struct {
	Episodes                 int
	Reward, Moving, Baseline float64
}

// PlotLearningCurve draws a learning curve in the manner of [Lan23]
// Fig. 4 — reward against training episodes — with the batch means, their
// moving average and the baseline, and saves it to file (the format
// follows the extension: .png, .svg, .pdf).
func PlotLearningCurve(points []LearningPoint, title, file string) error {
	return PlotLearningCurveLabelled(points, title, "reward (− CH cost of the repaired jobs, scaled)", "uniform start (SA's repair)", file)
}

// PlotLearningCurveLabelled is PlotLearningCurve with the y axis's label
// and the baseline's legend given.
func PlotLearningCurveLabelled(points []LearningPoint, title, ylabel, baseline, file string) error {
	if len(points) == 0 {
		return fmt.Errorf("plot %s: no points", file)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "episodes"
	p.Y.Label.Text = ylabel
	mk := func(f func(LearningPoint) float64) plotter.XYs {
		xy := make(plotter.XYs, len(points))
		for i, pt := range points {
			xy[i].X, xy[i].Y = float64(pt.Episodes), f(pt)
		}
		return xy
	}
	raw, err := plotter.NewLine(mk(func(pt LearningPoint) float64 { return pt.Reward }))
	if err != nil {
		return err
	}
	raw.Color = color.RGBA{R: 150, G: 180, B: 230, A: 255}
	mov, err := plotter.NewLine(mk(func(pt LearningPoint) float64 { return pt.Moving }))
	if err != nil {
		return err
	}
	mov.Color, mov.Width = color.RGBA{B: 160, A: 255}, vg.Points(2)
	base, err := plotter.NewLine(mk(func(pt LearningPoint) float64 { return pt.Baseline }))
	if err != nil {
		return err
	}
	base.Color, base.Dashes = color.RGBA{R: 200, A: 255}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(plotter.NewGrid(), raw, mov, base)
	// Room below the curves for the legend.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range points {
		for _, v := range []float64{pt.Reward, pt.Moving, pt.Baseline} {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi > lo {
		p.Y.Min, p.Y.Max = lo-0.45*(hi-lo), hi+0.05*(hi-lo)
	}
	p.Legend.Add("batch mean", raw)
	p.Legend.Add("moving average", mov)
	p.Legend.Add(baseline, base)
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(10)
	return p.Save(160*vg.Millimeter, 100*vg.Millimeter, file)
}
