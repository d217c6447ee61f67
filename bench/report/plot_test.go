package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkFigures fails unless files are n images Verify accepts.
func checkFigures(t *testing.T, files []string, n int) {
	t.Helper()
	if len(files) != n {
		t.Fatalf("files %v, want %d", files, n)
	}
	if err := Verify(files); err != nil {
		t.Fatal(err)
	}
}

func TestBoxFigureSave(t *testing.T) {
	dir := t.TempDir()
	fig := BoxFigure{Title: "t", YLabel: "y", Log: true, Boxes: []Box{{Label: "a", Values: []float64{0, 1, 10, 100}}, {Label: "empty"}}}
	files, err := fig.Save(filepath.Join(dir, "sub", "f"))
	if err != nil {
		t.Fatal(err)
	}
	checkFigures(t, files, 2)
	// Nothing to draw: no files, no error.
	files, err = BoxFigure{Title: "none", Boxes: []Box{{Label: "x"}}}.Save(filepath.Join(dir, "none"))
	if err != nil || len(files) != 0 {
		t.Fatalf("empty figure: %v, %v", files, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.png")); !os.IsNotExist(err) {
		t.Fatalf("empty figure wrote a file: %v", err)
	}
	// A NaN is an error naming the box, not a broken figure.
	_, err = BoxFigure{Title: "nan", Boxes: []Box{{Label: "bad", Values: []float64{1, math.NaN()}}}}.Save(filepath.Join(dir, "nan"))
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("NaN: %v", err)
	}
}

func TestSpreadOf(t *testing.T) {
	xs := make([]float64, 200)
	for i := range xs {
		xs[len(xs)-1-i] = float64(i) // descending: SpreadOf sorts
	}
	s := SpreadOf(xs)
	if s.N != 200 || s.Mean != 99.5 || s.P99 != 197 || s.Max != 199 {
		t.Fatalf("spread %+v, want n 200, mean 99.5, p99 197 (rank 198), max 199", s)
	}
	if (SpreadOf(nil) != Spread{}) {
		t.Fatal("empty sample")
	}
}
