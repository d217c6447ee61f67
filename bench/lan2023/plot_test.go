package lan2023

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func checkFiles(t *testing.T, files []string, want []string) {
	t.Helper()
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
		if b, err := os.ReadFile(f); err != nil || len(b) < 500 {
			t.Errorf("%s: %d bytes, %v", f, len(b), err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("figures %v, want %v", got, want)
	}
}

func TestPlotFig6AndTables(t *testing.T) {
	var figs []EpochFigure
	for i, p := range PublishedExact(FCFS) {
		figs = append(figs, EpochFigure{Epoch: i + 1, FirstJob: 300 * i, Jobs: 300, Cost: p.Cost, Wait: p.Wait, MeanCost: float64(p.Cost), MeanWait: float64(p.Wait)})
	}
	r := &Report{Trace: "t", Epochs: 10, Slice: DefaultSlice, FCFS: figs, BF: figs, Window: []TauFigures{{Tau: 10, Epochs: figs}}}
	dir := t.TempDir()
	files, err := PlotFig6(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, files, []string{"fig6-cost.png", "fig6-cost.svg", "fig6-wait.png", "fig6-wait.svg"})

	tr, err := RunTables(context.Background(), tblSynthetic(3, 400), tblSmall())
	if err != nil {
		t.Fatal(err)
	}
	files, err = PlotTables(tr, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, files, []string{"table3-cost.png", "table3-cost.svg", "table4-time.png", "table4-time.svg"})
	tr.Epochs[0].Rows = tr.Epochs[0].Rows[:2]
	if _, err := PlotTables(tr, dir); err == nil {
		t.Error("PlotTables accepted an epoch with too few rows")
	}
}
