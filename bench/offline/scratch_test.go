package offline

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, load := range []float64{1.5} {
		jobs := randomJobs(r, 1024, 256, 20000, load)
		for _, c := range []BoundOptions{{Buckets: 128, MaxIterations: 3000}, {Buckets: 512, MaxIterations: 3000}, {Buckets: 2048, MaxIterations: 1000}} {
			t0 := time.Now()
			b, err := Bound(context.Background(), jobs, 256, c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("load %.1f %+v: bound %.1f (mean %.3f) upper %.1f (%s, mean %.3f) it %d buckets %d %v", load, c, b.Value, b.Value/1024, b.Upper, b.Heuristic, b.Upper/1024, b.Iterations, b.Buckets, time.Since(t0))
		}
	}
}
