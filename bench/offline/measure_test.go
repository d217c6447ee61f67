package offline

import (
	"context"
	"flag"
	"math/rand/v2"
	"testing"
	"time"
)

var measure = flag.Duration("offline.measure", 0, "run TestMeasureTightness with this time limit per Exact call")
var measureSizes = flag.String("offline.sizes", "16,32,48,64", "sequence lengths for TestMeasureTightness")

// TestMeasureTightness reports Bound / optimum on random sequences of
// 16–64 jobs (behind -offline.measure, a time limit per Exact call).
func TestMeasureTightness(t *testing.T) {
	if *measure == 0 {
		t.Skip("needs -offline.measure")
	}
	var sizes []int
	for _, f := range splitComma(*measureSizes) {
		var n int
		for _, c := range f {
			n = 10*n + int(c-'0')
		}
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		r := rand.New(rand.NewPCG(uint64(n), 3))
		var sum, mx, rootSum float64
		proven, count := 0, 0
		var took time.Duration
		for range 10 {
			jobs := randomJobs(r, n, 16, 3000, 1.3)
			b, err := Bound(context.Background(), jobs, 16, BoundOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), *measure)
			t0 := time.Now()
			e, err := Exact(ctx, jobs, 16, ExactOptions{})
			took += time.Since(t0)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(jobs, 16, e.Starts); err != nil {
				t.Fatal(err)
			}
			count++
			if !e.Proven {
				t.Logf("n=%d: not proven: value %.2f bound %.2f (Bound %.2f) nodes %d", n, e.Value, e.Bound, b.Value, e.Nodes)
				continue
			}
			proven++
			ratio := b.Value / e.Value
			sum += ratio
			rootSum += e.RootBound / e.Value
			mx = max(mx, ratio)
			t.Logf("n=%d: opt %.2f (mean %.3f) Bound %.2f ratio %.3f, list %.2f, nodes %d, %v", n, e.Value, e.Value/float64(n), b.Value, ratio, b.Upper, e.Nodes, time.Since(t0).Round(time.Millisecond))
		}
		t.Logf("n=%d: proven %d of %d, mean Bound/opt %.3f, total Exact time %v", n, proven, count, sum/float64(max(proven, 1)), took.Round(time.Millisecond))
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
