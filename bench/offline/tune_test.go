package offline

import (
	"context"
	"math/rand/v2"
	"testing"
)

func TestTune(t *testing.T) {
	if *measure == 0 {
		t.Skip()
	}
	r := rand.New(rand.NewPCG(32, 3))
	for range 5 {
		jobs := randomJobs(r, 32, 16, 3000, 1.3)
		e, _ := Exact(context.Background(), jobs, 16, ExactOptions{})
		line := ""
		for _, o := range []BoundOptions{{}, {Buckets: 256}, {Buckets: 1024}, {Buckets: 256, MaxIterations: 5000}} {
			b, _ := Bound(context.Background(), jobs, 16, o)
			line += " " + ftoa(b.Value/e.Value) + "/" + itoa(b.Iterations)
		}
		t.Logf("opt %.2f:%s", e.Value, line)
	}
}
func ftoa(f float64) string { return string([]byte{byte('0' + int(f)), '.', byte('0' + int(f*10)%10), byte('0' + int(f*100)%10), byte('0' + int(f*1000)%10)}) }
func itoa(i int) string {
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}
