package offline

import (
	"context"
	"errors"
	"testing"
)

// FuzzOffline: arbitrary (also invalid) jobs never panic; invalid fields
// are *JobError or ErrNodes; valid ones give a feasible Exact schedule with
// Bound ≤ Exact's value.
func FuzzOffline(f *testing.F) {
	f.Add(int64(0), int64(5), 1, int64(2), int64(20), 2, int64(3), int64(1), 2, 2)
	f.Add(int64(0), int64(0), 1, int64(0), int64(-1), 2, int64(3), int64(1), 3, 2)
	f.Add(int64(-5), int64(100), 0, int64(1<<45), int64(20), 2, int64(3), int64(1), 2, 0)
	f.Fuzz(func(t *testing.T, s0, r0 int64, n0 int, s1, r1 int64, n1 int, s2, r2 int64, n2, nodes int) {
		jobs := []Job{{s0, r0, n0}, {s1, r1, n1}, {s2, r2, n2}}
		b, errB := Bound(context.Background(), jobs, nodes, BoundOptions{MaxIterations: 20})
		e, errE := Exact(context.Background(), jobs, nodes, ExactOptions{MaxNodes: 200})
		if verr := Validate(jobs, nodes); verr != nil {
			var je *JobError
			if !errors.As(verr, &je) && !errors.Is(verr, ErrNodes) {
				t.Fatalf("Validate: %v", verr)
			}
			if errB == nil || errE == nil {
				t.Fatalf("invalid input %v on %d nodes accepted", jobs, nodes)
			}
			return
		}
		if errB != nil || errE != nil {
			t.Fatalf("valid input: %v, %v", errB, errE)
		}
		if err := Check(jobs, nodes, e.Starts); err != nil {
			t.Fatalf("%v on %d: %v", jobs, nodes, err)
		}
		if b.Value > e.Value*(1+1e-9) || e.Bound > e.Value {
			t.Fatalf("%v on %d: Bound %+v, Exact %+v", jobs, nodes, b, e)
		}
	})
}
